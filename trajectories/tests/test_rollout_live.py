"""A running rollout's page follows its trajectory (live.json + reload)."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from trajectories.models import RolloutStatus

from . import factories


@pytest.mark.django_db
def test_live_json_reports_status_and_main_step_count(client):
    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None)
    factories.add_step(rollout, 1, source="user", message="Go.")
    factories.add_step(rollout, 2, message="Looking.", commands=["ls\n"])
    response = client.get(reverse("trajectories:rollout_live", args=[rollout.pk]))
    assert response.json() == {
        "status": "running", "status_text": "Running", "active": True, "steps": 2, "reward": None, "reward_text": "—",
        "logs": {},
    }


@pytest.mark.django_db
def test_a_running_trials_log_tails_are_on_its_page_and_in_live_json(client, settings, tmp_path):
    from trajectories.storing import artifacts

    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}}}
    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None)
    artifacts.store_tail(rollout, "trial.log", b"...\nstarting the agent\n", size=5000)
    pane = b"root@sandbox:/app# python3 bench.py\n"
    artifacts.store_tail(rollout, "agent/terminus_2.pane", pane, size=len(pane))
    live = client.get(reverse("trajectories:rollout_live", args=[rollout.pk])).json()
    assert live["logs"] == {"trial.log": "...\nstarting the agent\n",
                            "agent/terminus_2.pane": "root@sandbox:/app# python3 bench.py\n"}
    page = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert 'data-log="agent/terminus_2.pane"' in page and "root@sandbox:/app# python3 bench.py" in page
    rollout.refresh_from_db()
    assert {entry["path"]: entry["cut"] for entry in rollout.artifacts} == {
        "trial.log": True, "agent/terminus_2.pane": False}


@pytest.mark.django_db
def test_only_running_rollouts_get_the_live_banner(client):
    running = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None)
    finished = factories.make_rollout()
    body = client.get(reverse("trajectories:rollout_detail", args=[running.pk])).content.decode()
    assert 'id="live"' in body and "js/live.js" in body
    body = client.get(reverse("trajectories:rollout_detail", args=[finished.pk])).content.decode()
    assert 'id="live"' not in body and "js/live.js" not in body


@pytest.mark.django_db
def test_live_json_of_a_missing_rollout_is_404(client):
    assert client.get(reverse("trajectories:rollout_live", args=[999999])).status_code == 404


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_running_page_shows_steps_that_arrive_and_the_end(page, live_server):
    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None, verifier_fields={})
    factories.add_step(rollout, 1, source="user", message="Make it faster.")
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]))
    assert page.locator("#step-2").count() == 0

    factories.add_step(rollout, 2, message="A new step arrived while I watched.", commands=["ls /app\n"])
    page.wait_for_selector("#step-2", timeout=15_000)
    assert "A new step arrived while I watched." in page.inner_text("#step-2")
    assert page.locator("#live").count() == 1

    rollout.status = RolloutStatus.FINISHED
    rollout.reward = 0.75
    rollout.save()
    page.wait_for_selector("#live", state="detached", timeout=15_000)
    assert "0.75" in page.inner_text(".reward")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_new_steps_are_appended_without_reloading_the_page(page, live_server):
    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None, verifier_fields={})
    factories.add_step(rollout, 1, source="user", message="Make it faster.")
    factories.add_step(rollout, 2, message="Reading the code.", reasoning="The hot loop is in main.c.", commands=["cat main.c\n"])
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]))
    page.wait_for_selector("#step-2")
    # What a reload would lose: a mark on the window, an opened detail, the find box's text and focus.
    page.evaluate("window.stillTheSamePage = true")
    page.click("#step-2 details.reasoning summary")
    page.fill("#step-search", "hot loop")

    factories.add_step(rollout, 3, message="A third step arrived.", commands=["make\n"])
    factories.add_step(rollout, 4, message="And a fourth.", commands=["./bench\n"])
    page.wait_for_selector("#step-4", timeout=15_000)
    assert page.evaluate("window.stillTheSamePage") is True
    assert page.locator("#step-2 details.reasoning").get_attribute("open") is not None
    assert page.input_value("#step-search") == "hot loop"
    assert page.evaluate("document.activeElement.id") == "step-search"
    assert page.locator("#steps .step").count() == 4

    rollout.status = RolloutStatus.FINISHED
    rollout.reward = 0.5
    rollout.save()
    page.wait_for_selector("#live", state="detached", timeout=15_000)
    assert page.evaluate("window.stillTheSamePage") is True
    assert page.inner_text(".reward") == "0.5"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_appended_steps_reach_the_plot_and_the_outline_without_a_reload(page, live_server):
    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None, verifier_fields={}, curve=[])
    factories.add_step(rollout, 1, source="user", message="Make it faster.")
    factories.add_step(rollout, 2, message="Reading the code.", commands=["cat main.c\n"], kinds=["inspect"])
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]))
    page.wait_for_selector("#curve-plot[data-points='0']")
    page.evaluate("""window.stillTheSamePage = true;
        document.addEventListener('autolab:plot-updated', e => { window.plotSteps = e.detail.steps; });""")

    factories.add_step(rollout, 3, message="Benchmarking.", commands=["./bench\n"], outputs=["runtime: 5.0 ms\n"],
                       kinds=["benchmark"], metric_value=5.0, metric_score=0.4, metric_status="parsed")
    page.wait_for_selector("#step-3", timeout=15_000)
    page.wait_for_selector("#curve-plot[data-points='1']", timeout=15_000)
    assert page.evaluate("window.plotSteps") == 3
    assert page.evaluate("window.stillTheSamePage") is True


def _live_parts(html: str) -> dict[str, str]:
    """Each data-live-part of a page, by name: its opening tag onwards (what static/js/live.js swaps)."""
    names = re.findall(r'data-live-part="([a-z]+)"', html)
    return {name: html.split(f'data-live-part="{name}"', 1)[1] for name in names}


def end_a_run(rollout) -> None:
    """What the runner's end leaves: the final import's counts, the ended status, then the classification."""
    rollout.status = RolloutStatus.FINISHED
    rollout.reward = 0.75
    rollout.verifier_fields = {"reward": 0.75}
    rollout.n_steps, rollout.n_benchmark_calls = 9, 3
    rollout.n_input_tokens, rollout.n_output_tokens = 11_000, 715
    rollout.save()


@pytest.mark.django_db
def test_the_page_a_live_page_fetches_at_the_end_has_every_card_in_its_final_state(client):
    """At the end live.js read the reward alone: the Run card stayed at "Steps 0", Tokens "—", "Not classified yet"."""
    from trajectories.services import classify

    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None, verifier_fields={},
                                     n_input_tokens=None, n_output_tokens=None)
    for step_id in range(1, 10):
        factories.add_step(rollout, step_id, message=f"Step {step_id}.", commands=["make\n"])
    url = reverse("trajectories:rollout_detail", args=[rollout.pk])
    running = client.get(url).content.decode()
    assert 'data-settled="no"' in running
    parts = _live_parts(running)
    assert {"status", "header", "siblings", "analysis", "timeline", "files", "logs", "subagents"} <= set(parts)
    assert "<dt>Steps</dt><dd>0 · 0 benchmark calls" in parts["header"]
    assert "Still running: classified when it finishes." in parts["analysis"]

    end_a_run(rollout)
    # Ended, not yet classified: the page says so, and live.js asks again.
    assert 'data-settled="no"' in client.get(url, {"page": 1}).content.decode()
    classify(rollout)
    ended = client.get(url, {"page": 1}).content.decode()
    assert 'data-settled="yes"' in ended and 'id="live"' not in ended
    final = _live_parts(ended)
    # Every card the running page has is on the ended page, to be swapped in place.
    assert set(final) == set(parts)
    assert "<dt>Steps</dt><dd>9 · 3 benchmark calls" in final["header"]
    assert "11000 in / 715 out" in final["header"] and "<strong title=\"0.75\">0.75</strong>" in final["header"]
    assert "Not classified yet" not in final["analysis"] and "Still running" not in final["analysis"]
    assert "Outcome:" in final["analysis"] or "Cause:" in final["analysis"]
    assert final["timeline"].count('class="mark') == 9

