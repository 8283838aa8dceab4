"""Our runner's rollouts and its campaigns: when a status changes, and the one writer of a campaign's.

A runner rollout's status changes here (`transition`, `claim`, `cancel`,
`create_queued`), written by trajectories.lifecycle against the rollout's
table (trajectories.statuses.TRANSITIONS), with its campaign's status in
the same transaction. A campaign's status changes only here, by
`CAMPAIGN_TRANSITIONS`: created, checked by its preflight, started,
derived from its rollouts, cancelled. The rules for a rollout whose worker
went away (stale heartbeat, attempts left) are here too, once, for the
claim and the reaper.

The tables and the rules at the top are plain data and functions, tested
without a database or Celery; nothing here sends messages (dispatch.py
does) or runs trials (runner.py does).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from trajectories.models import Rollout, RolloutStatus
from trajectories import services as trajectories, statuses
from trajectories.services import TransitionError
from trajectories.verdict import AfterLoss, after_loss  # noqa: F401  (a lost attempt's fate: the verdict's rule)

from evaluations.models import Campaign

S = RolloutStatus
C = Campaign.Status

# A campaign's status ("" before it exists) -> what it may become. It is
# checked first (its preflight) or starts at once; once started, its
# rollouts decide (`campaign_status`), and staff may cancel it until it ends.
CAMPAIGN_TRANSITIONS: dict[str, frozenset[str]] = {
    "": frozenset({C.CHECKING, C.PENDING}),
    C.CHECKING: frozenset({C.PENDING, C.FAILED, C.CANCELLED}),
    C.PENDING: frozenset({C.RUNNING, C.FINISHED, C.FINISHED_WITH_FAILURES, C.FAILED, C.CANCELLED}),
    C.RUNNING: frozenset({C.FINISHED, C.FINISHED_WITH_FAILURES, C.FAILED, C.CANCELLED}),
    C.FINISHED: frozenset(),
    C.FINISHED_WITH_FAILURES: frozenset(),
    C.FAILED: frozenset(),
    C.CANCELLED: frozenset(),
}


def campaign_allowed(old: str, new: str) -> bool:
    return new in CAMPAIGN_TRANSITIONS.get(old, frozenset())


# -- rules (pure) -----------------------------------------------------------------


def stale_after_sec() -> float:
    return float(getattr(settings, "RUNNER_STALE_SEC", 60.0))


def max_attempts() -> int:
    return int(getattr(settings, "RUNNER_MAX_ATTEMPTS", 3))


def is_stale(heartbeat_at: datetime | None, now: datetime, stale_after: float) -> bool:
    """No heartbeat for `stale_after` seconds: its worker is gone."""
    return heartbeat_at is None or heartbeat_at < now - timedelta(seconds=stale_after)


@dataclass(frozen=True)
class RolloutState:
    status: str
    started: bool  # it was ever claimed (attempts > 0)


def campaign_status(rollouts: Iterable[RolloutState], *, cancelled: bool) -> str:
    """A campaign's status from its rollouts': the one rule.

    cancelled by staff > pending (nothing started yet) / running (something
    active) > finished (no rollout failed) > finished with failures (some
    finished, some failed) > failed (none finished).
    """
    states = list(rollouts)
    if cancelled:
        return Campaign.Status.CANCELLED
    if any(state.status in statuses.ACTIVE for state in states):
        return Campaign.Status.RUNNING if any(state.started for state in states) else Campaign.Status.PENDING
    finished = sum(state.status == S.FINISHED for state in states)
    failed = sum(state.status == S.FAILED for state in states)
    if not failed:
        return Campaign.Status.FINISHED
    return Campaign.Status.FINISHED_WITH_FAILURES if finished else Campaign.Status.FAILED


# -- writing -------------------------------------------------------------------------


def transition(rollout_id: int, to: str, detail: str = "", *, only_from: Iterable[str] | None = None,
               **fields: Any) -> Rollout | None:
    """Move a rollout to `to`, with its event and its campaign's status, in one transaction.

    Returns the rollout, or None when `only_from` is given and the rollout
    is elsewhere (a race another process won: a cancel, the reaper).
    Raises TransitionError for a change the table forbids.
    """
    with transaction.atomic():
        rollout = Rollout.objects.select_for_update(of=("self",)).get(pk=rollout_id)
        if only_from is not None and rollout.status not in set(only_from):
            return None
        _change(rollout, to, detail, **fields)
    return rollout


def _change(rollout: Rollout, to: str, detail: str, *, now: datetime | None = None, **fields: Any) -> None:
    """A locked rollout's change (inside the caller's transaction), then its campaign's status."""
    trajectories.change_status(rollout, to, detail, now=now, **fields)
    if rollout.campaign_id:
        refresh_campaign(rollout.campaign_id)


