"""A rollout's life on our runner: the one owner of its status, its events and its campaign's status.

Every change of a runner rollout's status goes through `transition` (or
`claim`, `create_queued`, `cancel`), which checks it against the table
below, writes the status, its RolloutEvent and the campaign's status in one
transaction. The rules for a rollout whose worker went away (stale
heartbeat, attempts left) are here too, once, for the claim and the reaper.

The table and the rules at the top are plain data and functions, tested
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

from trajectories.models import ACTIVE_STATUSES, Rollout, RolloutEvent, RolloutStatus
from trajectories import services as trajectories

from .models import Campaign

S = RolloutStatus

TERMINAL = (S.FINISHED, S.FAILED, S.CANCELLED)

# status -> the statuses it may change to. PREPARING from an active status is
# a new attempt taking over a rollout whose worker stopped beating.
TRANSITIONS: dict[str, frozenset[str]] = {
    S.QUEUED: frozenset({S.PREPARING, S.CANCELLED, S.FAILED}),
    S.PREPARING: frozenset({S.RUNNING, S.QUEUED, S.FAILED, S.CANCELLED, S.PREPARING}),
    S.RUNNING: frozenset({S.VERIFYING, S.FINISHED, S.QUEUED, S.FAILED, S.CANCELLED, S.PREPARING}),
    S.VERIFYING: frozenset({S.FINISHED, S.QUEUED, S.FAILED, S.CANCELLED, S.PREPARING}),
    S.FINISHED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
    # An imported trial without result.json (trajectories.statuses): never one of our runner's.
    S.INCOMPLETE: frozenset(),
}


class TransitionError(ValueError):
    """A status change the lifecycle does not allow (a bug, or a race lost)."""


def allowed(old: str, new: str) -> bool:
    return new in TRANSITIONS.get(old, frozenset())


# -- rules (pure) -----------------------------------------------------------------


def stale_after_sec() -> float:
    return float(getattr(settings, "RUNNER_STALE_SEC", 60.0))


def max_attempts() -> int:
    return int(getattr(settings, "RUNNER_MAX_ATTEMPTS", 3))


def is_stale(heartbeat_at: datetime | None, now: datetime, stale_after: float) -> bool:
    """No heartbeat for `stale_after` seconds: its worker is gone."""
    return heartbeat_at is None or heartbeat_at < now - timedelta(seconds=stale_after)


@dataclass(frozen=True)
class AfterLoss:
    """What becomes of a rollout whose attempt ended without a result of its own."""

    status: str
    infra_error: bool
    reason: str


def after_loss(attempts: int, limit: int, *, cancel_requested: bool) -> AfterLoss:
    """A lost attempt (worker died, infrastructure fault): cancelled, failed for good, or another try.

    The one rule for the reaper, for a claim that takes over an abandoned
    rollout and for the runner's retries.
    """
    if cancel_requested:
        return AfterLoss(S.CANCELLED, False, "cancelled")
    if attempts >= limit:
        return AfterLoss(S.FAILED, True, f"{attempts} of {limit} attempts used")
    return AfterLoss(S.QUEUED, False, f"attempt {attempts + 1} of {limit} next")


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
    if any(state.status in ACTIVE_STATUSES for state in states):
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
    now = timezone.now()
    with transaction.atomic():
        rollout = Rollout.objects.select_for_update(of=("self",)).get(pk=rollout_id)
        if only_from is not None and rollout.status not in set(only_from):
            return None
        if not allowed(rollout.status, to):
            raise TransitionError(f"rollout {rollout_id}: {rollout.status} -> {to} is not allowed")
        _apply(rollout, to, detail, now, fields)
    return rollout


def _apply(rollout: Rollout, to: str, detail: str, now: datetime, fields: dict[str, Any]) -> None:
    """Write the change on a locked row (inside the caller's transaction)."""
    rollout.status = to
    # Active statuses explain themselves; an ended or re-queued one says why.
    rollout.status_reason = "" if to in (S.PREPARING, S.RUNNING, S.VERIFYING) else detail[:1000]
    for name, value in fields.items():
        setattr(rollout, name, value)
    if to in (S.PREPARING, S.RUNNING, S.VERIFYING):
        rollout.heartbeat_at = now  # an attempt is alive
    elif to not in ACTIVE_STATUSES and rollout.finished_at is None:
        rollout.finished_at = now
    # save() (not update()) so that Rollout signals (leaderboard caches) fire.
    rollout.save()
    RolloutEvent.objects.create(rollout=rollout, status=to, detail=detail[:2000])
    if rollout.campaign_id:
        refresh_campaign(rollout.campaign_id)


def create_queued(campaign: Campaign, task, *, trial_name: str) -> Rollout:
    """A campaign's rollout, queued, with the next number of its entry's repeats on the task (kept for life)."""
    index = trajectories.next_rollout_index(task.pk, campaign.model_id, campaign.harness_id)
    rollout = Rollout.objects.create(
        task=task, model=campaign.model, harness=campaign.harness, campaign=campaign,
        trial_name=trial_name, index=index, status=S.QUEUED,
    )
    RolloutEvent.objects.create(rollout=rollout, status=S.QUEUED, detail=f"campaign {campaign.pk}")
    return rollout


def claim(rollout_id: int, *, celery_task_id: str = "", worker: str = "") -> Rollout | None:
    """Take a queued (or abandoned) rollout for this worker; None when it is not ours to run.

    A message may arrive twice (a redelivery after a worker died, a reaper
    re-send): only a queued rollout, or an active one whose heartbeat has
    stopped, is taken, so a rollout never runs twice at once.
    """
    now = timezone.now()
    with transaction.atomic():
        rollout = (
            Rollout.objects.select_for_update(of=("self",))
            .select_related("task", "model", "harness", "campaign")
            .filter(pk=rollout_id)
            .first()
        )
        if rollout is None or rollout.status not in ACTIVE_STATUSES:
            return None
        previous = rollout.status
        if previous != S.QUEUED and not is_stale(rollout.heartbeat_at, now, stale_after_sec()):
            return None  # another worker is running it
        fate = after_loss(rollout.attempts, max_attempts(), cancel_requested=rollout.cancel_requested)
        if fate.status == S.CANCELLED:
            _apply(rollout, S.CANCELLED, "cancelled before it started", now, {})
            return None
        if fate.status == S.FAILED:
            _apply(rollout, S.FAILED, f"gave up: {fate.reason}", now, {"infra_error": True})
            return None
        detail = f"attempt {rollout.attempts + 1} on {worker or 'a worker'}"
        if previous != S.QUEUED:
            detail += f" (taken over from {previous})"
        _apply(rollout, S.PREPARING, detail, now, {
            "attempts": rollout.attempts + 1,
            "celery_task_id": celery_task_id or rollout.celery_task_id,
            "infra_error": False,
            "worker": worker[:200],
        })
    return rollout


def cancel(rollout_id: int, detail: str = "cancelled by staff") -> Rollout | None:
    """Ask for a rollout's cancel: a queued one ends now, a running one when its worker sees the flag.

    None when the rollout had already ended.
    """
    now = timezone.now()
    with transaction.atomic():
        rollout = Rollout.objects.select_for_update(of=("self",)).get(pk=rollout_id)
        if rollout.status not in ACTIVE_STATUSES:
            return None
        rollout.cancel_requested = True
        if rollout.status == S.QUEUED:
            _apply(rollout, S.CANCELLED, detail, now, {})
        else:
            rollout.save(update_fields=["cancel_requested", "updated_at"])
            RolloutEvent.objects.create(rollout=rollout, status=rollout.status, detail=f"cancel requested: {detail}"[:2000])
    return rollout


def heartbeat(rollout_id: int) -> bool:
    """Beat; returns whether staff asked for a cancel."""
    Rollout.objects.filter(pk=rollout_id).update(heartbeat_at=timezone.now())
    return bool(Rollout.objects.filter(pk=rollout_id).values_list("cancel_requested", flat=True).first())


# -- campaigns ----------------------------------------------------------------------------


def refresh_campaign(campaign_id: int) -> str:
    """Recompute and store a campaign's status (and start/finish times) from its rollouts."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return ""
    states = [RolloutState(status, attempts > 0) for status, attempts in
              campaign.rollouts.values_list("status", "attempts")]
    status = campaign_status(states, cancelled=campaign.status == Campaign.Status.CANCELLED)
    changes: dict[str, Any] = {}
    if status != campaign.status:
        changes["status"] = status
    if campaign.started_at is None and any(state.started for state in states):
        changes["started_at"] = timezone.now()
    if status in (Campaign.Status.RUNNING, Campaign.Status.PENDING):
        if campaign.finished_at is not None:
            changes["finished_at"] = None
    elif campaign.finished_at is None:
        changes["finished_at"] = timezone.now()
    if changes:
        Campaign.objects.filter(pk=campaign_id).update(**changes)
    return status


def cancel_campaign(campaign: Campaign, detail: str = "campaign cancelled by staff") -> list[Rollout]:
    """Mark the campaign cancelled and cancel each of its active rollouts; those changed."""
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CANCELLED, finished_at=timezone.now())
    changed = []
    for rollout_id in campaign.rollouts.filter(status__in=ACTIVE_STATUSES).values_list("pk", flat=True):
        rollout = cancel(rollout_id, detail)
        if rollout is not None:
            changed.append(rollout)
    return changed
