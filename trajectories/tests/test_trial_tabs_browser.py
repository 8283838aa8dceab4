"""The trial tabs in a real Chromium, on a real shared trial, at 1440 and 390 px: each opens, shows its content, fits."""
from __future__ import annotations

import pytest
from django.urls import reverse

from trajectories.models import Rollout
from trajectories.services import store_trial_files

from . import factories
from .real_trials import OPUS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# (tab, a selector inside its content, text that selector shows)
TABS = [
    ("verifier", "#reward-json", '"baseline_score_measured": 0.4918'),
    ("artifacts", "#artifact-count", "files"),
    ("config", "#config-json", "openai/claude-opus-4.6"),
    ("log", "#log-summary", "trial.log"),
    ("exception", "#exception-type", "AgentTimeoutError"),
]


@pytest.fixture
def opus(settings, tmp_path, shared_tasks_dir, shared_trials_dir):
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "artifacts")}}}
    rollout = factories.import_shared_rollouts(shared_tasks_dir, shared_trials_dir)["opus"]
    store_trial_files(rollout, shared_trials_dir / OPUS)
    extra = tmp_path / "extra"
    (extra / "outputs" / "a-rather-long-folder-name-the-agent-chose" / "and-deeper-still").mkdir(parents=True)
    # Long lines and long names: they must scroll in their own box, never widen the page.
    (extra / "trial.log").write_text("".join(f"{n} INFO {'x' * 400} benchmark={n % 7}\n" for n in range(300)))
    long_name = "outputs/a-rather-long-folder-name-the-agent-chose/and-deeper-still/checkpoint_with_a_very_long_name_0001.safetensors"
    (extra / long_name).write_bytes(b"\x00" * 64)
    store_trial_files(rollout, extra, ["trial.log", long_name])
    Rollout.objects.filter(pk=rollout.pk).update(
        exception_type="AgentTimeoutError", exception_message="Agent timed out after 7200.0 seconds",
        exception_traceback="Traceback (most recent call last):\n" + "  File \"/usr/lib/python3/harbor/trial.py\", line 99, in run " + "y" * 300 + "\n")
    return rollout


def page_width(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


@pytest.mark.parametrize("width", [1440, 390])
def test_each_tab_opens_shows_its_content_and_fits(page, live_server, opus, width):
    page.set_viewport_size({"width": width, "height": 900})
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[opus.pk]))
    page.wait_for_load_state("load")
    assert page.locator("#trial-tab-panel").is_hidden()
    assert not [url for url in requests if "/tabs/" in url], "no tab is fetched before it is opened"
    for slug, selector, shown in TABS:
        page.click(f"#tab-{slug}")
        page.wait_for_selector(f'#trial-tab-panel [data-tab-body="{slug}"]')
        assert page.get_attribute(f"#tab-{slug}", "aria-selected") == "true"
        assert shown in page.locator(f"#trial-tab-panel {selector}").inner_text(), slug
        assert page_width(page) == width, f"the {slug} tab widens the page at {width} px"
    assert page.url.endswith("#tab-exception")


def test_the_log_search_filters_in_place_and_a_hash_opens_a_tab(page, live_server, opus):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[opus.pk]) + "#tab-log")
    page.wait_for_selector('#trial-tab-panel [data-tab-body="log"]')
    assert page.locator("#trial-tab-panel .log-line").count() == 300
    page.fill("#log-q", "benchmark=3")
    page.press("#log-q", "Enter")
    page.wait_for_function("() => document.querySelectorAll('#trial-tab-panel .log-line').length < 300")
    assert page.locator("#trial-tab-panel .log-line").count() == len([n for n in range(300) if n % 7 == 3])
    assert "hold “benchmark=3”" in page.locator("#log-summary").inner_text()
    assert page.url.split("#")[0].endswith(f"/rollouts/{opus.pk}/"), "the search stays on the rollout page"
    assert page_width(page) == 390


def test_a_tab_link_works_without_javascript(browser, live_server, opus):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[opus.pk]))
    page.click("#tab-artifacts")
    page.wait_for_selector('[data-tab-body="artifacts"]')
    assert page.url.endswith(f"/rollouts/{opus.pk}/tabs/artifacts/")
    assert "verifier/reward.json" in page.locator(".artifact-table").inner_text()
    assert page_width(page) == 390
    context.close()


def test_the_result_cards_exception_opens_its_tab_and_arrows_move_between_tabs(page, live_server, opus):
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[opus.pk]))
    page.click('.rollout-header a[href="#tab-exception"]')
    page.wait_for_selector('#trial-tab-panel [data-tab-body="exception"]')
    assert "Agent timed out" in page.locator("#exception-message").inner_text()
    page.focus("#tab-verifier")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement.id") == "tab-artifacts"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("() => document.activeElement.id") == "tab-exception"
