"""Whether a rollout's recorded outputs can be graded again by its task's current verifier. Django-free.

Harbor 0.26's regrade (harbor/trial/regrade.py) restores a trial's recorded
`agent/` and `artifacts/` and runs a *separate* verifier on them; it is
possible when every input the new verifier declares (`[[artifacts]]`, and
the implicit `/logs/artifacts`) was collected in the recorded trial, by its
`artifacts/manifest.json`. Harbor checks that again as it runs; this module
says so before anything is queued, from the rollout's stored file list, so
that staff read "why not" at once and the rollout is left as it was.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harbor.models.task.artifacts import effective_artifact_service, with_convention_entry
from harbor.models.task.config import ArtifactConfig, TaskConfig, VerifierEnvironmentMode
from harbor.models.task.verifier_mode import resolve_step_verifier_mode, resolve_task_verifier_mode
from harbor.models.trial.paths import EnvironmentPaths
from harbor.trial.artifact_handler import artifact_host_path

from autolab_site.checksums import tree_checksum
from tasks.sealing import CannotSeal, seal

MANIFEST = "artifacts/manifest.json"
# What a regrade restores of the recorded trial (Harbor's RegradeTrial reads these).
RESTORED_PREFIXES = ("agent/", "artifacts/")
RESTORED_FILES = ("result.json", "config.json")


def restored(path: str) -> bool:
    """Whether a recorded trial file is part of what a regrade restores."""
    return path in RESTORED_FILES or path.startswith(RESTORED_PREFIXES)


def verifier_version(task_dir: Path) -> str:
    """sha256 over the task's tests/ and task.toml as they are now: the verifier a grade was made with."""
    task_dir = Path(task_dir)
    digest = hashlib.sha256()
    digest.update(tree_checksum(task_dir / "tests").encode() if (task_dir / "tests").is_dir() else b"no tests")
    toml = task_dir / "task.toml"
    digest.update(b"\0" + (toml.read_bytes() if toml.is_file() else b"no task.toml"))
    return digest.hexdigest()


@dataclass(frozen=True)
class Verifier:
    """The task's current verifier as a regrade runs it: its config (sealed when the version seals grading)."""

    config: TaskConfig
    problem: str = ""  # why it cannot grade from recorded outputs at all ("" when it can)


def current_verifier(task_dir: Path, *, sealed: bool) -> Verifier:
    """The task's verifier now; sealed grading gives it a separate environment, as the runner does."""
    task_dir = Path(task_dir)
    config = TaskConfig.model_validate_toml((task_dir / "task.toml").read_text())
    if sealed:
        try:
            config = seal(task_dir, config).config
        except CannotSeal as exc:
            return Verifier(config, str(exc))
    modes = [resolve_step_verifier_mode(config, step) for step in config.steps] if config.steps else [
        resolve_task_verifier_mode(config)
    ]
    if any(mode != VerifierEnvironmentMode.SEPARATE for mode in modes):
        return Verifier(config, (
            "the task's verifier runs in the agent's own environment (shared mode), which no longer exists; "
            'a regrade needs [verifier] environment_mode = "separate" (or a version with sealed grading)'
        ))
    if config.steps:
        return Verifier(config, "multi-step tasks are not regraded here")
    return Verifier(config, "")


def declared_inputs(config: TaskConfig) -> list[ArtifactConfig]:
    """What the verifier gets of the agent's work: the declared artifacts and Harbor's /logs/artifacts."""
    return with_convention_entry(list(config.artifacts), convention_source=EnvironmentPaths.artifacts_dir.as_posix())


def coverage_problems(
    declared: list[ArtifactConfig], manifest: list[Mapping] | None, files: Mapping[str, bool]
) -> list[str]:
    """Why the recorded outputs do not hold what the verifier needs ([] when they do).

    `manifest` is the recorded artifacts/manifest.json (None: there is none),
    `files` the recorded trial files, each with whether it was kept only in
    part. An input counts when the manifest recorded it collected ("ok")
    with its files stored whole, or recorded it as an empty folder.
    """
    if not files:
        return ["no recorded outputs: none of its trial files were stored (an imported rollout keeps its reward and "
                "steps, not its workspace)"]
    if manifest is None:
        return ["no artifacts/manifest.json among its recorded files: what the agent left for the verifier was not "
                "collected (a trial from before Harbor 0.26's artifacts, or one that ended before collection)"]
    problems = []
    for artifact in declared:
        key = (effective_artifact_service(artifact), artifact.source.rstrip("/"))
        destination = artifact_host_path(Path("artifacts"), artifact).as_posix()
        entries = [
            entry for entry in manifest
            if (entry.get("service") or "main", str(entry.get("source", "")).rstrip("/")) == key
            and entry.get("destination") == destination
        ]
        if not entries:
            problems.append(f"{artifact.source}: the verifier needs it, but the recorded trial never collected it")
            continue
        entry = entries[-1]
        status = entry.get("status")
        if status == "empty":
            continue
        if status != "ok":
            problems.append(f"{artifact.source}: its collection {status or 'failed'} in the recorded trial")
            continue
        below = [path for path in files if path == destination or path.startswith(destination + "/")]
        cut = [path for path in below if files[path]]
        if cut:
            problems.append(f"{artifact.source}: {cut[0]} was stored only in part (over the storage's file size limit)")
        elif not below and entry.get("type") != "directory":
            problems.append(f"{artifact.source}: recorded as collected, but its file was not stored")
    if "result.json" not in files:
        problems.append("no result.json among its recorded files: the trial did not finish")
    return problems

