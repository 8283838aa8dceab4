"""The judge beside the rules on the failures page, in a real browser: disagreements first, then the staff's button."""
from __future__ import annotations

import json
import os

import pytest

from agents.models import AgentModel
from autolab_site.celery import app
from trajectories.analysis.judge_rubric import load_rubric
from trajectories.failures import service as failure_service
from trajectories.reading.review_data import Check, Reading
from trajectories.reviews import record_review
from trajectories.tests.stub_judge import Rule, StubJudge

from . import failure_helpers as h
from .test_failures_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stub():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # noqa: F401  (imported before the click: its first import takes seconds)

    judge = StubJudge().start()
    checks = {name: {"outcome": "fail" if name == "ignored_feedback" else "pass", "explanation": "e", "steps": [1]}
              for name in load_rubric().names}
    judge.rules = [Rule("Task: ", json.dumps({"summary": "Ignored its errors.", "checks": checks}))]
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True  # the live server's requests run the task as a worker would
    yield judge
    app.conf.task_always_eager = previous
    judge.stop()


@pytest.mark.parametrize("width", [1440, 390])
def test_disagreements_first_then_analyse(live_server, page, stub, width):
    page.set_viewport_size({"width": width, "height": 900})
    AgentModel.objects.create(name="stub-judge", litellm_model="openai/stub-judge", api_base=stub.api_base,
                              is_judge=True, sampling_params={"api_key": "stub-needs-no-key"})
    agree = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_binary"})
    disagree = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_binary"})
    unread = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_binary"})
    for r in (agree, disagree, unread):
        h.step(r, 1)
        failure_service.classify_and_store(r)
    # Read already by this judge with the default rubric: the button keeps these.
    read = {"source": "judge", "judge": "stub-judge", "rubric_text": load_rubric().text}
    record_review(agree, Reading("s", (Check("reward_hacking", "fail"),)), **read)
    record_review(disagree, Reading("s", (Check("reward_hacking", "pass"),)), **read)

    login(page, live_server, h.user("ada", staff=True))
    page.goto(f"{live_server.url}/failures/")
    assert page.locator("#judge-disagreements").inner_text() == "1"
    page.click("#disagree-first")
    page.wait_for_url("**order=disagree**")
    first = page.locator("table.failure-list tbody tr").first
    assert first.get_attribute("data-rollout") == str(disagree.pk)
    assert first.locator("[data-disagreement='rule_only']").count() == 1

    # The button reads what the list shows; already-read rollouts are kept, the unread one gets its verdict.
    button = page.locator("#judge-button button[type=submit]")
    button.scroll_into_view_if_needed()
    assert button.is_visible()
    with page.expect_navigation(timeout=60_000):
        button.click()
    assert "Analysis of 3 rollouts by stub-judge queued" in page.locator(".messages").inner_text()
    row = page.locator(f"table.failure-list tbody tr[data-rollout='{unread.pk}']")
    assert row.locator("[data-check='ignored_feedback']").count() == 1
    assert len(stub.requests) == 1
