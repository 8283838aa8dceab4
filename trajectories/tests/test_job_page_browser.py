"""The job page and the reviews panel in a real browser, at a desktop's and a phone's width."""
from __future__ import annotations

import pytest

from trajectories.models import Rollout
from trajectories.services import import_path

from .test_harbor_analysis import GROK, JOB_ID, OPUS, analyze, copy_trial, harbor_result, write
from .trialdata import make_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def analysed_job(shared_trials_dir, tmp_path):
    make_task("flux2_klein_lora")
    job = tmp_path / "2026-04-26__12-33-32"
    for name in (OPUS, GROK):
        copy_trial(shared_trials_dir, name, job, JOB_ID)
    write(job / "analysis.json", analyze.JobAnalyzeResult(
        job_summary="Two flux2 runs: one stopped after 15 minutes.",
        trials=[harbor_result(OPUS, hacking="fail"), harbor_result(GROK)],
    ))
    assert import_path(job).ok
    return job


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_the_job_page_reads_at_every_width(live_server, page, analysed_job, width, height, tmp_path):
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/jobs/{JOB_ID}/")
    line = page.locator("#job-summary .job-line")
    assert line.is_visible() and line.inner_text().startswith("2/2 finished, 0 errors, 14.8 M tokens")
    assert page.locator(".reward-histogram rect").count() == 10
    assert page.locator(".reward-histogram svg").bounding_box()["width"] <= width
    assert page.locator("#job-analysis").inner_text().endswith("Two flux2 runs: one stopped after 15 minutes.")
    # Nothing but the trials table (in its own scroller) is wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(tmp_path / f"job-{width}.png"), full_page=True)

    # A trial's check opens its rollout's reviews; a cited step opens that step.
    page.locator(f'tr[data-rollout] a.badge.bad').first.click()
    page.wait_for_url("**/rollouts/*/#reviews")
    panel = page.locator("#reviews")
    assert panel.is_visible() and "reward_hacking" in panel.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(tmp_path / f"reviews-{width}.png"), full_page=False)
    panel.locator(".review-steps a", has_text="12").click()
    page.wait_for_function("() => location.hash === '#step-12' || location.search.includes('step=12')")
    assert page.locator("#step-12").is_visible()
    assert not [e for e in errors if "Content Security Policy" in e], errors
    assert page.locator("#job-link").get_attribute("href") == f"/jobs/{JOB_ID}/"
    assert Rollout.objects.filter(job_id=JOB_ID).count() == 2
