"""Sending rollouts to the workers, and asking the broker what it still holds.

One Celery message per rollout, to the `cpu` queue, or to `gpu` (with the
task's GPU type and count) when the task needs GPUs. Messages are sent by
the task's name, so nothing here imports the Celery tasks module (which
imports the runner).

A broker that is down when a campaign starts is not an error the campaign
dies of: its rollouts stay queued in the database without a message, and
the reaper sends them once the broker answers again. A broker that lost
its messages (a Redis restart without persistence) is found the same way:
a queued rollout past its due time whose message is not waiting in any
queue is sent again; the claim makes a duplicate harmless.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from trajectories import statuses
from trajectories.models import Rollout

logger = logging.getLogger(__name__)

RUN_TASK = "evaluations.run_rollout"
PREFLIGHT_TASK = "evaluations.preflight"
QUEUES = ("cpu", "gpu")
# Send failures that mean "the broker is not there" (not a bug of ours).
BROKER_DOWN = (OperationalError, ConnectionError, OSError)


def queue_for(task) -> tuple[str, dict[str, Any]]:
    """The Celery queue for a task, and the routing details passed along.

    GPU tasks go to `gpu` with their GPU type (and count), so that only
    workers started with `-Q gpu` on GPU machines take them.
    """
    if task.gpus > 0:
        return "gpu", {"gpu_type": task.gpu_type, "gpus": task.gpus}
    return "cpu", {}


def _broker_url() -> str:
    """The broker messages are sent to (Celery's write URL; the broker URL unless one is set apart)."""
    from autolab_site.celery import app

    return str(app.conf.broker_write_url or "")


def broker_label() -> str:
    """The broker URL without its password, for messages to people."""
    url = _broker_url()
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    return f"{scheme}{sep}{rest}"


@dataclass
class SendReport:
    sent: list[int] = field(default_factory=list)
    unsent: list[int] = field(default_factory=list)
    error: str = ""

    @property
    def message(self) -> str:
        if not self.unsent:
            return f"{len(self.sent)} rollouts sent to the workers"
        return (
            f"the broker ({broker_label()}) is not reachable ({self.error}): {len(self.unsent)} rollouts are "
            "queued in the database and are sent when it answers again (the reaper sends them: celery beat "
            "every minute, or python manage.py reap_rollouts)"
        )


# Fail fast: an unreachable broker is handled by the reaper, not by waiting here.
RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def _signature(name: str, **options):
    from autolab_site.celery import app

    if name not in app.tasks:
        # A web process has not run Celery's autodiscovery (a worker has):
        # register the tasks, so that the signature finds its task and
        # task_always_eager applies to it.
        app.loader.import_default_modules()
    return app.signature(name, **options)


def send(rollout: Rollout, *, countdown: float = 0) -> str:
    """Send the message that runs `rollout`; its task id. Raises a BROKER_DOWN error."""
    queue, routing = queue_for(rollout.task)
    result = _signature(RUN_TASK, args=[rollout.pk], kwargs=routing).apply_async(
        queue=queue, countdown=countdown or None, headers={"queue": queue, **routing}, retry_policy=RETRY_POLICY,
    )
    Rollout.objects.filter(pk=rollout.pk).update(
        celery_task_id=result.id, due_at=timezone.now() + timedelta(seconds=countdown)
    )
    return result.id


REGRADE_TASK = "evaluations.regrade"


def send_regrade(grade) -> str:
    """Send the message that runs a queued regrade (evaluations.regrades.regrade.run), to its task's queue; the task id."""
    from trajectories.models import Grade

    queue, routing = queue_for(grade.rollout.task)
    result = _signature(REGRADE_TASK, args=[grade.pk]).apply_async(
        queue=queue, headers={"queue": queue, **routing}, retry_policy=RETRY_POLICY,
    )
    Grade.objects.filter(pk=grade.pk).update(celery_task_id=result.id)
    return result.id


REBUILD_TASK = "evaluations.rebuild_board"


def send_rebuild(version_id: int, harness: int | None, open_weight: bool | None) -> str:
    """Ask a worker of AUTOLAB_BOARD_QUEUE for a board brought up to date (boards.serving.rebuild); the task id."""
    result = _signature(REBUILD_TASK, args=[version_id, harness, open_weight]).apply_async(
        queue=settings.AUTOLAB_BOARD_QUEUE, retry_policy=RETRY_POLICY
    )
    return result.id


def send_preflight(campaign_id: int, queue: str) -> str:
    """Ask a worker of `queue` to check a campaign (evaluations.running.preflight); the task id."""
    result = _signature(PREFLIGHT_TASK, args=[campaign_id, queue]).apply_async(queue=queue, retry_policy=RETRY_POLICY)
    return result.id


def send_many(rollouts) -> SendReport:
    """Send each rollout's message; stops at the first sign that the broker is down."""
    report = SendReport()
    for rollout in rollouts:
        if report.error:
            report.unsent.append(rollout.pk)
            continue
        try:
            send(rollout)
            report.sent.append(rollout.pk)
        except BROKER_DOWN as exc:
            report.error = f"{type(exc).__name__}: {exc}"[:300]
            report.unsent.append(rollout.pk)
            logger.warning("sending rollout %s failed: %s", rollout.pk, report.error)
    return report


def revoke(task_id: str) -> None:
    """Drop a message not yet taken (best effort: the cancel flag works without it)."""
    if not task_id:
        return
    from autolab_site.celery import app

    try:
        app.control.revoke(task_id)
    except Exception:  # noqa: BLE001  (the broker may be down)
        logger.warning("revoking %s failed", task_id)


def serves(queue: str, timeout: float = 1.0) -> bool:
    """Whether a running worker consumes `queue` (asked of every worker by broadcast).

    False when none answers, or when the broker cannot broadcast (kombu's
    filesystem transport): a busy worker still answers, as its main process
    replies while its pool runs trials.
    """
    from autolab_site.celery import app

    try:
        replies = app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception:  # noqa: BLE001  (no broadcast on this transport, or the broker is down)
        return False
    return any(entry.get("name") == queue for queues in replies.values() for entry in queues or [])


def waiting_task_ids() -> set[str] | None:
    """Task ids of the run messages waiting in the queues; None when this broker cannot be read.

    Messages a worker has taken (running, or held for a countdown) are not
    counted: past its due time, a queued rollout whose message a worker
    holds is late because that worker is busy or gone, and a second message
    lets a free worker run it.
    """
    url = _broker_url()
    try:
        if url.startswith(("redis://", "rediss://")):
            return _redis_waiting()
        if url.startswith("filesystem://"):
            return _filesystem_waiting()
    except BROKER_DOWN as exc:
        logger.warning("reading the broker's queues failed: %s", exc)
        return None
    return None


def _task_id(message: Any) -> str:
    if isinstance(message, (bytes, str)):
        message = json.loads(message)
    headers = message.get("headers") or {}
    return str(headers.get("id") or (message.get("properties") or {}).get("correlation_id") or "")


def _redis_waiting() -> set[str]:
    from autolab_site.celery import app

    with app.connection_for_write() as connection:  # the broker the messages were sent to
        channel = connection.default_channel
        client = channel.client
        # The broker's name space (AUTOLAB_BROKER_KEY_PREFIX): kombu prefixes the commands it sends itself,
        # not LRANGE.
        prefix = getattr(channel, "global_keyprefix", "") or ""
        found: set[str] = set()
        for queue in QUEUES:
            # kombu keeps a list per queue, and one per priority step beside it.
            for key in [queue, *(f"{queue}\x06\x16{step}" for step in (3, 6, 9))]:
                for raw in client.lrange(prefix + key, 0, -1):
                    try:
                        found.add(_task_id(raw))
                    except (ValueError, AttributeError):
                        continue
        return found


def _filesystem_waiting() -> set[str]:
    from autolab_site.celery import app

    folder = Path((app.conf.broker_transport_options or {}).get("data_folder_in", ""))
    found: set[str] = set()
    for path in folder.glob("*.msg"):
        try:
            found.add(_task_id(path.read_bytes()))
        except (OSError, ValueError, AttributeError):
            continue
    return found


def lost_messages(now=None, grace_sec: float | None = None) -> list[Rollout] | None:
    """Queued rollouts whose message is gone: never sent, or past due and not waiting in a queue.

    None when the broker cannot be read (nothing is sent again blindly).
    """
    now = now or timezone.now()
    grace = float(grace_sec if grace_sec is not None else getattr(settings, "RUNNER_RESEND_GRACE_SEC", 120))
    queued = list(Rollout.objects.filter(status=statuses.QUEUED, cancel_requested=False).select_related("task"))
    unsent = [rollout for rollout in queued if not rollout.celery_task_id]
    late = [
        rollout for rollout in queued
        if rollout.celery_task_id and (rollout.due_at is None or rollout.due_at < now - timedelta(seconds=grace))
    ]
    if not late:
        return unsent
    waiting = waiting_task_ids()
    if waiting is None:
        return None if not unsent else unsent
    return unsent + [rollout for rollout in late if rollout.celery_task_id not in waiting]
