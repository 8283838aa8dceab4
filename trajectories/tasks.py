"""Celery tasks of the trajectories app; thin wrappers over its services."""
from __future__ import annotations

from celery import shared_task


# Not acks_late: an archive that kills its worker (out of memory, say) must
# not be handed to the next worker again and again; the reaper fails its job.
@shared_task(name="trajectories.import_upload", acks_late=False, reject_on_worker_lost=False)
def import_upload_task(job_id: int) -> str:
    from trajectories.services import run_upload

    return run_upload(job_id)


@shared_task(name="trajectories.analyze_rollouts", acks_late=False)
def analyze_rollouts_task(
    rollout_ids: list[int], judge: str, budget: int, replace: bool = False, requested_by_id: int | None = None,
) -> dict[str, int | str]:
    """Read rollouts with the judge (the staff's "Analyse" button); counts per state."""
    from trajectories.services import analyze_rollouts

    return analyze_rollouts(rollout_ids, judge=judge, budget=budget, replace=replace, requested_by_id=requested_by_id)
