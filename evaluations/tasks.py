"""Celery tasks of the evaluation runner; thin wrappers over runner, dispatch and reaper."""
from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

logger = logging.getLogger(__name__)


@shared_task(bind=True, name="evaluations.run_rollout", acks_late=True, reject_on_worker_lost=True)
def run_rollout_task(self, rollout_id: int, gpu_type: str = "", gpus: int = 0) -> str:
    """Run one rollout. `gpu_type`/`gpus` ride along for GPU workers' bookkeeping."""
    from trajectories.models import Rollout

    from evaluations.running import dispatch
    from evaluations.running.runner import RETRY, run_rollout

    outcome = run_rollout(rollout_id, celery_task_id=self.request.id or "")
    if outcome.status == RETRY:
        rollout = Rollout.objects.select_related("task").get(pk=rollout_id)
        try:
            dispatch.send(rollout, countdown=outcome.retry_in)
        except dispatch.BROKER_DOWN:
            logger.warning("rollout %s: its retry is queued; the reaper sends it when the broker is back", rollout_id)
    return outcome.status


@shared_task(bind=True, name="evaluations.regrade", acks_late=True)
def regrade_task(self, grade_id: int) -> str:
    """Run one queued regrade: the task's current verifier on a rollout's recorded outputs (evaluations.regrades.regrade)."""
    from evaluations.regrades.regrade import run

    return run(grade_id, celery_task_id=self.request.id or "").state


@shared_task(name="evaluations.preflight", acks_late=True)
def preflight_task(campaign_id: int, queue: str) -> str:
    """Check a campaign on this worker (its queue's view of keys, endpoint, tasks, backend); start or fail it."""
    from evaluations.models import Campaign
    from evaluations.running.campaigns import preflight_inputs, record_preflight
    from evaluations.running.preflight import run_checks
    from evaluations.running.runner import serve_scripted_stub
    from evaluations.running.stub_llm import StubPortTaken

    campaign = Campaign.objects.select_related("model", "harness").filter(pk=campaign_id).first()
    if campaign is None or campaign.status != Campaign.Status.CHECKING:
        return "skipped"
    model, backend, folders = preflight_inputs(campaign, queue)
    try:
        serve_scripted_stub(campaign.model)
    except StubPortTaken:
        pass  # the endpoint check names what answers there
    report = run_checks(model, backend, folders, queue=queue)
    return record_preflight(campaign_id, report.as_dict())


@shared_task(name="evaluations.reap_rollouts")
def reap_rollouts_task() -> str:
    from evaluations.running.reaper import reap

    return str(reap())


@shared_task(name="evaluations.rebuild_board", acks_late=True)
def rebuild_board_task(version_id: int, harness: int | None = None, open_weight: bool | None = None) -> str:
    """A board brought up to date off the web process (queue AUTOLAB_BOARD_QUEUE); see boards.serving.served_board."""
    from evaluations.boards.serving import rebuild

    return rebuild(version_id, harness, open_weight)


@worker_ready.connect
def reap_on_start(sender=None, **kwargs) -> None:
    """Rescue rollouts abandoned by a worker that died, and clear this host's leftover sandboxes."""
    try:
        from evaluations.running.reaper import reap

        logger.info("reaper at worker start: %s", reap(preflights=False))
    except Exception:  # noqa: BLE001  (the database may not be migrated yet)
        logger.exception("reaping stale rollouts at worker start failed")
