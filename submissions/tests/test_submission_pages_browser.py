"""A submission's pages on a 390 px phone, as the team member and staff see them: no wider than the window.

A QA pass with the shared flux2 trials found the record 609 px wide for the member and 745 px for staff (the
checks table, whose raw names such as "timeouts_and_resources" never wrap, and the trials table), and the list
665 px."""
from __future__ import annotations

import pytest

from submissions import states
from submissions.models import Submission, Team
from trajectories.tests import factories
from trajectories.tests.failure_helpers import user
from trajectories.tests.test_failures_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRIAL = "musubi-tuner__flux2_klein_lora__dJkbgCB"
CHECKS = [
    {"name": "readable", "passed": True, "reason": "2 trial folders read", "requires_regrade": False},
    {"name": "timeouts_and_resources", "passed": True, "reason": "every timeout multiplier is 1", "requires_regrade": False},
    {"name": "verifier_sealed", "passed": False, "requires_regrade": True,
     "reason": f"graded in the agent's own sandbox: must be regraded before it counts: {TRIAL} (shared)"},
    {"name": "duplicates", "passed": False, "reason": f"duplicates: {TRIAL} (the same trial is already on the site)",
     "requires_regrade": False},
]


def test_a_submissions_pages_fit_a_phone(browser, live_server):
    version = factories.make_version("sub-1.0")
    task = factories.make_task(name="flux2_klein_lora", version="sub-1.0")
    rollout = factories.make_rollout(task=task, status="finished", reward=1.0, trial_name=TRIAL)
    team = Team.objects.create(name="Outside Lab")
    member = user("member", staff=False)
    team.members.add(member)
    submission = Submission.objects.create(
        team=team, version=version, model_name="openai/xai-grok-4-20-reasoning", harness_name="terminus-2",
        harness_version="harbor 0.26.0", contact="lab@outside.example", file_name="flux2-klein-lora-job.tar.gz",
        state=states.CHECKED, checks=CHECKS, rollout_ids=[rollout.pk], submitted_rewards={str(rollout.pk): 1.0},
    )
    widths, cut = {}, {}
    for who in (member, user("staff", staff=True)):
        context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        page = context.new_page()
        login(page, live_server, who)
        for url in ["/submissions/", f"/submissions/{submission.pk}/"]:
            assert page.goto(live_server.url + url).status == 200, url
            widths[(who.username, url)] = page.evaluate("() => document.documentElement.scrollWidth")
            if url != "/submissions/":
                # Nor does the checks table scroll: a reason's long trial names wrap.
                cut[who.username] = page.eval_on_selector("#checks", "t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1")
        context.close()
    assert widths == {key: 390 for key in widths}
    assert cut == {"member": False, "staff": False}
