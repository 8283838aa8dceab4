"""Runs of waits fold into one row of the rollout page, opened on demand (step_fragment)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.urls import reverse

from trajectories import explorer

from . import factories


def outline(spec: str, step: float = 60.0) -> list:
    """Outline rows from letters: w wait, e edit, b benchmark, o other (no kind), W waits and inspects,
    i inspect, r the same inspect again (repeats), R an edit repeated (never foldable)."""
    kinds = {"w": " wait ", "e": " edit ", "b": " benchmark ", "o": "", "W": " wait inspect ", "i": " inspect ",
             "r": " inspect ", "q": " wait inspect ", "R": " edit "}
    return [
        SimpleNamespace(step_id=i + 1, position=i, elapsed_sec=i * step, kinds=kinds[c], kind_list=kinds[c].split(),
                        repeats=c in "rqR")
        for i, c in enumerate(spec)
    ]


def shape(rows) -> str:
    return " ".join(f"[{len(r.steps)}]" if getattr(r, "is_fold", False) else str(r.step_id) for r in rows)


# (steps, rows: a step id, or [n] for a fold of n steps)
FOLD_CASES = [
    ("", ""),
    ("eb", "1 2"),
    ("ww", "1 2"),  # two waits stay steps
    ("www", "[3]"),
    ("ewwwb", "1 [3] 5"),
    ("ewwewwwwb", "1 2 3 4 [4] 9"),
    ("wwwowww", "[3] 4 [3]"),
    ("wwWw", "1 2 3 4"),  # a wait that also inspects says something
    ("irrrb", "1 [3] 5"),  # the same check three more times
    ("irrb", "1 2 3 4"),
    ("iwrwqb", "1 [4] 6"),  # waits and repeated checks, one row
    ("eRRRb", "1 2 3 4 5"),  # an edit repeated still changes something
    ("iiiib", "1 2 3 4 5"),  # four different looks
]


@pytest.mark.parametrize("spec, expected", FOLD_CASES)
def test_fold_steps(spec, expected):
    assert shape(explorer.fold_steps(outline(spec))) == expected


def test_a_fold_says_how_many_and_how_long_up_to_the_next_step():
    rows = explorer.fold_steps(outline("ewwwb", step=600.0))
    fold = rows[1]
    assert fold.step_ids == [2, 3, 4]
    assert fold.seconds == 1800.0  # step 2 at 10 min to step 5 at 40 min
    assert fold.summary == "3 waits, 30m 00s"


@pytest.mark.parametrize("spec, summary, kind, kinds", [
    ("irrrb", "3 repeated checks, 3m 00s", "check", "inspect"),
    ("iwrwqb", "2 waits and 2 repeated checks, 4m 00s", "check", "inspect wait"),
    ("ewwwb", "3 waits, 3m 00s", "wait", "wait"),
])
def test_a_fold_says_what_it_holds(spec, summary, kind, kinds):
    fold = next(row for row in explorer.fold_steps(outline(spec)) if getattr(row, "is_fold", False))
    assert (fold.summary, fold.kind, fold.kinds) == (summary, kind, kinds)


def test_a_fold_ending_a_page_runs_to_the_first_step_of_the_next():
    steps = outline("ewwwb", step=600.0)
    rows = explorer.fold_steps(steps[:4], following=steps[4])
    assert rows[1].seconds == 1800.0


def waiting_rollout():
    """An edit, 30 waits of ten minutes, a benchmark call: a training run's story."""
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="Start training.", commands=["python train.py &\n"], kinds=["edit"], elapsed_sec=0.0)
    for step_id in range(2, 32):
        factories.add_step(
            rollout, step_id, message=f"Still training (check {step_id}).", commands=["sleep 600\n"],
            outputs=[f"epoch {step_id} loss 0.{step_id}\n"], kinds=["wait"], elapsed_sec=600.0 * (step_id - 1),
        )
    factories.add_step(rollout, 32, message="Evaluate.", commands=["python eval.py\n"], kinds=["benchmark"], elapsed_sec=18_600.0)
    return rollout


@pytest.mark.django_db
def test_the_page_shows_a_run_of_waits_as_one_row(client):
    rollout = waiting_rollout()
    body = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert 'id="step-1"' in body and 'id="step-32"' in body
    assert 'id="step-2"' not in body and "Still training" not in body
    assert body.count('class="fold ') == 1
    assert "30 waits, 5h 00m" in body
    assert 'data-step-ids="' + " ".join(str(i) for i in range(2, 32)) + '"' in body


