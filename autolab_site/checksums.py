"""One content checksum for folders (task directories, trial folders)."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path


def tree_checksum(root: Path, skip: Callable[[str], bool] = lambda relative: False) -> str:
    """SHA-256 over the sorted relative paths and bytes of every regular file.

    Each file contributes its POSIX relative path and its content, so a
    rename changes the checksum as much as an edit. Links are not followed
    (they may point outside the folder); `skip(relative_path)` leaves out
    files that are not content (caches, lock files).
    """
    root = Path(root)
    digest = hashlib.sha256()
    files = []
    for path in root.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        if not skip(relative):
            files.append((relative, path))
    for relative, path in sorted(files):
        digest.update(relative.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with path.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
        except OSError:
            # A file being rewritten under a live trial; the next import sees it.
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    return digest.hexdigest()
