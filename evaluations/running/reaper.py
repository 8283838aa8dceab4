"""The reaper: rollouts whose worker died, messages the broker lost, sandboxes left behind.

Runs every minute under celery beat (`evaluations.reap_rollouts`), at every
worker's start, and as `manage.py reap_rollouts`:

- an active rollout with no heartbeat for RUNNER_STALE_SEC is re-queued
  (the same row; its trial folder set aside) while attempts remain, else
  failed as an infrastructure error (lifecycle.after_loss decides);
- a queued rollout whose message is gone (never sent because the broker
  was down, or lost with it) is sent (dispatch.lost_messages);
- a campaign whose preflight no worker answered in time fails with the
  queue nobody serves; one whose preflight could not be sent is sent;
- a running regrade with no heartbeat for RUNNER_STALE_SEC fails, saying
  its worker stopped (the rollout keeps its grade; staff may regrade it
  again); a queued one whose message is gone is sent again;
- on this host, the sandbox folders (and containers, processes) of
  rollouts that are not running here any more are removed;
- what ended or killed imports left in the uploads folder is removed
  (trajectories.services.sweep_uploads).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from trajectories import services as trajectories, statuses
from trajectories.models import Grade, Rollout, RolloutStatus

from evaluations.running import campaigns, dispatch, lifecycle, workspace

logger = logging.getLogger(__name__)


@dataclass
class ReapReport:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)
    preflights_failed: list[int] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)
    uploads_swept: list[str] = field(default_factory=list)
    regrades_failed: list[int] = field(default_factory=list)  # grade ids
    regrades_resent: list[int] = field(default_factory=list)
    broker_error: str = ""

    def __str__(self) -> str:
        text = (
            f"{len(self.requeued)} re-queued, {len(self.failed)} failed, {len(self.cancelled)} cancelled, "
            f"{len(self.resent)} sent again, {len(self.swept)} sandboxes removed"
        )
        if self.uploads_swept:
            text += f", {len(self.uploads_swept)} upload leftovers removed"
        if self.regrades_failed:
            text += f", {len(self.regrades_failed)} regrades failed (their worker stopped)"
        if self.regrades_resent:
            text += f", {len(self.regrades_resent)} regrades sent again"
        if self.preflights_failed:
            text += f", {len(self.preflights_failed)} campaigns failed their preflight (no worker answered)"
        if self.broker_error:
            text += f"; broker: {self.broker_error}"
        return text


def reap(*, stale_after: float | None = None, enqueue: bool = True, preflights: bool = True) -> ReapReport:
    """`preflights=False` leaves silent preflights be: a worker just starting is about to take theirs
    (and, busy reaping, could not answer the broadcast asking which queues are served)."""
    report = ReapReport()
    reap_stale(report, stale_after=stale_after)
    fail_lost_regrades(report, stale_after=stale_after)
    if preflights:
        report.preflights_failed = campaigns.fail_silent_preflights()
    if enqueue:
        for campaign in campaigns.unsent_preflights():
            if campaigns.send_preflight(campaign).error:
                break
        resend_lost(report)
        resend_lost_regrades(report)
    report.swept += workspace.sweep_sandboxes()
    try:
        report.uploads_swept += trajectories.sweep_uploads(enqueue=enqueue)
    except Exception:  # noqa: BLE001  (a sweep must not stop the reaper)
        logger.exception("sweeping the uploads folder failed")
    return report


def reap_stale(report: ReapReport, *, stale_after: float | None = None) -> None:
    now = timezone.now()
    limit = stale_after if stale_after is not None else lifecycle.stale_after_sec()
    candidates = Rollout.objects.filter(status__in=statuses.IN_ATTEMPT).select_related("campaign")
    for rollout in candidates:
        if not lifecycle.is_stale(rollout.heartbeat_at, now, limit):
            continue
        since = rollout.heartbeat_at.isoformat() if rollout.heartbeat_at else "never"
        fate = lifecycle.after_loss(rollout.attempts, lifecycle.max_attempts(), cancel_requested=rollout.cancel_requested)
        detail = {
            RolloutStatus.CANCELLED: "cancelled (its worker stopped)",
            RolloutStatus.QUEUED: f"re-queued: no heartbeat since {since}",
            RolloutStatus.FAILED: f"failed: no heartbeat since {since}, {fate.reason}",
        }[fate.status]
        _clean_here(rollout)
        done = lifecycle.transition(
            rollout.pk, fate.status, detail, only_from=[rollout.status],
            fault=fate.fault, celery_task_id="" if fate.status == RolloutStatus.QUEUED else rollout.celery_task_id,
        )
        if done is None:
            continue  # it moved meanwhile (its worker woke up, a cancel)
        {RolloutStatus.CANCELLED: report.cancelled, RolloutStatus.QUEUED: report.requeued,
         RolloutStatus.FAILED: report.failed}[fate.status].append(rollout.pk)
        if fate.status == RolloutStatus.QUEUED:
            workspace.set_aside_attempt(done, done.attempts)


def fail_lost_regrades(report: ReapReport, *, stale_after: float | None = None) -> None:
    """Fail each running regrade whose worker stopped beating its heartbeat; the rollout keeps its grade."""
    limit = stale_after if stale_after is not None else lifecycle.stale_after_sec()
    report.regrades_failed += trajectories.fail_lost_regrades(timezone.now() - timedelta(seconds=limit))


def resend_lost_regrades(report: ReapReport) -> None:
    """Send again each queued regrade whose message is gone: never sent (the broker was down), or lost with the broker.

    A message a busy worker holds is not in the queues, so it may be sent
    twice: the grade is run once all the same (trajectories.grades.mark_running).
    """
    grace = timedelta(seconds=float(getattr(settings, "RUNNER_RESEND_GRACE_SEC", 120)))
    queued = list(Grade.objects.filter(state=Grade.State.QUEUED).select_related("rollout__task").order_by("pk"))
    late = [grade for grade in queued if grade.celery_task_id and grade.created_at < timezone.now() - grace]
    waiting = dispatch.waiting_task_ids() if late else set()
    if waiting is None:
        late = []  # the queues cannot be read: nothing is sent again blindly
    for grade in queued:
        if grade.celery_task_id and (grade not in late or grade.celery_task_id in waiting):
            continue
        try:
            dispatch.send_regrade(grade)
        except dispatch.BROKER_DOWN as exc:
            report.broker_error = report.broker_error or f"{type(exc).__name__}: {exc}"[:300]
            return
        report.regrades_resent.append(grade.pk)


def resend_lost(report: ReapReport) -> None:
    lost = dispatch.lost_messages()
    if lost is None:
        report.broker_error = "its queues cannot be read; nothing sent again"
        return
    sent = dispatch.send_many(lost)
    report.resent += sent.sent
    if sent.error:
        report.broker_error = sent.error


def _clean_here(rollout: Rollout) -> int:
    """Remove the rollout's sandbox leftovers on this host (its worker's, if it ran here)."""
    backend = rollout.campaign.backend if rollout.campaign_id else "bubblewrap"
    return workspace.clean_trial(rollout.trial_name, backend)
