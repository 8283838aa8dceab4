"""One content checksum for folders (task directories, trial folders)."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from autolab_site.safe_files import is_hard_link

CHUNK_SIZE = 1 << 20


def tree_checksum(
    root: Path,
    skip: Callable[[str], bool] = lambda relative: False,
    *,
    keep: Callable[[str], bool] = lambda relative: False,
    kept: dict[str, bytes] | None = None,
    names: set[str] | None = None,
    links: list[str] | None = None,
    digest_instead: Callable[[str, int], bool] | None = None,
    digests: dict[str, str] | None = None,
    hard_links: list[str] | None = None,
) -> str:
    """SHA-256 over the sorted relative paths and bytes of every regular file.

    Each file contributes its POSIX relative path and its content, so a
    rename changes the checksum as much as an edit. Links are not followed
    (they may point outside the folder); `skip(relative_path)` leaves out
    files that are not content (caches, lock files). The whole bytes of the
    files `keep` names are put in `kept`, for a caller that reads them
    next: it need not read them again, and gets what the checksum covers.
    `names` receives every regular file's relative path, and `links` every
    link and special file's (neither followed nor counted). A file to keep
    for which digest_instead(relative, size) is true is not kept: its own
    SHA-256 goes in `digests`, for a caller that reads it piece by piece
    and checks it read those very bytes (a file too large to hold).
    Given `hard_links` (a folder someone else wrote: a trial's), regular
    files with more than one name go there instead (safe_files.is_hard_link),
    neither read nor counted, as links are.
    """
    files: list[tuple[str, str]] = []
    odd: list[str] = [] if links is None else links
    _collect_files(os.fspath(root), "", skip, files, odd, hard_links)
    files.sort()
    digest = hashlib.sha256()
    late: set[str] = set()
    for relative, path in files:
        try:
            # O_NOFOLLOW: the entry may have been swapped for a link since the walk.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            fd = None
        if fd is not None and hard_links is not None and is_hard_link(os.fstat(fd)):
            # Made a hard link since the walk: the opened file is what would be read, so it is checked here.
            os.close(fd)
            hard_links.append(relative)
            late.add(relative)
            continue
        digest.update(relative.encode("utf-8", "surrogateescape") + b"\0")
        try:
            if fd is None:
                raise OSError("not opened")
            # Unbuffered: each chunk goes from the file straight to the digest.
            with open(fd, "rb", buffering=0) as handle:
                whole = kept is not None and keep(relative)
                own = None
                if whole and digest_instead is not None and digest_instead(relative, os.fstat(handle.fileno()).st_size):
                    whole, own = False, hashlib.sha256()
                if whole:
                    data = handle.readall()
                    digest.update(data)
                    kept[relative] = data
                else:
                    while chunk := handle.read(CHUNK_SIZE):
                        digest.update(chunk)
                        if own is not None:
                            own.update(chunk)
                    if own is not None and digests is not None:
                        digests[relative] = own.hexdigest()
        except OSError:
            # A file being rewritten under a live trial; the next import sees it.
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    if names is not None:
        names.update(relative for relative, _ in files if relative not in late)
    if hard_links is not None:
        hard_links.sort()
    return digest.hexdigest()


def _collect_files(
    directory: str, prefix: str, skip: Callable[[str], bool], found: list[tuple[str, str]], odd: list[str],
    hard_links: list[str] | None,
) -> None:
    """(relative path, path) of the regular files below `directory`.

    os.scandir rather than Path.rglob: the directory entries already say
    what is a file, a folder or a link, so no file is looked at twice.
    Folders that cannot be listed are left out, as rglob leaves them.
    """
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except OSError:
        return
    for entry in entries:
        relative = prefix + entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                _collect_files(entry.path, relative + "/", skip, found, odd, hard_links)
            elif entry.is_file(follow_symlinks=False):
                if skip(relative):
                    continue
                if hard_links is not None and is_hard_link(entry.stat(follow_symlinks=False)):
                    hard_links.append(relative)
                else:
                    found.append((relative, entry.path))
            else:
                odd.append(relative)
        except OSError:
            continue
