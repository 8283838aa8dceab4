"""evaluations.running.lifecycle: its rules and tables (no Celery), then its writes: every change the tables allow is made by an operation."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from evaluations.running import lifecycle
from evaluations.running.lifecycle import AfterLoss, RolloutState, after_loss, campaign_status
from trajectories.lifecycle import TransitionError
from evaluations.models import Campaign
from trajectories.models import RolloutStatus

S = RolloutStatus
C = Campaign.Status

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
    from evaluations.running.campaigns import create_campaign

    from evaluations.tests.runner_helpers import import_examples, utility_entry

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


# -- every change a table allows, made by the operation that makes it ---------------------
# A pair in a table that no operation makes is dead; an operation a table forbids raises.
# Both fail here: the case list must equal the table.

from evaluations.running import campaigns, reaper  # noqa: E402
from trajectories import statuses  # noqa: E402
from trajectories.models import Rollout  # noqa: E402

LONG_AGO = timedelta(days=1)


def at(rollout, status, *, attempts=1, stale=False, cancel=False):
    """Put a rollout where a case starts (a test's own write, as a worker would have left it)."""
    heartbeat = datetime.now(timezone.utc) - (LONG_AGO if stale else timedelta())
    Rollout.objects.filter(pk=rollout.pk).update(status=status, attempts=attempts, heartbeat_at=heartbeat,
                                                 cancel_requested=cancel)
    return rollout.pk


def reap(pk):
    reaper.reap_stale(reaper.ReapReport(), stale_after=60)


def runner(to, **fields):
    return lambda pk: lifecycle.transition(pk, to, "the runner", **fields)


ROLLOUT_OPERATIONS = {
    (S.QUEUED, S.PREPARING): (dict(attempts=0), lambda pk: lifecycle.claim(pk)),
    (S.QUEUED, S.CANCELLED): (dict(attempts=0), lambda pk: lifecycle.cancel(pk)),
    (S.QUEUED, S.FAILED): (dict(attempts=3), lambda pk: lifecycle.claim(pk)),  # out of attempts at the claim
    (S.PREPARING, S.RUNNING): ({}, runner(S.RUNNING)),
    (S.PREPARING, S.QUEUED): (dict(stale=True), reap),
    (S.PREPARING, S.FAILED): (dict(stale=True, attempts=3), reap),
    (S.PREPARING, S.CANCELLED): (dict(stale=True, cancel=True), reap),
    (S.PREPARING, S.PREPARING): (dict(stale=True), lambda pk: lifecycle.claim(pk)),  # takes over
    (S.RUNNING, S.VERIFYING): ({}, runner(S.VERIFYING)),
    (S.RUNNING, S.FINISHED): ({}, runner(S.FINISHED)),
    (S.RUNNING, S.QUEUED): ({}, runner(S.QUEUED, infra_error=False)),  # an infrastructure retry
    (S.RUNNING, S.FAILED): ({}, runner(S.FAILED)),
    (S.RUNNING, S.CANCELLED): ({}, runner(S.CANCELLED)),  # the worker honours a cancel
    (S.RUNNING, S.PREPARING): (dict(stale=True), lambda pk: lifecycle.claim(pk)),  # takes over
    (S.VERIFYING, S.FINISHED): ({}, runner(S.FINISHED)),
    (S.VERIFYING, S.QUEUED): (dict(stale=True), reap),
    (S.VERIFYING, S.FAILED): ({}, runner(S.FAILED)),
    (S.VERIFYING, S.CANCELLED): (dict(stale=True, cancel=True), reap),
    (S.VERIFYING, S.PREPARING): (dict(stale=True), lambda pk: lifecycle.claim(pk)),  # takes over
}


def test_every_rollout_change_in_the_table_has_its_operation():
    table = {(old, new) for old, targets in statuses.TRANSITIONS.items() for new in targets}
    assert set(ROLLOUT_OPERATIONS) == table


@pytest.mark.parametrize("change", sorted(ROLLOUT_OPERATIONS), ids=lambda c: f"{c[0]}->{c[1]}")
def test_each_rollout_change_is_made_by_its_operation(campaign, settings, change):
    settings.RUNNER_MAX_ATTEMPTS = 3
    start, wanted = change
    setup, operation = ROLLOUT_OPERATIONS[change]
    rollout = campaign.rollouts.first()
    operation(at(rollout, start, **setup))
    rollout.refresh_from_db()
    assert rollout.status == wanted
    assert rollout.events.last().status == wanted


def fail_silently(campaign):
    campaign.preflight_sent_at = datetime.now(timezone.utc) - LONG_AGO
    campaign.save(update_fields=["preflight_sent_at"])
    return campaigns.fail_silent_preflights(timeout_sec=1)


def preflight_report(ok):
    check = {"name": "model", "ok": ok, "detail": "fine" if ok else "no key"}
    return {"queue": "cpu", "worker": "w1", "ok": ok, "checks": [check]}


def new(checked_first):
    from evaluations.tests.runner_helpers import utility_entry

    model, harness = utility_entry("oracle")
    version = Campaign.objects.values_list("version", flat=True).first()
    return lifecycle.new_campaign(checked_first=checked_first, model=model, harness=harness, version_id=version,
                                  k=1, backend="bubblewrap")


def rollouts_end(campaign, *ends):
    for rollout, end in zip(campaign.rollouts.order_by("pk"), ends):
        lifecycle.claim(rollout.pk)
        lifecycle.transition(rollout.pk, S.RUNNING, "agent started")
        lifecycle.transition(rollout.pk, end, "done")


CAMPAIGN_OPERATIONS = {
    ("", C.CHECKING): lambda c: new(checked_first=True),
    ("", C.PENDING): lambda c: new(checked_first=False),
    (C.CHECKING, C.PENDING): lambda c: campaigns.record_preflight(c.pk, preflight_report(True)),
    (C.CHECKING, C.FAILED): lambda c: campaigns.record_preflight(c.pk, preflight_report(False)),
    (C.CHECKING, C.CANCELLED): lambda c: campaigns.cancel(c),
    (C.PENDING, C.RUNNING): lambda c: lifecycle.claim(c.rollouts.first().pk),
    (C.PENDING, C.CANCELLED): lambda c: campaigns.cancel(c),
    (C.PENDING, C.FINISHED): lambda c: [lifecycle.cancel(r.pk) for r in c.rollouts.all()],  # all cancelled unstarted
    (C.PENDING, C.FAILED): lambda c: [lifecycle.claim(r.pk) for r in c.rollouts.all()],  # out of attempts
    (C.PENDING, C.FINISHED_WITH_FAILURES): lambda c: (
        lifecycle.claim(c.rollouts.first().pk),
        Rollout.objects.filter(pk=c.rollouts.last().pk).update(attempts=3),
        lifecycle.transition(c.rollouts.first().pk, S.RUNNING, ""),
        lifecycle.transition(c.rollouts.first().pk, S.FINISHED, ""),
        lifecycle.claim(c.rollouts.last().pk),
    ),
    (C.RUNNING, C.FINISHED): lambda c: rollouts_end(c, S.FINISHED, S.FINISHED),
    (C.RUNNING, C.FINISHED_WITH_FAILURES): lambda c: rollouts_end(c, S.FINISHED, S.FAILED),
    (C.RUNNING, C.FAILED): lambda c: rollouts_end(c, S.FAILED, S.FAILED),
    (C.RUNNING, C.CANCELLED): lambda c: campaigns.cancel(c),
}


def test_every_campaign_change_in_the_table_has_its_operation():
    table = {(old, new) for old, targets in lifecycle.CAMPAIGN_TRANSITIONS.items() for new in targets}
    assert set(CAMPAIGN_OPERATIONS) == table


@pytest.mark.parametrize("change", sorted(CAMPAIGN_OPERATIONS), ids=lambda c: f"{c[0] or 'new'}->{c[1]}")
def test_each_campaign_change_is_made_by_its_operation(campaign, settings, change):
    settings.RUNNER_MAX_ATTEMPTS = 3
    start, wanted = change
    if start == C.CHECKING:
        campaign = campaigns.launch(campaign.model, campaign.harness, campaign.version, k=1, backend="bubblewrap",
                                    tasks=campaign.tasks.all())
    elif start == C.RUNNING:
        lifecycle.claim(campaign.rollouts.first().pk)
    elif start == C.PENDING:
        Rollout.objects.filter(campaign=campaign).update(attempts=3 if wanted == C.FAILED else 0)
    campaign.refresh_from_db()
    assert campaign.status == (start or campaign.status)
    made = CAMPAIGN_OPERATIONS[change](campaign)
    campaign = made if isinstance(made, Campaign) else Campaign.objects.get(pk=campaign.pk)
    assert campaign.status == wanted


def test_an_ended_campaign_is_not_cancelled(campaign):
    rollouts_end(campaign, S.FINISHED, S.FINISHED)
    assert campaigns.cancel(campaign) == 0
    campaign.refresh_from_db()
    assert campaign.status == C.FINISHED and campaign.status_reason == ""
