"""Sealed grading: the verifier runs where the agent never was.

In Harbor's default ("shared") mode the verifier runs in the agent's own
sandbox, after hours in which the agent was root there: a `python3` wrapper
on PATH, a swapped `/bin` or an edited scorer then decides the score. A
benchmark version with `sealed_grading` makes the runner apply Harbor
0.26's separate verifier to every task of the version, whatever its
task.toml says: `[verifier] environment_mode = "separate"` starts a fresh
copy of the task's environment for grading, into which Harbor carries only
the declared `[[artifacts]]` (sanitised: no links out, no setuid bits). A
task that declares no artifacts gets its workspace carried (the
environment's `workdir`, else the Dockerfile's last WORKDIR).

This is Harbor's mechanism, applied to the task's config as loaded
(`SealedTrial`); the task folder is not touched. Django-free.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from harbor.models.task.config import ArtifactConfig, TaskConfig, VerifierEnvironmentMode
from harbor.trial.trial import Trial

from .dockerfile import parse_dockerfile

# Where an AutoLab task's verifier reads what only a shared verifier sees.
_AGENT_LOGS = re.compile(r"/logs/agent\b|LOGS_DIR[^\n]{0,40}[\"']agent[\"']")


class CannotSeal(ValueError):
    """The task declares nothing to carry to a separate verifier, and has no workspace to carry."""


@dataclass(frozen=True)
class Sealing:
    """What sealed grading makes of one task: its config, and what it could not honour."""

    config: TaskConfig
    carried: list[str]
    warnings: list[str] = field(default_factory=list)


def workspace_of(task_dir: Path, config: TaskConfig) -> str | None:
    """The task's workspace: `[environment] workdir`, else its Dockerfile's last WORKDIR (None: not known)."""
    if config.environment.workdir:
        return config.environment.workdir
    dockerfile = Path(task_dir) / "environment" / "Dockerfile"
    try:
        plan = parse_dockerfile(dockerfile.read_text())
    except OSError:
        return None
    return plan.workdir if plan.workdir not in ("", "/") else None


def seal(task_dir: Path, config: TaskConfig) -> Sealing:
    """`config` with a separate verifier for the whole task and every step; CannotSeal when nothing can be carried."""
    warnings: list[str] = []
    artifacts = list(config.artifacts)
    if not artifacts:
        workspace = workspace_of(task_dir, config)
        if workspace is None:
            raise CannotSeal(
                "sealed grading needs to know what the agent leaves for the verifier: the task declares no "
                "[[artifacts]] and has no workspace ([environment] workdir or a Dockerfile WORKDIR)"
            )
        artifacts = [ArtifactConfig(source=workspace)]
    if config.verifier.environment_mode == VerifierEnvironmentMode.SHARED:
        warnings.append(
            'declares [verifier] environment_mode = "shared"; the version seals grading, so its verifier runs '
            "in a fresh environment of its own"
        )
    if _reads_agent_logs(task_dir) and not any(_source(a).startswith("/logs/agent") for a in artifacts):
        warnings.append(
            "its verifier reads /logs/agent, which a sealed verifier only sees when declared as an "
            '[[artifacts]] source (e.g. source = "/logs/agent/score_log.jsonl")'
        )
    separate = {"environment_mode": VerifierEnvironmentMode.SEPARATE}
    steps = None
    if config.steps:
        steps = [step.model_copy(update={"verifier": step.verifier.model_copy(update=separate)}) for step in config.steps]
    sealed = config.model_copy(
        update={"verifier": config.verifier.model_copy(update=separate), "artifacts": artifacts, "steps": steps}
    )
    return Sealing(sealed, [_source(a) for a in artifacts], warnings)


def seal_task_dir(task_dir: Path) -> Sealing:
    """`seal` for a task folder's own task.toml (checks before a trial, import warnings)."""
    from harbor.models.task.task import Task

    task = Task(task_dir=Path(task_dir))
    return seal(task.paths.task_dir, task.config)


def _source(artifact: str | ArtifactConfig) -> str:
    return artifact if isinstance(artifact, str) else artifact.source


def _reads_agent_logs(task_dir: Path) -> bool:
    tests = Path(task_dir) / "tests"
    for path in tests.rglob("*") if tests.is_dir() else ():
        if path.is_file() and path.suffix in ("", ".sh", ".py") and path.stat().st_size < 1 << 20:
            try:
                if _AGENT_LOGS.search(path.read_text(errors="replace")):
                    return True
            except OSError:
                continue
    return False


class SealedTrial(Trial):
    """A Harbor trial whose task is sealed as it loads (`SealedTrial.create(config)`).

    `Trial.create` loads the task through `cls._load_task` and then builds a
    single- or multi-step trial from it; sealing the loaded config is the one
    change. `_load_task` is a Harbor internal: the Harbor version is pinned
    and tests/test_sealed_grading.py covers it.
    """

    @staticmethod
    async def _load_task(config):
        task, download = await Trial._load_task(config)
        task.config = seal(task.paths.task_dir, task.config).config
        return task, download
