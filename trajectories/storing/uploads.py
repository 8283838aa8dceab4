"""Staff uploads of trial archives, imported in the background.

A web request stores the archive under the uploads folder and sends a Celery
task; a worker imports it (trajectories.services.run_upload, with the same
import_path as `import_trials`), recording its progress and report on the
UploadJob row that the job's page shows. So an upload of any size or shape
never holds a web worker: a bomb is refused by the worker from what the
archive declares (trajectories.storing.archives), before anything is written.

What an import leaves on disk is removed when it ends, whichever way; what
a killed one leaves is removed by sweep(), which the reaper runs every
minute: extraction folders of processes gone from this host, folders of
jobs that ended, and jobs whose worker died are failed with a message.
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from trajectories.storing.archives import process_alive, sweep_extractions
from trajectories.models import UploadJob

logger = logging.getLogger(__name__)

TASK = "trajectories.import_upload"
JOB_PREFIX = "job-"
# Fail fast: a broker that is down is handled by the reaper sending again.
RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def stale_after_sec() -> float:
    """An import whose worker (on another host) has not reported for this long is taken as dead."""
    return float(getattr(settings, "AUTOLAB_UPLOAD_STALE_SEC", 900))


def job_folder(job: UploadJob) -> Path:
    return Path(settings.UPLOADS_DIR) / f"{JOB_PREFIX}{job.pk}"


def archive_path(job: UploadJob) -> Path:
    return job_folder(job) / job.file_name


def create(upload, file_name: str, version: str, user) -> UploadJob:
    """Store an uploaded file (Django's UploadedFile) as a new queued job, and send its task."""
    job = UploadJob.objects.create(
        created_by=user if getattr(user, "is_authenticated", False) else None,
        file_name=file_name, size=upload.size, version=version,
    )
    folder = job_folder(job)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with open(archive_path(job), "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        _finish(job, UploadJob.Status.FAILED, error=f"the upload could not be stored: {exc}")
        return job
    send(job)
    job.refresh_from_db()
    return job


def send(job: UploadJob) -> bool:
    """Send the job's task; False (the job stays queued, the reaper sends it again) when the broker is down."""
    from autolab_site.celery import app

    if TASK not in app.tasks:
        app.loader.import_default_modules()  # a web process has not run Celery's autodiscovery
    queue = getattr(settings, "AUTOLAB_UPLOAD_QUEUE", "cpu")
    UploadJob.objects.filter(pk=job.pk).update(sent=True)
    try:
        app.signature(TASK, args=[job.pk]).apply_async(queue=queue, retry_policy=RETRY_POLICY)
    except Exception:  # noqa: BLE001  (kombu's errors for an unreachable broker vary by transport)
        logger.warning("upload %s: its task could not be sent; the reaper sends it again", job.pk, exc_info=True)
        UploadJob.objects.filter(pk=job.pk, status=UploadJob.Status.QUEUED).update(sent=False)
        return False
    return True


def this_process() -> str:
    return f"{os.getpid()}@{socket.gethostname()}"


def run(job_id: int, import_path: Callable) -> str:
    """Import a queued job's archive (in a worker); its final status, or "skipped" when it is not queued.

    `import_path` is trajectories.services.import_path (passed in, as the
    services module is the one that imports this one).
    """
    now = timezone.now()
    claimed = UploadJob.objects.filter(pk=job_id, status=UploadJob.Status.QUEUED).update(
        status=UploadJob.Status.IMPORTING, worker=this_process(), started_at=now, heartbeat_at=now,
        phase="checking and unpacking the archive",
    )
    if not claimed:
        return "skipped"  # a message sent twice, or a job the reaper failed
    job = UploadJob.objects.get(pk=job_id)

    def on_progress(report, outcome) -> None:
        UploadJob.objects.filter(pk=job_id).update(
            done=report.done, total=report.total, heartbeat_at=timezone.now(), phase="importing trials",
        )

    try:
        report = import_path(archive_path(job), version=job.version or None, on_progress=on_progress)
    except Exception as exc:  # noqa: BLE001  (the job must end, and say why)
        logger.exception("upload %s failed", job_id)
        return _finish(job, UploadJob.Status.FAILED, error=f"the import failed: {type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(job_folder(job), ignore_errors=True)
    status = UploadJob.Status.FAILED if report.errors and not report.outcomes else UploadJob.Status.DONE
    return _finish(job, status, report=report.as_dict(), error="; ".join(report.errors))


def _finish(job: UploadJob, status: str, *, report: dict | None = None, error: str = "") -> str:
    fields = {"status": status, "error": error, "finished_at": timezone.now(), "phase": ""}
    if report is not None:
        fields.update(report=report, done=report["done"], total=report["total"])
    UploadJob.objects.filter(pk=job.pk).update(**fields)
    return status


def sweep(*, enqueue: bool = True) -> list[str]:
    """Remove what ended or killed imports left in the uploads folder; fail jobs whose worker died.

    Returns the paths removed. `enqueue` sends again the tasks of jobs whose
    message never reached the broker.
    """
    uploads = Path(settings.UPLOADS_DIR)
    swept = sweep_extractions(uploads)
    _fail_dead_imports()
    if uploads.is_dir():
        for folder in uploads.glob(f"{JOB_PREFIX}*"):
            suffix = folder.name[len(JOB_PREFIX) :]
            job = UploadJob.objects.filter(pk=int(suffix)).first() if suffix.isdigit() else None
            if job is None or not job.is_active:
                shutil.rmtree(folder, ignore_errors=True)
                swept.append(str(folder))
    if enqueue:
        for job in UploadJob.objects.filter(status=UploadJob.Status.QUEUED, sent=False):
            if not send(job):
                break
    return swept


def _fail_dead_imports() -> None:
    host = socket.gethostname()
    stale_before = timezone.now() - timedelta(seconds=stale_after_sec())
    for job in UploadJob.objects.filter(status=UploadJob.Status.IMPORTING):
        pid, _, worker_host = job.worker.partition("@")
        if worker_host == host and pid.isdigit():
            gone = not process_alive(int(pid))  # here, the process table knows
        else:
            gone = job.heartbeat_at is None or job.heartbeat_at < stale_before
        if gone:
            UploadJob.objects.filter(pk=job.pk, status=UploadJob.Status.IMPORTING).update(
                status=UploadJob.Status.FAILED, finished_at=timezone.now(), phase="",
                error="the import stopped: its worker process ended (killed, or out of memory) before it finished; "
                "trials it stored are kept, upload the archive again to import the rest",
            )
            shutil.rmtree(job_folder(job), ignore_errors=True)
