"""Reading and copying files in folders that someone else controls, without following links.

Whatever a sandbox can write (its `/logs` staging folders, its root
filesystem), and whatever lies in an uploaded or imported trial folder, is
attacker-controlled: the agent, or a task's solution, can plant
`ln -sf /etc/shadow /logs/agent/exit-code.txt` and wait for the host side
(root, on the worker) to open that name. Every host-side read or copy of
such a folder goes through this module, which works on directory file
descriptors (openat-style) so that no path is ever resolved twice:

- a source entry is opened with O_NOFOLLOW and must be a regular file or a
  directory (links, fifos, devices and sockets are refused and reported);
- a file read (read_file, read_tail, open_below) must also have one name
  only: a hard link is a second name of a file that may lie anywhere on the
  same filesystem (`ln /etc/shadow trial/agent/notes.txt`, made by local
  root or the file's owner), so it is refused as a symbolic link is. A copy
  (copy_tree) takes hard links: it copies from a sandbox's own folders,
  where a hard link can only name a file of the sandbox (links do not cross
  mounts), and writes fresh files of one name;
- a target file is written to a fresh temporary name (O_EXCL) and renamed
  over its final name, which replaces whatever is there (a link included)
  instead of writing through it;
- a target directory is created, or opened with O_NOFOLLOW, so a planted
  link to a directory is refused rather than entered.

The folder given as a root is trusted (a host folder of ours); only what
lies below it is not. Django-free.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a fifo the sandbox planted must not hang the worker.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafePath(PermissionError):
    """A path the host side refuses to follow (a link, a special file)."""


@dataclass
class CopyReport:
    """What a copy did: files written, and entries refused or kept, by relative path."""

    copied: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "agent/x: a symbolic link"
    kept: list[str] = field(default_factory=list)  # targets the host wrote, left as they were
    written: int = 0  # bytes written to the target
    over_limit: bool = False  # the source held more than the copy's `max_bytes`

    def merge(self, other: "CopyReport") -> None:
        self.copied += other.copied
        self.refused += other.refused
        self.kept += other.kept
        self.written += other.written
        self.over_limit = self.over_limit or other.over_limit


def open_dir(path: str | os.PathLike, *, dir_fd: int | None = None) -> int:
    """A descriptor of an existing directory, refusing a link at its last component."""
    return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)


def open_dir_chain(root: str | os.PathLike, relative: str, *, create: bool = False) -> int:
    """A descriptor of root/relative, each component entered without following links.

    `root` itself is trusted (a host folder); the components below it may
    not be. With `create`, missing components are made (mode 0o755).
    """
    if create:
        Path(root).mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in _parts(relative):
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = open_dir(part, dir_fd=fd)
            except OSError as exc:
                raise _refusal(exc, relative) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_below(root: str | os.PathLike, relative: str) -> int:
    """A descriptor of the regular file root/relative, refusing links anywhere below `root`."""
    folder, _, name = relative.strip("/").rpartition("/")
    dir_fd = open_dir_chain(root, folder)
    try:
        return _open_regular(name, dir_fd, relative)
    finally:
        os.close(dir_fd)


def read_file(root: str | os.PathLike, relative: str, *, limit: int | None = None) -> bytes:
    """The bytes of root/relative (at most `limit` from the start), refusing links anywhere below `root`."""
    with os.fdopen(open_below(root, relative), "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def read_tail(root: str | os.PathLike, relative: str, size: int) -> bytes:
    """The last `size` bytes of root/relative, refusing links anywhere below `root`."""
    with os.fdopen(open_below(root, relative), "rb") as handle:
        end = os.fstat(handle.fileno()).st_size
        handle.seek(max(end - size, 0))
        return handle.read(size)


def write_file(root: str | os.PathLike, relative: str, data: bytes, *, mode: int = 0o644) -> None:
    """Write root/relative atomically: a temporary name, then a rename over the final one."""
    folder, _, name = relative.strip("/").rpartition("/")
    dir_fd = open_dir_chain(root, folder, create=True)
    try:
        _write_at(dir_fd, name, lambda out: out.write(data), mode)
    finally:
        os.close(dir_fd)


def copy_tree(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    source_relative: str = "",
    target_relative: str = "",
    keep: Callable[[str], bool] = lambda relative: False,
    select: Callable[[str], bool] = lambda relative: True,
    max_bytes: int | None = None,
) -> CopyReport:
    """Copy the regular files and folders below source/source_relative into target/target_relative.

    `source` and `target` are trusted host folders; everything below them
    may be the sandbox's, and is entered without following links. Links and
    special files are refused (listed in the report, never followed).
    `keep(relative)` says that an existing target file must stay as it is
    (a file the host side wrote, which the sandbox must not replace);
    `select(relative)` filters files. `max_bytes` bounds the total copied (a
    sandbox can fill its log folder; the host's disk is not its to fill):
    files past it are refused, and the report says `over_limit`. Copies
    never carry setuid or setgid bits.
    """
    report = CopyReport()
    Path(target).mkdir(parents=True, exist_ok=True)
    try:
        src_fd = open_dir_chain(source, source_relative)
    except FileNotFoundError:
        return report
    try:
        dst_fd = open_dir_chain(target, target_relative, create=True)
        try:
            _copy_dir(src_fd, dst_fd, "", report, keep, select, [max_bytes])
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    return report


def copy_tar(
    stream: BinaryIO,
    target: str | os.PathLike,
    *,
    keep: Callable[[str], bool] = lambda relative: False,
    select: Callable[[str], bool] = lambda relative: True,
    max_bytes: int | None = None,
) -> CopyReport:
    """`copy_tree`'s rules for a tar stream (a container engine's `cp CONTAINER:PATH -`), read once.

    Regular files and folders are written below `target`; links, devices,
    fifos and names that climb out ('..', absolute) are refused. At most
    `max_bytes` of file content is written and at most `max_bytes` plus
    TAR_SLACK of the stream is read: past either the copy stops there, with
    `over_limit`, and leaves no partial file, so the host never holds more
    than the limit whatever the archive claims (a sparse file arrives dense).
    """
    report = CopyReport()
    Path(target).mkdir(parents=True, exist_ok=True)
    source = _BoundedReader(stream, None if max_bytes is None else max_bytes + TAR_SLACK)
    budget = [max_bytes]
    try:
        with tarfile.open(fileobj=source, mode="r|") as archive:
            for member in archive:
                relative = _member_name(member.name)
                if relative is None:
                    report.refused.append(f"{member.name}: a name outside the folder")
                elif not relative:
                    continue
                elif member.isdir():
                    _tar_folder(target, relative, report)
                elif not member.isreg():
                    report.refused.append(f"{relative}: {'a link' if member.issym() or member.islnk() else 'not a regular file'}")
                elif select(relative):
                    _tar_file(archive, member, target, relative, report, keep, budget)
                if budget[0] == 0 and report.over_limit:
                    break
    except _TooBig:
        report.refused.append("the archive: past the copy's size limit")
        report.over_limit = True
    except tarfile.TarError as exc:
        report.refused.append(f"the archive: {exc}")
    return report


# Tar headers and padding beside the files' bytes (512 bytes a member and a
# 10 KiB record): what a stream may hold beyond the files' own limit.
TAR_SLACK = 16 << 20


def copy_file(source: str | os.PathLike, target_root: str | os.PathLike, relative: str) -> None:
    """Copy one host file (not a link) to target_root/relative, refusing links below target_root."""
    folder, _, name = relative.strip("/").rpartition("/")
    try:
        fd = os.open(source, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{source}: a symbolic link") from exc
        raise
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{source}: not a regular file")
        os.set_blocking(fd, True)
        dir_fd = open_dir_chain(target_root, folder, create=True)
        try:
            _write_at(dir_fd, name, lambda out: _pump(src, out, None), info.st_mode & 0o777)
        finally:
            os.close(dir_fd)


def remove_files(root: str | os.PathLike, relatives: list[str]) -> None:
    """Remove root/relative for each relative path (a copy taken back), never following a link below `root`."""
    for relative in relatives:
        folder, _, name = relative.strip("/").rpartition("/")
        try:
            dir_fd = open_dir_chain(root, folder)
        except OSError:
            continue
        try:
            os.unlink(name, dir_fd=dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)


def shift_owners(root: str | os.PathLike, relative: str, base: int, count: int) -> None:
    """Give root/relative and everything below it that a host id < `count` owns to `base` + that id, links not followed.

    Files the host side wrote into a sandbox that runs in a user namespace
    (ids 0..count-1 mapped to base..): the sandbox's root then owns what the
    host's root wrote for it. Ids already shifted are left as they are (a
    chown also clears setuid and setgid bits).
    """
    folder, _, name = relative.strip("/").rpartition("/")
    stack = [(open_dir_chain(root, folder), iter([name or "."]))]
    try:
        while stack:
            dir_fd, names = stack[-1]
            entry = next(names, None)
            if entry is None:
                os.close(dir_fd)
                stack.pop()
                continue
            try:
                info = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if info.st_uid < count or info.st_gid < count:
                uid = base + info.st_uid if info.st_uid < count else info.st_uid
                gid = base + info.st_gid if info.st_gid < count else info.st_gid
                os.chown(entry, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                child = open_dir(entry, dir_fd=dir_fd)
                stack.append((child, iter(os.listdir(child))))
    finally:
        for dir_fd, _ in stack:
            os.close(dir_fd)


def find_links(root: str | os.PathLike) -> list[str]:
    """Relative paths of the links and special files below `root` (not followed)."""
    found: list[str] = []

    def walk(directory: str, prefix: str) -> None:
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            return
        for entry in entries:
            relative = prefix + entry.name
            if entry.is_symlink():
                found.append(relative)
            elif entry.is_dir(follow_symlinks=False):
                walk(entry.path, relative + "/")
            elif not entry.is_file(follow_symlinks=False):
                found.append(relative)

    walk(os.fspath(root), "")
    return sorted(found)


# -- internals ---------------------------------------------------------------


def _parts(relative: str) -> list[str]:
    parts = [part for part in relative.strip("/").split("/") if part and part != "."]
    if ".." in parts:
        raise UnsafePath(f"{relative}: '..' is not allowed")
    return parts


def _refusal(exc: OSError, relative: str) -> OSError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return UnsafePath(f"{relative}: a symbolic link or not a folder")
    return exc


HARD_LINK = "a hard link (a second name of a file that may lie outside the folder)"


def is_hard_link(info: os.stat_result) -> bool:
    """A regular file with more than one name: what no reader of someone else's folder opens."""
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1