@pytest.mark.django_db
def test_a_fold_opens_into_its_steps(client):
    rollout = waiting_rollout()
    url = reverse("trajectories:step_fragment", args=[rollout.pk]) + "?first=1&last=30"
    body = client.get(url).content.decode()
    assert body.count('class="step ') == 30
    assert 'id="step-2"' in body and 'id="step-31"' in body and 'id="step-32"' not in body
    assert "Still training (check 17)." in body and "epoch 17 loss" in body


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["", "?first=1", "?first=5&last=2", "?first=a&last=b", "?first=0&last=100000"])
def test_bad_fragment_ranges_are_refused_plainly(client, query):
    rollout = waiting_rollout()
    response = client.get(reverse("trajectories:step_fragment", args=[rollout.pk]) + query)
    assert response.status_code == 400


@pytest.mark.django_db
def test_a_fragment_past_the_end_is_404(client):
    rollout = waiting_rollout()
    assert client.get(reverse("trajectories:step_fragment", args=[rollout.pk]) + "?first=500&last=501").status_code == 404


@pytest.mark.django_db
def test_a_permalink_to_a_folded_step_opens_its_page(client):
    rollout = waiting_rollout()
    response = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]) + "?step=17")
    assert response.status_code == 302 and response["Location"].endswith("#step-17")


@pytest.mark.django_db
def test_filtered_pages_do_not_fold(client):
    rollout = waiting_rollout()
    body = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]) + "?only=benchmark,edit").content.decode()
    assert 'class="fold ' not in body


# --- in a real Chromium ------------------------------------------------------


def open_page(page, live_server, rollout, fragment=""):
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]) + fragment)
    page.wait_for_selector("#steps")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_keys_step_into_a_fold_and_through_it(page, live_server):
    rollout = waiting_rollout()
    open_page(page, live_server, rollout)
    page.keyboard.press("j")  # from step 1 into the fold: its first step
    page.wait_for_selector("#step-2.current")
    assert page.locator("details.fold").get_attribute("open") is not None
    page.keyboard.press("j")
    page.wait_for_selector("#step-3.current")
    page.keyboard.press("b")  # the next benchmark call, past every wait
    page.wait_for_selector("#step-32.current")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_permalink_to_a_folded_step_opens_the_fold(page, live_server):
    rollout = waiting_rollout()
    open_page(page, live_server, rollout, "#step-20")
    page.wait_for_selector("#step-20.current")
    assert "Still training (check 20)." in page.inner_text("#step-20")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_find_reaches_a_folded_step(page, live_server):
    rollout = waiting_rollout()
    open_page(page, live_server, rollout)
    page.fill("#step-search", "epoch 23 loss")
    page.wait_for_selector("#server-matches a.server-match")
    page.click("#server-matches a.server-match")
    page.wait_for_selector("#step-23 mark.find-hit")
    assert page.locator("#step-23").is_visible()


@pytest.mark.django_db
def test_an_imported_agent_polling_a_log_gets_one_row_for_its_repeated_checks(tmp_path, client):
    from trajectories.services import import_trial_dir

    from .trialdata import make_task, make_trial, trajectory

    make_task()
    data = trajectory(1)
    template = data["steps"][1]
    for n in range(8):
        step = json_copy(template)
        step["step_id"] = n + 3
        step["tool_calls"][0]["arguments"] = {"keystrokes": "tail -3 train.log\n", "duration": 30.0}
        step["observation"]["results"][0]["content"] = f"epoch {n} loss 0.{9 - n}\n"
        data["steps"].append(step)
    outcome = import_trial_dir(make_trial(tmp_path, trajectory_data=data))
    assert outcome.ok, outcome.error
    body = client.get(reverse("trajectories:rollout_detail", args=[outcome.rollout_id])).content.decode()
    # Step 3 is the first look; steps 4-10 look the same way again.
    assert 'id="step-3"' in body and 'id="step-4"' not in body
    assert "7 repeated checks" in body and 'class="fold kind-check"' in body
    assert 'data-step-ids="4 5 6 7 8 9 10"' in body


def json_copy(value):
    import json

    return json.loads(json.dumps(value))
