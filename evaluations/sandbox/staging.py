"""The sandbox's log folders, kept out of the trial folder.

Harbor binds the trial folder's `agent/`, `verifier/` and artifact folders
into the sandbox (`/logs/agent`, ...) and then, on the host, as root, opens
names in them: terminus-2 writes `agent/trajectory.json`, oracle
`agent/exit-code.txt`, the artifact handler `artifacts/manifest.json`, the
verifier reads `verifier/reward.json`. A link the sandbox planted under one
of those names (`ln -sf /etc/passwd /logs/agent/exit-code.txt`) turned such
a write into a write to any host file.

So no backend of ours binds the trial folder. Each log bind is redirected
to a staging folder of the sandbox's own (under the sandbox directory),
which Harbor then sees as "not mounted" and downloads, through
`download_dir`, at the points where it reads them (after the agent, before
parsing rewards, when collecting artifacts). `SafeTransfers` implements the
downloads with `transfer.copy_tree`: regular files only, links refused,
written by rename, and a file the host side wrote (trajectory.json,
exit-code.txt) is never replaced by the sandbox's file of the same name.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from autolab_site.safe_files import CopyReport, copy_file, copy_tree

LOGS_ROOT = PurePosixPath("/logs")
VERIFIER_LOGS = LOGS_ROOT / "verifier"
# A sandbox's files may not take more than this of the host's disk per
# download, nor more than the task's storage_mb when it has one.
DOWNLOAD_LIMIT_BYTES = 4 << 30


@dataclass(frozen=True)
class StagedMount:
    target: PurePosixPath  # the sandbox path (/logs/agent)
    staging: Path  # the host folder bound there instead of the trial folder's
    trial_source: Path  # the trial folder's folder Harbor wanted bound


# A sandbox folder names the trial it belongs to: a trial has several
# (its agent's environment and, under sealed grading, its verifier's), and
# Harbor's session ids are not a name to parse (long ones are hashed).
OWNER_FILE = "trial"


def fresh_sandbox_folder(folder: Path, trial_name: str) -> None:
    """An empty sandbox folder that names its trial.

    What an earlier attempt of the same trial left (its worker was killed:
    its staged logs, its root) is removed, so every attempt starts with
    empty log folders and the trial folder holds the attempt that counted.
    """
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / OWNER_FILE).write_text(trial_name)


def folder_owner(folder: Path) -> str | None:
    """The trial a sandbox folder belongs to, or None when it does not say."""
    try:
        return (folder / OWNER_FILE).read_text().strip() or None
    except OSError:
        return None


def staging_dir(sandbox_root: Path, session_id: str) -> Path:
    """Where a sandbox's log folders live on the host (outside the trial folder)."""
    return Path(sandbox_root) / session_id / "logs"


def redirect_log_mounts(
    mounts: list[dict[str, Any]] | None, trial_dir: Path, staging_root: Path
) -> tuple[list[dict[str, Any]], list[StagedMount]]:
    """Harbor's mounts with every bind of a trial-folder path moved to `staging_root`.

    Other mounts (a user's read-only data bind, a volume) are left alone.
    The staging folders are made world-writable, as Harbor makes the trial
    folders, for tasks whose agent runs as a non-root user.
    """
    trial_dir = Path(trial_dir).resolve()
    redirected: list[dict[str, Any]] = []
    staged: list[StagedMount] = []
    for mount in mounts or []:
        source = Path(mount.get("source", "")).resolve() if mount.get("type") == "bind" else None
        if source is None or not (source == trial_dir or source.is_relative_to(trial_dir)):
            redirected.append(mount)
            continue
        staging = staging_root / source.relative_to(trial_dir)
        staging.mkdir(parents=True, exist_ok=True)
        for folder in [staging, *staging.relative_to(staging_root).parents]:
            (staging_root / folder).chmod(0o777)
        redirected.append({**mount, "source": str(staging)})
        staged.append(StagedMount(PurePosixPath(mount["target"]), staging, source))
    return redirected, staged


def default_log_mounts(trial_paths) -> list[dict[str, Any]]:
    """The binds Harbor's BaseEnvironment makes when a trial passes none."""
    from harbor.models.trial.paths import EnvironmentPaths

    paths = EnvironmentPaths()
    return [
        {"type": "bind", "source": str(trial_paths.agent_dir), "target": str(paths.agent_dir)},
        {"type": "bind", "source": str(trial_paths.verifier_dir), "target": str(paths.verifier_dir)},
        {
            "type": "bind",
            "source": str(trial_paths.host_artifact_path("main", str(paths.artifacts_dir))),
            "target": str(paths.artifacts_dir),
        },
    ]


def staged_location(staged: list[StagedMount], sandbox_path: str) -> tuple[Path, str] | None:
    """(staging root, relative path) of a sandbox path inside a staged mount, else None."""
    path = PurePosixPath("/" + str(sandbox_path).lstrip("/"))
    best = None
    for mount in staged:
        if path == mount.target or path.is_relative_to(mount.target):
            if best is None or len(mount.target.parts) > len(best.target.parts):
                best = mount
    if best is None:
        return None
    relative = path.relative_to(best.target).as_posix()
    return best.staging, "" if relative == "." else relative