def _open_regular(name: str, dir_fd: int, relative: str, *, hard_links: bool = False) -> int:
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{relative}: a symbolic link") from exc
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafePath(f"{relative}: not a regular file")
    if not hard_links and is_hard_link(info):
        os.close(fd)
        raise UnsafePath(f"{relative}: {HARD_LINK}")
    os.set_blocking(fd, True)
    return fd


def _write_at(dir_fd: int, name: str, write: Callable, mode: int) -> None:
    temporary = f".{name[:100]}.{secrets.token_hex(6)}.partial"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def _pump(source, out, limit: int | None) -> int:
    written = 0
    while chunk := source.read(CHUNK if limit is None else min(CHUNK, limit - written + 1)):
        written += len(chunk)
        if limit is not None and written > limit:
            raise _TooBig
        out.write(chunk)
    return written


class _TooBig(Exception):
    pass


class _BoundedReader:
    """A stream that raises _TooBig once more than `limit` bytes were read from it."""

    def __init__(self, stream: BinaryIO, limit: int | None):
        self._stream = stream
        self._left = limit

    def read(self, size: int = -1) -> bytes:
        if self._left is not None:
            size = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        chunk = self._stream.read(size)
        if self._left is not None:
            self._left -= len(chunk)
            if self._left < 0:
                raise _TooBig
        return chunk


