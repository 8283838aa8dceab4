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

import asyncio
import fnmatch
import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from autolab_site.safe_files import TAR_SLACK, CopyReport, copy_tar, copy_tree, remove_files
from evaluations.sandbox import storage
from evaluations.sandbox.errors import SandboxEndedByAgentError

LOGS_ROOT = PurePosixPath("/logs")
VERIFIER_LOGS = LOGS_ROOT / "verifier"
# A sandbox's files may not take more than this of the host's disk per
# download, nor more than the task's storage_mb when it has one.
DOWNLOAD_LIMIT_BYTES = 4 << 30
MIB = 1 << 20


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
    """An empty sandbox folder that names its trial, in a sandbox root no one else can enter.

    What an earlier attempt of the same trial left (its worker was killed:
    its staged logs, its root) is removed, so every attempt starts with
    empty log folders and the trial folder holds the attempt that counted.
    """
    private_root(folder.parent)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700)
    (folder / OWNER_FILE).write_text(trial_name)


class SharedSandboxRoot(PermissionError):
    """The sandbox root is a folder others share or own: it cannot be made the worker's alone."""


def private_root(root: Path) -> None:
    """The sandbox root (`AUTOLAB_SANDBOX_DIR`), made the worker's alone: mode 0700.

    Below it lie files the agent made, as root of its sandbox (root of the
    host, on rootful engines): its staged logs on every backend, its whole
    root on bubblewrap. A setuid copy of a shell there, run by a local user
    of the worker host while the trial lasts, was root. No one but the
    worker can enter the root, so nothing below it can be run, read or
    opened by anyone else, whatever its mode or owner. A world-writable or
    foreign folder (/tmp itself) is refused rather than changed.
    """
    root.mkdir(parents=True, exist_ok=True)
    info = root.stat()
    if info.st_uid != os.geteuid() or info.st_mode & 0o002:
        raise SharedSandboxRoot(f"{root}: the sandbox folder must be the worker's own, not a shared folder")
    if info.st_mode & 0o777 != 0o700:
        root.chmod(0o700)


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
    """Downloads from the sandbox that never follow its links and stop at its storage (a mixin for environments).

    A subclass sets `self._staged` (from `redirect_log_mounts`) and may
    override `_host_location` when the sandbox's files are on the host
    anyway (bubblewrap). Anything else comes from `_copy_out_of_engine`
    (containers: the engine's `cp ... -` read as a tar stream), with the same
    rules.

    Everything copied out of one sandbox, over all its downloads, stays
    within the task's `storage_mb` (DOWNLOAD_LIMIT_BYTES without one), and
    is bounded as it is read: a sparse file the sandbox made arrives dense,
    and is refused before the host holds more than the limit. A download
    past it lands nothing, and the sandbox is the agent's
    (SandboxEndedByAgentError, `self._ended`): Harbor swallows some download
    errors (artifacts), so `stop()` raises it again (`_raise_if_ended`;
    Harbor keeps the first exception of a trial).
    """

    _staged: list[StagedMount]

    def _init_transfers(self, storage_mb: int | None = None) -> None:
        self._written: set[str] = set()
        self.transfer_reports: list[CopyReport] = []
        self._storage_mb = storage_mb
        self._copy_budget = min(DOWNLOAD_LIMIT_BYTES, storage_mb * MIB) if storage_mb else DOWNLOAD_LIMIT_BYTES
        self._ended = ""  # how the agent's code ended the sandbox ("" while it runs)

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

    async def _copy_out_of_engine(self, sandbox_path: str, target: Path, *, folder: bool, keep, select,
                                  max_bytes: int) -> CopyReport:
        raise NotImplementedError(f"{sandbox_path} is not on the host")

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

    def _ended_by_agent(self, how: str) -> SandboxEndedByAgentError:
        self._ended = self._ended or how
        return SandboxEndedByAgentError(self._ended)

    def _raise_if_ended(self) -> None:
        """At `stop()`: the agent's end of its sandbox, which a swallowed error may not have said."""
        if self._ended:
            raise self._ended_by_agent(self._ended)

    async def _copy_out(self, sandbox_path: str, target: Path, *, folder: bool = True,
                        select=lambda relative: True) -> CopyReport:
        """A sandbox folder's contents (or one file, by its name) copied into `target`, within the budget."""
        keep = self._host_wrote(target)
        location = self._host_location(sandbox_path)
        if location is None:
            report = await self._copy_out_of_engine(
                sandbox_path, target, folder=folder, keep=keep, select=select, max_bytes=self._copy_budget
            )
        else:
            root, relative = location
            if not folder:
                relative, _, name = relative.rpartition("/")
                select = functools.partial(_only, name, select)
            report = await asyncio.to_thread(
                copy_tree, root, target, source_relative=relative, keep=keep, select=select,
                max_bytes=self._copy_budget,
            )
        self._copy_budget -= report.written
        if report.over_limit:
            remove_files(target, report.copied)
            report.copied = []
            self._record(target, report)
            raise self._ended_by_agent(storage.copy_out_too_big(self._storage_mb, DOWNLOAD_LIMIT_BYTES))
        self._record(target, report)
        return report

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        await self._copy_out(source_dir, Path(target_dir))

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        target = Path(target_path)
        name = str(source_path).rstrip("/").rpartition("/")[2]
        report = await self._copy_out(source_path, target.parent, folder=False)
        if name in report.copied and name != target.name:
            (target.parent / name).replace(target)
            # The file the sandbox wrote is now under its target's name (trajectories.provenance reads _written).
            self._written.discard(str(target.parent / name))
            self._written.add(str(target))
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

        def chosen(relative: str) -> bool:
            return relative in (protect or ()) or bool(
                filter_paths_by_patterns([relative], include=include, exclude=exclude)
            )

        await self._copy_out(source_dir, Path(target_dir), select=chosen)

    async def download_dir_with_exclusions(self, *, source_dir: str, target_dir: Path | str, exclude: list[str]) -> None:
        """Harbor's artifact download with `exclude`, by the same copy (Harbor's runs `tar` in the sandbox)."""
        await self._copy_out(source_dir, Path(target_dir), select=lambda relative: not tar_excluded(relative, exclude))


def _only(name: str, select, relative: str) -> bool:
    return relative == name and select(relative)


def tar_excluded(relative: str, patterns: list[str]) -> bool:
    """Whether GNU tar's `--exclude PATTERN` (unanchored) leaves out `relative`: a match on any run of its names."""
    parts = relative.split("/")
    return any(
        fnmatch.fnmatchcase("/".join(parts[start:end]), pattern)
        for pattern in patterns
        for end in range(1, len(parts) + 1)
        for start in range(end)
    )


def copy_from_command(argv: list[str], target: Path, *, keep, select, max_bytes: int) -> CopyReport:
    """`copy_tar` of what `argv` prints (a container engine's `cp CONTAINER:PATH -`), stopped at `max_bytes`.

    The command is killed once the copy is over its limit: the engine may
    have more to send, which the host never receives.
    """
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)
        stdout = process.stdout
        assert stdout is not None
        try:
            report = copy_tar(stdout, target, keep=keep, select=select, max_bytes=max_bytes)
            if not report.over_limit:
                # The archive's closing blocks, then the engine's exit status.
                drained = 0
                while drained < TAR_SLACK and (chunk := stdout.read(1 << 16)):
                    drained += len(chunk)
                process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
            stdout.close()
            process.wait()
        if process.returncode != 0 and not report.over_limit:
            errors.seek(0)
            message = errors.read()[-2000:].decode(errors="replace").strip()
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {message or process.returncode}")
    return report