def create_queued(campaign: Campaign, task, *, trial_name: str) -> Rollout:
    """A campaign's rollout, queued, with the next number of its entry's repeats on the task (kept for life)."""
    index = trajectories.next_rollout_index(task.pk, campaign.model_id, campaign.harness_id)
    return trajectories.create_queued(
        task=task, model=campaign.model, harness=campaign.harness, campaign=campaign, trial_name=trial_name,
        index=index, detail=f"campaign {campaign.pk}",
    )


def claim(rollout_id: int, *, celery_task_id: str = "", worker: str = "") -> Rollout | None:
    """Take a queued (or abandoned) rollout for this worker; None when it is not ours to run.

    A message may arrive twice (a redelivery after a worker died, a reaper
    re-send): only a queued rollout, or an active one whose heartbeat has
    stopped, is taken, so a rollout never runs twice at once. Taking over
    an abandoned attempt is a change of its own (running -> preparing).
    """
    now = timezone.now()
    with transaction.atomic():
        rollout = (
            Rollout.objects.select_for_update(of=("self",))
            .select_related("task", "model", "harness", "campaign")
            .filter(pk=rollout_id)
            .first()
        )
        if rollout is None or rollout.status not in statuses.ACTIVE:
            return None
        previous = rollout.status
        if previous != S.QUEUED and not is_stale(rollout.heartbeat_at, now, stale_after_sec()):
            return None  # another worker is running it
        fate = after_loss(rollout.attempts, max_attempts(), cancel_requested=rollout.cancel_requested)
        if fate.status == S.CANCELLED:
            _change(rollout, S.CANCELLED, "cancelled before it started", now=now)
            return None
        if fate.status == S.FAILED:
            _change(rollout, S.FAILED, f"gave up: {fate.reason}", now=now, fault=fate.fault)
            return None
        detail = f"attempt {rollout.attempts + 1} on {worker or 'a worker'}"
        if previous != S.QUEUED:
            detail += f" (taken over from {previous})"
        _change(
            rollout, S.PREPARING, detail, now=now, attempts=rollout.attempts + 1,
            celery_task_id=celery_task_id or rollout.celery_task_id, worker=worker[:200],
        )
    return rollout


def cancel(rollout_id: int, detail: str = "cancelled by staff") -> Rollout | None:
    """Ask for a rollout's cancel: a queued one ends now, a running one when its worker sees the flag.

    None when the rollout had already ended.
    """
    with transaction.atomic():
        rollout = Rollout.objects.select_for_update(of=("self",)).get(pk=rollout_id)
        if rollout.status not in statuses.ACTIVE:
            return None
        if rollout.status == S.QUEUED:
            _change(rollout, S.CANCELLED, detail, cancel_requested=True)
        else:
            rollout.cancel_requested = True
            rollout.save(update_fields=["cancel_requested", "updated_at"])
            trajectories.note_event(rollout, f"cancel requested: {detail}")
    return rollout


def heartbeat(rollout_id: int) -> bool:
    """Beat; returns whether staff asked for a cancel."""
    Rollout.objects.filter(pk=rollout_id).update(heartbeat_at=timezone.now())
    return bool(Rollout.objects.filter(pk=rollout_id).values_list("cancel_requested", flat=True).first())