def _member_name(name: str) -> str | None:
    """A tar member's path relative to the folder ("" for the folder itself), None when it climbs out."""
    parts = [part for part in name.split("/") if part and part != "."]
    if ".." in parts or name.startswith("/"):
        return None
    return "/".join(parts)


def _tar_folder(target, relative: str, report: CopyReport) -> None:
    try:
        os.close(open_dir_chain(target, relative, create=True))
    except OSError as exc:
        report.refused.append(f"{relative}: {exc}")


def _tar_file(archive, member, target, relative: str, report: CopyReport, keep, budget: list[int | None]) -> None:
    folder, _, name = relative.rpartition("/")
    try:
        dir_fd = open_dir_chain(target, folder, create=True)
    except OSError as exc:
        report.refused.append(f"{relative}: {exc}")
        return
    try:
        if _kept(dir_fd, name, relative, report, keep):
            return
        if budget[0] is not None and member.size > budget[0]:
            # Known from its header: refused before a byte of it is read.
            report.refused.append(f"{relative}: past the copy's size limit")
            report.over_limit = True
            budget[0] = 0
            return
        _write_counted(archive.extractfile(member), dir_fd, name, relative, member.mode, report, budget)
    finally:
        os.close(dir_fd)


def _copy_dir(
    src_fd: int,
    dst_fd: int,
    prefix: str,
    report: CopyReport,
    keep: Callable[[str], bool],
    select: Callable[[str], bool],
    budget: list[int | None],
) -> None:
    for name in sorted(os.listdir(src_fd)):
        relative = prefix + name
        try:
            info = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            report.refused.append(f"{relative}: a symbolic link")
        elif stat.S_ISDIR(info.st_mode):
            _copy_subdir(src_fd, dst_fd, name, relative, report, keep, select, budget)
        elif not stat.S_ISREG(info.st_mode):
            report.refused.append(f"{relative}: not a regular file")
        elif select(relative):
            _copy_entry(src_fd, dst_fd, name, relative, report, keep, budget)