def empty_folder(folder: Path) -> None:
    """Remove what a folder holds, from the host side: links are removed, never followed."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


class SafeTransfers:
    """Downloads from the sandbox that never follow its links (a mixin for environments).

    A subclass sets `self._staged` (from `redirect_log_mounts`) and
    `self._private_dir` (a host folder the sandbox cannot see) and may
    override `_host_location` when the sandbox's files are on the host
    anyway (bubblewrap). Anything else is fetched by the parent
    environment's own `download_dir` / `download_file` into a private
    temporary folder first, and copied from there with the same rules.
    """

    _staged: list[StagedMount]
    _private_dir: Path

    def _init_transfers(self, storage_mb: int | None = None) -> None:
        self._written: set[str] = set()
        self.transfer_reports: list[CopyReport] = []
        self._download_limit = min(DOWNLOAD_LIMIT_BYTES, storage_mb << 20) if storage_mb else DOWNLOAD_LIMIT_BYTES

    def _host_location(self, sandbox_path: str) -> tuple[Path, str] | None:
        return staged_location(self._staged, sandbox_path)

    def staged_file(self, sandbox_path: str) -> Path | None:
        """A sandbox path inside a staged log folder, as a host path (None outside them).

        What lies there is the sandbox's: open it without following links.
        """
        location = staged_location(self._staged, sandbox_path)
        return None if location is None else location[0] / location[1]

    def copied_below(self, root: Path) -> list[str]:
        """The files below `root` (a trial folder) that a download wrote from this sandbox, relative and sorted:
        the runner's record of which of the trial's files the sandbox wrote (trajectories.provenance)."""
        root = Path(root).resolve()
        found = []
        for written in self._written:
            path = Path(written).resolve()
            if path.is_relative_to(root):
                found.append(path.relative_to(root).as_posix())
        return sorted(found)

    def _host_wrote(self, target: Path):
        """keep(relative) for copy_tree: an existing file that no download of ours wrote."""
        return lambda relative: str(target / relative) not in self._written

    def _record(self, target: Path, report: CopyReport) -> None:
        self._written.update(str(target / relative) for relative in report.copied)
        self.transfer_reports.append(report)
        if report.refused:
            self.logger.warning(  # type: ignore[attr-defined]
                "refused to copy out of the sandbox: %s", "; ".join(report.refused[:20])
            )

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        target = Path(target_dir)
        location = self._host_location(source_dir)
        if location is not None:
            root, relative = location
            report = copy_tree(
                root, target, source_relative=relative, keep=self._host_wrote(target), max_bytes=self._download_limit
            )
        else:
            with self._private_folder() as fetched:
                await super().download_dir(source_dir, fetched)  # type: ignore[misc]
                report = copy_tree(fetched, target, keep=self._host_wrote(target), max_bytes=self._download_limit)
        self._record(target, report)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        target = Path(target_path)
        location = self._host_location(source_path)
        folder, _, name = str(source_path).rstrip("/").rpartition("/")
        if location is not None:
            root, relative = location
            parent, _, name = relative.rpartition("/")
            report = copy_tree(
                root, target.parent, source_relative=parent, select=lambda rel: rel == name,
                keep=self._host_wrote(target.parent),
            )
            if name in report.copied and name != target.name:
                (target.parent / name).replace(target)
                report.copied = [target.name if copied == name else copied for copied in report.copied]
        else:
            with self._private_folder() as fetched:
                await super().download_file(source_path, fetched / name)  # type: ignore[misc]
                copy_file(fetched / name, target.parent, target.name)
                report = CopyReport(copied=[target.name])
        self._record(target.parent, report)
        if not target.exists():
            raise FileNotFoundError(f"{source_path}: not downloaded ({'; '.join(report.refused) or 'missing'})")

    async def download_dir_filtered(
        self,
        *,
        source_dir: str,
        target_dir: Path | str,
        include=None,
        exclude=None,
        protect=None,
    ) -> None:
        from harbor.utils.path_filter import filter_paths_by_patterns

        target = Path(target_dir)
        with self._private_folder() as fetched:
            await self.download_dir(source_dir, fetched)
            files = [str(path.relative_to(fetched)) for path in fetched.rglob("*") if path.is_file()]
            chosen = set(filter_paths_by_patterns(files, include=include, exclude=exclude))
            chosen |= {path for path in files if path in (protect or ())}
            report = copy_tree(fetched, target, select=lambda rel: rel in chosen, keep=self._host_wrote(target))
        self._record(target, report)

    def _private_folder(self):
        self._private_dir.mkdir(parents=True, exist_ok=True)
        return _TemporaryFolder(self._private_dir)


class _TemporaryFolder:
    def __init__(self, parent: Path):
        self.path = Path(tempfile.mkdtemp(prefix="fetch-", dir=parent))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
