"""Unified diffs: the one reading of their headers and lines.

The explorer shows a step's edits as a diff with the files it touches, and
the failure rules ask which files a rollout edited (was a protected file
changed?). Both read the same headers here, so a file the page lists as
edited is the file the classifier judges.
"""
from __future__ import annotations

import re

# `--- a/x` / `+++ b/x` (a tab may follow with a timestamp), git's own header, svn's Index line.
_HEADER = re.compile(r"^(?:\+\+\+|---) (?P<path>[^\t\n]+)|^diff --git a/(?P<git>\S+) b/\S+|^Index: (?P<index>\S+)", re.M)


def files_in_diff(diff: str | None) -> list[str]:
    """The file names a diff touches, in order, without git's a/ b/ prefixes.

    A deleted file counts (its `---` name), as does each side of a rename.
    """
    files: list[str] = []
    for match in _HEADER.finditer(diff or ""):
        path = (match.group("path") or match.group("git") or match.group("index") or "").strip()
        if match.group("path") and path.startswith(("a/", "b/")):
            path = path[2:]
        if path and path != "/dev/null" and path not in files:
            files.append(path)
    return files


def diff_lines(diff: str | None) -> list[tuple[str, str]]:
    """(css class, text) per line of a diff: file headers, hunks, additions, deletions, context."""
    lines = []
    for line in (diff or "").splitlines():
        if line.startswith(("diff ", "--- ", "+++ ", "Index: ")):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        lines.append((cls, line))
    return lines