# -- campaigns ----------------------------------------------------------------------------


def _set_campaign(campaign: Campaign, to: str, *, only_from: Iterable[str] | None = None, **fields: Any) -> bool:
    """Write a campaign's change on the row, if the table allows it from the stored status; whether it did.

    A conditional UPDATE, so that two processes (a preflight's report and
    the reaper, say) cannot both move the same campaign.
    """
    stored = Campaign.objects.filter(pk=campaign.pk).values_list("status", flat=True).first()
    if stored is None or not campaign_allowed(stored, to) or (only_from is not None and stored not in only_from):
        return False
    changed = Campaign.objects.filter(pk=campaign.pk, status=stored).update(status=to, **fields)
    if changed:
        campaign.status = to
        for name, value in fields.items():
            setattr(campaign, name, value)
    return bool(changed)


def new_campaign(*, checked_first: bool, **fields: Any) -> Campaign:
    """A new campaign: checking (its preflight runs first) or pending (its rollouts start at once)."""
    campaign = Campaign(**fields)
    begin(campaign, checked_first=checked_first)
    campaign.save()
    return campaign


def begin(campaign: Campaign, *, checked_first: bool) -> None:
    """The status a campaign not yet saved starts with (the admin's form saves its own)."""
    if campaign.pk is not None:
        raise TransitionError(f"campaign {campaign.pk} has begun already")
    campaign.status = C.CHECKING if checked_first else C.PENDING


def fail_preflight(campaign: Campaign, reason: str) -> bool:
    """A checking campaign fails (a queue's checks failed, or no worker answered); whether it was still checking."""
    return _set_campaign(campaign, C.FAILED, only_from=[C.CHECKING], status_reason=reason[:1000],
                         finished_at=timezone.now())


def start(campaign: Campaign) -> bool:
    """A checked campaign may run: pending until a worker claims a rollout; whether it was still checking."""
    return _set_campaign(campaign, C.PENDING, only_from=[C.CHECKING], status_reason="")


def refresh_campaign(campaign_id: int) -> str:
    """Recompute and store a campaign's status (and start/finish times) from its rollouts."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return ""
    states = [RolloutState(status, attempts > 0) for status, attempts in
              campaign.rollouts.values_list("status", "attempts")]
    if campaign.status == C.CHECKING:
        return campaign.status  # no rollouts of its own until its preflight passed
    status = campaign_status(states, cancelled=campaign.status == C.CANCELLED)
    if status != campaign.status and not campaign_allowed(campaign.status, status):
        raise TransitionError(f"campaign {campaign_id}: {campaign.status} -> {status} is not allowed")
    changes: dict[str, Any] = {}
    if campaign.started_at is None and any(state.started for state in states):
        changes["started_at"] = timezone.now()
    if status in (C.RUNNING, C.PENDING):
        if campaign.finished_at is not None:
            changes["finished_at"] = None
    elif campaign.finished_at is None:
        changes["finished_at"] = timezone.now()
    if status != campaign.status:
        _set_campaign(campaign, status, **changes)
    elif changes:
        Campaign.objects.filter(pk=campaign_id).update(**changes)
    return status


def cancel_campaign(campaign: Campaign, detail: str = "campaign cancelled by staff") -> list[Rollout]:
    """Cancel a campaign that has not ended, and each of its active rollouts; the rollouts it changed.

    An ended campaign stays as it ended: nothing is cancelled.
    """
    if not _set_campaign(campaign, C.CANCELLED, status_reason=detail[:1000], finished_at=timezone.now()):
        return []
    changed = []
    for rollout_id in campaign.rollouts.filter(status__in=statuses.ACTIVE).values_list("pk", flat=True):
        rollout = cancel(rollout_id, detail)
        if rollout is not None:
            changed.append(rollout)
    return changed
