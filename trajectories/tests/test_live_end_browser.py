"""A live rollout page at the end of its run, in a real Chromium: every card reaches its final state without a reload."""
from __future__ import annotations

import os
import time

import pytest
from django.urls import reverse

from trajectories.models import RolloutStatus

from . import factories
from .test_rollout_live import end_a_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A folder to save the end state's screenshot in (by hand: LIVE_SCREENSHOTS=/tmp/shots).
SCREENSHOTS = os.environ.get("LIVE_SCREENSHOTS")


def card(page, title: str) -> str:
    return page.locator(".rollout-header .card", has=page.locator("h2", has_text=title)).inner_text()


def test_a_live_page_reaches_its_final_state_without_a_reload(page, live_server):
    """It kept "Steps 0 · 0 benchmark calls", Tokens "—", "Not classified yet" and an empty timeline until a reload."""
    from trajectories.services import classify

    rollout = factories.make_rollout(status=RolloutStatus.RUNNING, reward=None, verifier_fields={},
                                     n_input_tokens=None, n_output_tokens=None, finished_at=None)
    factories.add_step(rollout, 1, source="user", message="Make it faster.")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]))
    page.wait_for_selector("#live")
    page.evaluate("window.stillTheSamePage = true")
    assert "0 · 0 benchmark calls" in card(page, "Run")
    assert "Still running" in page.inner_text("#failure")

    for step_id in range(2, 10):
        benchmark = step_id in (4, 6, 8)
        factories.add_step(rollout, step_id, message=f"Step {step_id}.", commands=["./bench\n" if benchmark else "make\n"],
                           kinds=["benchmark"] if benchmark else ["build"])
    page.wait_for_selector("#step-9", timeout=15_000)

    # The runner's end: the final import's counts and the ended status, then (a moment later) the classification.
    end_a_run(rollout)
    time.sleep(4)
    classify(rollout)

    page.wait_for_selector("#live", state="detached", timeout=20_000)
    assert page.evaluate("window.stillTheSamePage") is True
    assert page.inner_text(".reward") == "0.75"
    run = card(page, "Run")
    assert "9 · 3 benchmark calls" in run and "11000 in / 715 out" in run
    failure = page.inner_text("#failure")
    assert "Not classified yet" not in failure and "Still running" not in failure
    assert page.locator(".timeline-strip .mark").count() == 9
    # The marks are placed (layout.js applies data-left to what arrives).
    assert page.evaluate("document.querySelector('.timeline-strip .mark').style.left") != ""
    assert page.locator(".trial-name .badge.warn").count() == 0  # "running" is gone: finished says nothing
    assert page.locator("#steps .step").count() == 9
    if SCREENSHOTS:
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=os.path.join(SCREENSHOTS, "live-end-1440.png"), full_page=True)

