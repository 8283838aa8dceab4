"""Celery tasks of the evaluation runner; thin wrappers over runner and campaigns."""
from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(bind=True, name="evaluations.run_rollout", acks_late=True, reject_on_worker_lost=True)
def run_rollout_task(self, rollout_id: int, gpu_type: str = "", gpus: int = 0) -> str:
    """Run one rollout. `gpu_type`/`gpus` ride along for GPU workers' bookkeeping."""
    from .campaigns import enqueue_rollout
    from .runner import RETRY, run_rollout
    from trajectories.models import Rollout

    outcome = run_rollout(rollout_id, celery_task_id=self.request.id or "")
    if outcome.status == RETRY:
        rollout = Rollout.objects.select_related("task").get(pk=rollout_id)
        enqueue_rollout(rollout, countdown=outcome.retry_in)
    return outcome.status


@shared_task(name="evaluations.reap_rollouts")
def reap_rollouts_task() -> str:
    from .campaigns import reap_stale

    return str(reap_stale())
