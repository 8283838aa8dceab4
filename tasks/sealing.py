"""Sealed grading, as a task definition sees it: what a separate verifier gets of the agent's work.

A benchmark version with `sealed_grading` has the runner give every task
Harbor 0.26's separate verifier (`[verifier] environment_mode =
"separate"`: a fresh copy of the task's environment for grading), into
which Harbor carries only the declared `[[artifacts]]`, sanitised (no
links out, no setuid bits). A task that declares none gets its workspace
carried (the environment's `workdir`, else the Dockerfile's last WORKDIR),
but the files its instruction declares read-only and it does not pin
itself under /orig (tasks.read_only, `Sealing.restored`) are the task
image's own: the verifier runs those as published, not as the agent left
them.
`seal` makes that config and says what it could not honour: the import
warns with it, the runner (evaluations.sandbox.sealing.SealedTrial)
applies it. Django-free.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from harbor.models.task.config import ArtifactConfig, TaskConfig, VerifierEnvironmentMode

from .dockerfile import RunStep, parse_dockerfile
from .read_only import restored_from_image
from .score_record import RECORD_DIR, task_snapshot_paths

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
    # Paths relative to the carried workspace (globs allowed) that the verifier takes from the task's own
    # image, not from the agent: evaluations.sandbox.sealing puts them back after the carry.
    restored: list[str] = field(default_factory=list)


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
    restored: list[str] = []
    if not artifacts:
        workspace = workspace_of(task_dir, config)
        if workspace is None:
            raise CannotSeal(
                "sealed grading needs to know what the agent leaves for the verifier: the task declares no "
                "[[artifacts]] and has no workspace ([environment] workdir or a Dockerfile WORKDIR)"
            )
        restored = _restored(task_dir, workspace)
        artifacts = [ArtifactConfig(source=workspace)]
    if task_snapshot_paths(task_dir) and not any(_source(a) == RECORD_DIR for a in artifacts):
        # The runner's record of the scoring tool's calls (tasks/score_record.py), put in the trial's
        # artifacts before grading: carried like the agent's work, never taken from the sandbox.
        artifacts.append(ArtifactConfig(source=RECORD_DIR))
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
    return Sealing(sealed, [_source(a) for a in artifacts], warnings, restored)


def _restored(task_dir: Path, workspace: str) -> list[str]:
    """The workspace files the instruction declares read-only and the task does not pin itself (tasks.read_only)."""
    task_dir = Path(task_dir)
    try:
        instruction = (task_dir / "instruction.md").read_text()
    except OSError:
        return []
    try:
        plan = parse_dockerfile((task_dir / "environment" / "Dockerfile").read_text())
        runs = [(step.command, step.workdir) for step in plan.steps if isinstance(step, RunStep)]
    except OSError:
        runs = []
    return restored_from_image(instruction, runs, workspace)


def grades_sealed(task_dir: Path, version_seals: bool) -> bool:
    """Whether a trial of the task is graded sealed: its version seals grading, or it keeps a score record.

    A task scored by the best of its score log is always graded in a separate environment: its record
    reaches the verifier only as a carried artifact, never through the agent's sandbox.
    """
    return version_seals or bool(task_snapshot_paths(task_dir))


def seal_task_dir(task_dir: Path) -> Sealing:
    """`seal` for a task folder's own task.toml (checks before a trial, import warnings)."""
    config = TaskConfig.model_validate_toml((Path(task_dir) / "task.toml").read_text())
    return seal(Path(task_dir), config)


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
