"""Where a rollout's trial folder and sandbox live on the worker host that runs it.

`$AUTOLAB_TRIALS_DIR/<campaign id>/<trial name>/` is the Harbor trial
folder (moved to shared storage when the trial ends), and
`$AUTOLAB_SANDBOX_DIR/<session id>/` the sandbox's own folder (staged logs,
bubblewrap's root), named by Harbor's session id for the trial's
environment.
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
from datetime import timedelta
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.utils import timezone

from trajectories import statuses
from trajectories.models import Grade, Rollout, RolloutStatus

from evaluations.sandbox import backends

logger = logging.getLogger(__name__)


def trials_dir(rollout: Rollout) -> Path:
    return Path(settings.TRIALS_DIR) / (str(rollout.campaign_id) if rollout.campaign_id else "adhoc")


def trial_dir(rollout: Rollout) -> Path:
    return trials_dir(rollout) / rollout.trial_name


def session_id(trial_name: str) -> str:
    """Harbor's session id for a trial's environment (its sandbox folder, its compose project)."""
    return f"{trial_name}__env"


def trial_name_of_session(session: str) -> str:
    """The trial of a sandbox folder that does not say (sandbox.staging.folder_owner): by Harbor's naming."""
    return session.split("__verifier__", 1)[0].removesuffix("__env")


def regrade_trial_name(trial_name: str, grade_id: int) -> str:
    """A regrade's own trial (and sandbox) name (evaluations.regrades.regrade): never the rollout's, whose folder
    it must not touch."""
    return f"{PurePosixPath(trial_name).name}__regrade-{grade_id}"


REGRADE_SUFFIX = "__regrade-"


def grade_of_trial(trial_name: str) -> int | None:
    """The grade a regrade's trial name belongs to, or None for a rollout's own trial."""
    head, sep, tail = trial_name.rpartition(REGRADE_SUFFIX)
    return int(tail) if sep and head and tail.isdigit() else None


def sessions_by_trial() -> dict[str, list[str]]:
    """This host's sandbox folders, by the trial they belong to (its agent's and its verifier's)."""
    from evaluations.sandbox.staging import folder_owner

    root = sandbox_root()
    try:
        folders = [entry for entry in root.iterdir() if entry.is_dir() and not entry.is_symlink()]
    except OSError:
        return {}
    found: dict[str, list[str]] = {}
    for folder in folders:
        trial = folder_owner(folder) or trial_name_of_session(folder.name)
        found.setdefault(trial, []).append(folder.name)
    return found


def sandbox_root() -> Path:
    return Path(settings.SANDBOX_DIR)


def sandbox_folder(trial_name: str) -> Path:
    return sandbox_root() / session_id(trial_name)


def worker_name() -> str:
    """This process as the rollout records its worker: host and pid."""
    return f"{socket.gethostname()}:{os.getpid()}"


def this_host(worker: str) -> bool:
    return worker.rpartition(":")[0] == socket.gethostname()


def set_aside_attempt(rollout: Rollout, attempt: int) -> None:
    """Move a failed attempt's folder out of the campaign folder, keeping it for debugging."""
    folder = trial_dir(rollout)
    if not folder.exists():
        return
    target = Path(settings.TRIALS_DIR) / "_attempts" / folder.parent.name / f"{rollout.trial_name}.{attempt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    shutil.move(str(folder), str(target))


def clean_trial(trial_name: str, backend: str) -> int:
    """Kill what is left of a trial's sandboxes on this host, its agent's and its verifier's; how many went."""
    sessions = sessions_by_trial().get(trial_name) or [session_id(trial_name)]
    removed = 0
    for session in sessions:
        try:
            removed += backends.get(backend).cleanup(session)
        except Exception:  # noqa: BLE001  (one failed cleanup must not stop the others)
            logger.exception("cleaning the sandbox %s of %s failed", session, trial_name)
    return removed


def remove_session(session: str) -> None:
    """Kill what is left of one sandbox on this host (processes, containers) and remove its folder."""
    for backend in backends.BACKENDS.values():
        try:
            backend.cleanup(session)
        except Exception:  # noqa: BLE001
            logger.exception("cleanup of %s by %s failed", session, backend.name)
    shutil.rmtree(sandbox_root() / session, ignore_errors=True)


def _regrading(trial_name: str) -> bool:
    """Whether the sandbox is a regrade's still under way (evaluations.regrades.regrade), which has no rollout of its own."""
    grade = grade_of_trial(trial_name)
    # A day bounds it: a regrade whose worker died is not protected for ever.
    recent = timezone.now() - timedelta(days=1)
    return grade is not None and Grade.objects.filter(
        pk=grade, state__in=(Grade.State.QUEUED, Grade.State.RUNNING), created_at__gte=recent,
    ).exists()


def sweep_sandboxes() -> list[str]:
    """Remove this host's sandbox folders whose rollout is not running here any more.

    A worker that died leaves its sandbox folder (and containers) on its
    host; the rollout is then re-queued, finished elsewhere or failed. Each
    host sweeps its own, at worker start, after each trial and with the
    reaper.
    """
    root = sandbox_root()
    names = sessions_by_trial()
    running_here = {
        trial_name for trial_name, worker in
        Rollout.objects.filter(trial_name__in=names, status__in=statuses.ACTIVE).values_list("trial_name", "worker")
        if this_host(worker)
    }
    swept = []
    for trial_name, sessions in names.items():
        if trial_name in running_here or _regrading(trial_name):
            continue
        rollout = Rollout.objects.filter(trial_name=trial_name).select_related("campaign").first()
        if rollout is not None and rollout.status == RolloutStatus.QUEUED and not rollout.attempts:
            continue
        for session in sessions:
            remove_session(session)
            swept.append(session)
    try:
        from evaluations.sandbox.bubblewrap import sweep_cgroups

        sweep_cgroups()
    except Exception:  # noqa: BLE001
        logger.exception("sweeping sandbox cgroups failed")
    return swept
