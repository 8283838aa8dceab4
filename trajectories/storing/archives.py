"""Unpacking uploaded trial archives (.tar.gz, .tgz, .tar, .zip) safely.

Archives come from outside (the staff upload form, a shared drive), so the
extraction trusts nothing in them: every member must be a plain file or
folder with a relative path that stays inside the destination. Links,
devices and FIFOs are refused outright (trial folders never need them), and
the total size and file count are capped. They are checked twice: first
from what the archive declares, before anything is written (a zip's
central directory, every tar header as it streams by, data skipped), so a
bomb is refused in a fraction of a second having written nothing; then
while writing, as a header may lie.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import socket
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

from django.conf import settings

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
# Overridable in settings as AUTOLAB_ARCHIVE_MAX_BYTES / AUTOLAB_ARCHIVE_MAX_FILES.
DEFAULT_MAX_BYTES = 4 * 1024**3
DEFAULT_MAX_FILES = 100_000
CHUNK = 1 << 20


class ArchiveError(ValueError):
    """An archive that cannot or must not be unpacked."""


def is_archive(path: Path | str) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def kind_problem(name: str, file: IO[bytes]) -> str:
    """Why the bytes of `file` are not the archive its `name` says ("" when they are).

    Read from its first and last blocks only (a zip's directory ends it); a
    tar may be compressed whatever its suffix, as unpacking reads it.
    """
    if name.lower().endswith(".zip"):
        return "" if zipfile.is_zipfile(file) else f"{name} is not a zip archive."
    try:
        readable = tarfile.is_tarfile(file)
    except (EOFError, OSError, ValueError, lzma.LZMAError):
        readable = False
    return "" if readable else f"{name} is not a tar archive (plain, gzip, bzip2 or xz)."


def limits() -> tuple[int, int]:
    return (
        int(getattr(settings, "AUTOLAB_ARCHIVE_MAX_BYTES", DEFAULT_MAX_BYTES)),
        int(getattr(settings, "AUTOLAB_ARCHIVE_MAX_FILES", DEFAULT_MAX_FILES)),
    )


EXTRACTION_PREFIX = "extract-"


@contextmanager
def unpacked(archive: Path | str, *, parent: Path | str | None = None) -> Iterator[Path]:
    """A temporary folder holding the archive's contents, removed afterwards.

    The folder's name says which process on which host unpacks into it,
    so that sweep_extractions can remove it once that process is gone
    (killed, or its machine restarted) without touching a live import's.
    """
    if parent is not None:
        Path(parent).mkdir(parents=True, exist_ok=True)
    owner = f"{EXTRACTION_PREFIX}{os.getpid()}@{socket.gethostname()}~"
    folder = Path(tempfile.mkdtemp(prefix=owner, dir=parent))
    try:
        extract_archive(archive, folder)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sweep_extractions(parent: Path | str) -> list[str]:
    """Remove the extraction folders under `parent` whose process on this host has ended; their paths."""
    parent = Path(parent)
    if not parent.is_dir():
        return []
    host = socket.gethostname()
    swept = []
    for entry in parent.iterdir():
        owner = extraction_owner(entry.name)
        if owner is None or owner[1] != host or process_alive(owner[0]):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        swept.append(str(entry))
    return swept


def extraction_owner(name: str) -> tuple[int, str] | None:
    """(pid, host) of an extraction folder's name, None for any other name."""
    if not name.startswith(EXTRACTION_PREFIX) or "~" not in name:
        return None
    pid, _, host = name[len(EXTRACTION_PREFIX) :].rpartition("~")[0].partition("@")
    return (int(pid), host) if pid.isdigit() and host else None


def process_alive(pid: int) -> bool:
    """Whether `pid` runs on this host (a zombie, killed but not yet waited for, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def extract_archive(archive: Path | str, dest: Path | str, *, max_bytes: int | None = None, max_files: int | None = None) -> None:
    """Extract `archive` into the existing folder `dest`, or raise ArchiveError."""
    archive, dest = Path(archive), Path(dest).resolve()
    default_bytes, default_files = limits()
    budget = _Budget(max_bytes if max_bytes is not None else default_bytes, max_files if max_files is not None else default_files)
    name = archive.name
    if not archive.is_file():
        raise ArchiveError(f"{name}: no such file")
    lowered = name.lower()
    try:
        if lowered.endswith(".zip"):
            _check_zip(archive, budget.max_bytes, budget.max_files)
            _extract_zip(archive, dest, budget)
        elif lowered.endswith((".tar.gz", ".tgz", ".tar")):
            _check_tar(archive, budget.max_bytes, budget.max_files)
            _extract_tar(archive, dest, budget)
        else:
            raise ArchiveError(f"{name}: not a supported archive (use {', '.join(ARCHIVE_SUFFIXES)})")
    except ArchiveError as exc:
        raise ArchiveError(f"{name}: {exc}") from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, UnicodeError, ValueError, lzma.LZMAError) as exc:
        raise ArchiveError(f"{name}: unreadable archive ({type(exc).__name__}: {exc})") from exc


class _Budget:
    def __init__(self, max_bytes: int, max_files: int):
        self.max_bytes, self.max_files = max_bytes, max_files
        self.bytes = 0
        self.files = 0

    def add_file(self) -> None:
        self.files += 1
        if self.files > self.max_files:
            raise ArchiveError(f"more than {self.max_files} entries")

    def add_bytes(self, count: int) -> None:
        self.bytes += count
        if self.bytes > self.max_bytes:
            raise ArchiveError(f"more than {self.max_bytes} bytes uncompressed")


def safe_target(dest: Path, member_name: str) -> Path | None:
    """Where `member_name` goes under `dest`; None for the archive root itself.

    Refuses absolute paths, drive letters, backslash tricks and any `..`.
    """
    name = member_name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"absolute path refused: {member_name!r}")
    parts = [part for part in PurePosixPath(name).parts if part not in ("", ".")]
    if any(part == ".." for part in parts):
        raise ArchiveError(f"path leaving the archive refused: {member_name!r}")
    if "\x00" in name:
        raise ArchiveError(f"invalid file name refused: {member_name!r}")
    if not parts:
        return None
    target = dest.joinpath(*parts).resolve()
    if target != dest and dest not in target.parents:
        raise ArchiveError(f"path leaving the archive refused: {member_name!r}")
    return target


def check_archive(archive: Path | str, *, max_bytes: int | None = None, max_files: int | None = None) -> None:
    """Raise ArchiveError when what `archive` declares is over the limits; writes nothing."""
    archive = Path(archive)
    default_bytes, default_files = limits()
    max_bytes = max_bytes if max_bytes is not None else default_bytes
    max_files = max_files if max_files is not None else default_files
    try:
        if archive.name.lower().endswith(".zip"):
            _check_zip(archive, max_bytes, max_files)
        else:
            _check_tar(archive, max_bytes, max_files)
    except ArchiveError as exc:
        raise ArchiveError(f"{archive.name}: {exc}") from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, UnicodeError, ValueError, lzma.LZMAError) as exc:
        raise ArchiveError(f"{archive.name}: unreadable archive ({type(exc).__name__}: {exc})") from exc


def _check_zip(archive: Path, max_bytes: int, max_files: int) -> None:
    """The central directory's entry count and declared sizes, read without inflating anything."""
    with zipfile.ZipFile(archive) as zipped:
        entries = zipped.infolist()
    if len(entries) > max_files:
        raise ArchiveError(f"declares {len(entries)} entries, over the limit of {max_files}")
    declared = sum(info.file_size for info in entries)
    if declared > max_bytes:
        raise ArchiveError(f"declares {declared} bytes uncompressed, over the limit of {max_bytes}")


def _check_tar(archive: Path, max_bytes: int, max_files: int) -> None:
    """Every header's declared size as the archive streams by; members' data is read past, never written.

    Headers are parsed here (tarfile builds a TarInfo per member, about 50
    times slower: 40 s for 100,000 members on a busy machine).
    """
    declared = count = 0
    with _open_tar_stream(archive) as stream:
        for size in _tar_member_sizes(stream):
            count += 1
            if count > max_files:
                raise ArchiveError(f"more than {max_files} entries")
            declared += size
            if declared > max_bytes:
                raise ArchiveError(f"declares more than {max_bytes} bytes uncompressed")


def _open_tar_stream(archive: Path) -> IO[bytes]:
    with open(archive, "rb") as probe:
        magic = probe.read(6)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(archive, "rb")
    if magic.startswith(b"BZh"):
        return bz2.open(archive, "rb")
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(archive, "rb")
    return open(archive, "rb")


TAR_BLOCK = 512
TAR_META_TYPES = (b"x", b"g", b"L", b"K")  # pax and GNU long-name headers: about the next member
MAX_META_BYTES = 1 << 20


def _tar_member_sizes(stream: IO[bytes]) -> Iterator[int]:
    """The declared data size of each member of a tar stream, skipping its data."""
    pax_size = None
    while True:
        block = stream.read(TAR_BLOCK)
        if len(block) < TAR_BLOCK or block.count(0) == TAR_BLOCK:
            return  # the end-of-archive blocks (or a truncated archive: extraction says so)
        # No checksum test here (tarfile's extraction makes it): a garbled
        # header can only make the archive look bigger, so be refused.
        size = _tar_number(block[124:136])
        padded = -(-size // TAR_BLOCK) * TAR_BLOCK
        if block[156:157] in TAR_META_TYPES:
            if size > MAX_META_BYTES:
                raise ArchiveError("a member's extended header is too long")
            data = stream.read(padded)
            if block[156:157] == b"x":
                pax_size = _pax_size(data[:size], pax_size)
            continue
        if pax_size is not None:
            size, pax_size = pax_size, None
            padded = -(-size // TAR_BLOCK) * TAR_BLOCK
        yield size
        if block[156:157] in (b"0", b"\0", b"7"):  # only regular files carry data here
            _skip(stream, padded)


def _tar_number(field: bytes) -> int:
    """A numeric header field: octal text, or GNU's base-256 when its first bit is set."""
    if field[:1] and field[0] & 0x80:
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    if not text:
        return 0
    return int(text, 8)


def _pax_size(data: bytes, current: int | None) -> int | None:
    for record in data.split(b"\n"):
        _, _, keyword_value = record.partition(b" ")
        keyword, _, value = keyword_value.partition(b"=")
        if keyword == b"size" and value.isdigit():
            return int(value)
    return current


def _skip(stream: IO[bytes], count: int) -> None:
    while count > 0:
        chunk = stream.read(min(count, CHUNK))
        if not chunk:
            return
        count -= len(chunk)


def _extract_tar(archive: Path, dest: Path, budget: _Budget) -> None:
    with tarfile.open(archive, mode="r:*") as tar:
        for member in tar:
            budget.add_file()
            if member.issym() or member.islnk():
                raise ArchiveError(f"link refused: {member.name!r}")
            if not (member.isfile() or member.isdir()):
                raise ArchiveError(f"special file refused: {member.name!r}")
            target = safe_target(dest, member.name)
            if target is None:
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            source = tar.extractfile(member)
            if source is None:
                raise ArchiveError(f"unreadable member: {member.name!r}")
            with source:
                _write(source, target, budget)


def _extract_zip(archive: Path, dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            budget.add_file()
            # Unix file type bits, when the zip was made on Unix; 0 otherwise.
            file_type = stat.S_IFMT(info.external_attr >> 16)
            if file_type and file_type not in (stat.S_IFREG, stat.S_IFDIR):
                raise ArchiveError(f"link or special file refused: {info.filename!r}")
            target = safe_target(dest, info.filename)
            if target is None:
                continue
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            with zipped.open(info) as source:
                _write(source, target, budget)


def _write(source: IO[bytes], target: Path, budget: _Budget) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and (target.is_symlink() or not target.is_file()):
        raise ArchiveError(f"member would replace a folder or link: {target.name!r}")
    with open(target, "wb") as out:
        while chunk := source.read(CHUNK):
            budget.add_bytes(len(chunk))
            out.write(chunk)
