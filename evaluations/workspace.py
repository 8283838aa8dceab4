"""Where a rollout's trial folder and sandbox live on the worker host that runs it.

`$AUTOLAB_TRIALS_DIR/<campaign id>/<trial name>/` is the Harbor trial
folder (moved to shared storage when the trial ends), and
`$AUTOLAB_SANDBOX_DIR/<session id>/` the sandbox's own folder (staged logs,
bubblewrap's root), named by Harbor's session id for the trial's
environment.
"""
from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from django.conf import settings

from trajectories.models import Rollout


def trials_dir(rollout: Rollout) -> Path:
    return Path(settings.TRIALS_DIR) / (str(rollout.campaign_id) if rollout.campaign_id else "adhoc")


def trial_dir(rollout: Rollout) -> Path:
    return trials_dir(rollout) / rollout.trial_name


def session_id(trial_name: str) -> str:
    """Harbor's session id for a trial's environment (its sandbox folder, its compose project)."""
    return f"{trial_name}__env"


def trial_name_of_session(session: str) -> str:
    return session.removesuffix("__env")


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
