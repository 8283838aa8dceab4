"""evaluations.lifecycle: the transition table and its rules (no Celery), then its writes."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from evaluations import lifecycle
from evaluations.lifecycle import AfterLoss, RolloutState, TransitionError, after_loss, allowed, campaign_status
from evaluations.models import Campaign
from trajectories.models import ACTIVE_STATUSES, RolloutStatus

S = RolloutStatus
C = Campaign.Status

# (from, to, allowed): every pair that matters, hand-written.
TRANSITION_CASES = [
    (S.QUEUED, S.PREPARING, True),  # a worker claims it
    (S.QUEUED, S.CANCELLED, True),  # staff cancel before it starts
    (S.QUEUED, S.FAILED, True),  # out of attempts at the claim
    (S.QUEUED, S.RUNNING, False),  # a run starts with its preparation
    (S.QUEUED, S.FINISHED, False),
    (S.PREPARING, S.RUNNING, True),
    (S.PREPARING, S.QUEUED, True),  # an infrastructure retry, or the reaper
    (S.PREPARING, S.PREPARING, True),  # a new attempt takes over an abandoned one
    (S.PREPARING, S.FAILED, True),
    (S.PREPARING, S.VERIFYING, False),
    (S.RUNNING, S.VERIFYING, True),
    (S.RUNNING, S.FINISHED, True),
    (S.RUNNING, S.CANCELLED, True),
    (S.RUNNING, S.QUEUED, True),
    (S.VERIFYING, S.FINISHED, True),
    (S.VERIFYING, S.FAILED, True),
    (S.VERIFYING, S.RUNNING, False),  # grading never hands back to the agent
    (S.FINISHED, S.QUEUED, False),  # a result is never re-run: re-evaluate instead
    (S.FINISHED, S.FAILED, False),
    (S.FAILED, S.QUEUED, False),
    (S.CANCELLED, S.PREPARING, False),
]


@pytest.mark.parametrize("old, new, ok", TRANSITION_CASES)
def test_transition_table(old, new, ok):
    assert allowed(old, new) is ok


def test_every_status_has_a_row_and_terminal_ones_lead_nowhere():
    assert set(lifecycle.TRANSITIONS) == set(S.values)
    for status in lifecycle.TERMINAL:
        assert lifecycle.TRANSITIONS[status] == frozenset()
    for status in ACTIVE_STATUSES:
        assert S.CANCELLED in lifecycle.TRANSITIONS[status]


@pytest.mark.parametrize(
    "attempts, limit, cancel, fate",
    [
        (1, 3, False, AfterLoss(S.QUEUED, False, "attempt 2 of 3 next")),
        (2, 3, False, AfterLoss(S.QUEUED, False, "attempt 3 of 3 next")),
        (3, 3, False, AfterLoss(S.FAILED, True, "3 of 3 attempts used")),
        (5, 3, False, AfterLoss(S.FAILED, True, "5 of 3 attempts used")),
        (0, 3, True, AfterLoss(S.CANCELLED, False, "cancelled")),
        (3, 3, True, AfterLoss(S.CANCELLED, False, "cancelled")),  # a cancel wins over giving up
    ],
)
def test_after_loss(attempts, limit, cancel, fate):
    assert after_loss(attempts, limit, cancel_requested=cancel) == fate


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "heartbeat, stale",
    [(None, True), (NOW - timedelta(seconds=61), True), (NOW - timedelta(seconds=59), False), (NOW, False)],
)
def test_is_stale(heartbeat, stale):
    assert lifecycle.is_stale(heartbeat, NOW, 60) is stale


def states(*pairs):
    return [RolloutState(status, started) for status, started in pairs]


@pytest.mark.parametrize(
    "rollouts, cancelled, status",
    [
        (states((S.QUEUED, False), (S.QUEUED, False)), False, C.PENDING),
        (states((S.QUEUED, False), (S.RUNNING, True)), False, C.RUNNING),
        (states((S.QUEUED, True), (S.FINISHED, True)), False, C.RUNNING),  # a retry waits
        (states((S.FINISHED, True), (S.FINISHED, True)), False, C.FINISHED),
        (states((S.FINISHED, True), (S.CANCELLED, True)), False, C.FINISHED),  # one rollout cancelled by staff
        (states((S.FINISHED, True), (S.FAILED, True)), False, C.FINISHED_WITH_FAILURES),
        (states((S.FAILED, True), (S.FAILED, False)), False, C.FAILED),  # the "all failed" is not finished
        (states((S.FAILED, True), (S.CANCELLED, True)), False, C.FAILED),
        (states((S.RUNNING, True), (S.FINISHED, True)), True, C.CANCELLED),
        (states(), False, C.FINISHED),
    ],
)
def test_campaign_status(rollouts, cancelled, status):
    assert campaign_status(rollouts, cancelled=cancelled) == status


# -- the writes -------------------------------------------------------------------


@pytest.fixture
def campaign(db):
    from evaluations.campaigns import create_campaign

    from .runner_helpers import import_examples, utility_entry

    version = import_examples()
    model, harness = utility_entry("oracle")
    return create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=2,
                           backend="bubblewrap", enqueue=False)


def test_transition_writes_status_event_and_campaign_together(campaign):
    first, second = campaign.rollouts.order_by("pk")
    assert lifecycle.claim(first.pk, worker="host:1").status == S.PREPARING
    campaign.refresh_from_db()
    assert campaign.status == C.RUNNING and campaign.started_at is not None
    lifecycle.transition(first.pk, S.RUNNING, "agent started")
    lifecycle.transition(first.pk, S.FINISHED, "reward 1.0")
    lifecycle.claim(second.pk)
    lifecycle.transition(second.pk, S.FAILED, "infrastructure error: x", infra_error=True)
    campaign.refresh_from_db()
    assert campaign.status == C.FINISHED_WITH_FAILURES and campaign.finished_at is not None
    first.refresh_from_db()
    assert [e.status for e in first.events.all()] == [S.QUEUED, S.PREPARING, S.RUNNING, S.FINISHED]
    assert first.finished_at is not None and first.worker == "host:1" and first.attempts == 1


def test_a_forbidden_transition_raises_and_changes_nothing(campaign):
    rollout = campaign.rollouts.first()
    with pytest.raises(TransitionError, match="queued -> finished"):
        lifecycle.transition(rollout.pk, S.FINISHED, "no")
    rollout.refresh_from_db()
    assert rollout.status == S.QUEUED and rollout.events.count() == 1


def test_only_from_loses_a_race_quietly(campaign):
    rollout = campaign.rollouts.first()
    lifecycle.cancel(rollout.pk)
    assert lifecycle.transition(rollout.pk, S.PREPARING, "late", only_from=[S.QUEUED]) is None


def test_claim_takes_a_rollout_once_and_gives_up_after_the_last_attempt(campaign, settings):
    rollout = campaign.rollouts.first()
    assert lifecycle.claim(rollout.pk) is not None
    assert lifecycle.claim(rollout.pk) is None  # it is running, with a fresh heartbeat
    settings.RUNNER_MAX_ATTEMPTS = 1
    from trajectories.models import Rollout

    Rollout.objects.filter(pk=rollout.pk).update(heartbeat_at=NOW - timedelta(days=1))
    assert lifecycle.claim(rollout.pk) is None  # abandoned, but out of attempts
    rollout.refresh_from_db()
    assert rollout.status == S.FAILED and rollout.infra_error
    assert rollout.events.last().detail == "gave up: 1 of 1 attempts used"


def test_cancel_of_a_running_rollout_is_a_request(campaign):
    rollout = campaign.rollouts.first()
    lifecycle.claim(rollout.pk)
    assert lifecycle.cancel(rollout.pk).status == S.PREPARING
    rollout.refresh_from_db()
    assert rollout.cancel_requested and rollout.status == S.PREPARING
    assert lifecycle.heartbeat(rollout.pk) is True
