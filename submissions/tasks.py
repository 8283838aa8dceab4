"""Celery tasks of the submissions app; thin wrappers over its services."""
from __future__ import annotations

from celery import shared_task


# Not acks_late: an archive that kills its worker must not be handed to the next one again and again
# (`sweep` fails a check whose worker died).
@shared_task(name="submissions.check", acks_late=False, reject_on_worker_lost=False)
def check_task(submission_id: int) -> str:
    from submissions.services import run_check

    return run_check(submission_id)


@shared_task(name="submissions.sweep")
def sweep_task() -> list[int]:
    from submissions.services import sweep

    return sweep()
