"""Celery tasks of the trajectories app; thin wrappers over its services."""
from __future__ import annotations

from celery import shared_task


# Not acks_late: an archive that kills its worker (out of memory, say) must
# not be handed to the next worker again and again; the reaper fails its job.
@shared_task(name="trajectories.import_upload", acks_late=False, reject_on_worker_lost=False)
def import_upload_task(job_id: int) -> str:
    from trajectories.services import run_upload

    return run_upload(job_id)