def _copy_subdir(src_fd, dst_fd, name, relative, report, keep, select, budget) -> None:
    try:
        child_src = open_dir(name, dir_fd=src_fd)
    except OSError:
        report.refused.append(f"{relative}: changed while it was copied")
        return
    try:
        try:
            os.mkdir(name, 0o755, dir_fd=dst_fd)
        except FileExistsError:
            pass
        try:
            child_dst = open_dir(name, dir_fd=dst_fd)
        except OSError:
            report.refused.append(f"{relative}: the target is not a folder")
            return
        try:
            _copy_dir(child_src, child_dst, relative + "/", report, keep, select, budget)
        finally:
            os.close(child_dst)
    finally:
        os.close(child_src)


def _copy_entry(src_fd, dst_fd, name, relative, report, keep, budget) -> None:
    if _kept(dst_fd, name, relative, report, keep):
        return
    try:
        fd = _open_regular(name, src_fd, relative, hard_links=True)
    except (UnsafePath, OSError) as exc:
        report.refused.append(f"{relative}: {exc}")
        return
    with os.fdopen(fd, "rb") as source:
        _write_counted(source, dst_fd, name, relative, os.fstat(fd).st_mode, report, budget)


def _kept(dir_fd: int, name: str, relative: str, report: CopyReport, keep: Callable[[str], bool]) -> bool:
    """Whether an existing target file stays as it is (`keep`): then it is reported kept."""
    if not keep(relative):
        return False
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    report.kept.append(relative)
    return True


def _write_counted(source, dir_fd: int, name: str, relative: str, mode: int, report: CopyReport,
                   budget: list[int | None]) -> None:
    """`source` written to `name` (rename-safe, no setuid or setgid bit), within the copy's remaining bytes."""
    limit = budget[0]
    counted = [0]

    def write(out) -> None:
        counted[0] = _pump(source, out, limit)

    try:
        _write_at(dir_fd, name, write, mode & 0o777 | 0o600)
    except _TooBig:
        report.refused.append(f"{relative}: past the copy's size limit")
        report.over_limit = True
        budget[0] = 0
        return
    except OSError as exc:
        report.refused.append(f"{relative}: {exc.strerror or exc}")
        return
    if limit is not None:
        budget[0] = limit - counted[0]
    report.written += counted[0]
    report.copied.append(relative)
