"""Reading patches an agent applies, per file, so that they can be replayed.

Two formats: the unified diff (`--- a/x`, `+++ b/x`, `@@ -1,2 +1,2 @@`, as
`patch` and `git apply` take) and Codex's own (`*** Begin Patch`, `*** Add
File: x`, `*** Update File: x`, `*** Delete File: x`, hunks after `@@`
lines, `*** End Patch`). A hunk is replayed by finding its old lines
(context and removals) in the file's known content, after the previous
hunk, and putting its new lines (context and additions) in their place:
line numbers in unified diffs are not trusted, agents write them by hand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

ADD = "add"
UPDATE = "update"
DELETE = "delete"

_CODEX_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
_CODEX_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$")
_UNIFIED_NEW = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
_UNIFIED_OLD = re.compile(r"^--- (?:a/)?(\S+)")


@dataclass
class Hunk:
    old: list[str] = field(default_factory=list)  # lines, without their newline
    new: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    path: str
    operation: str  # add | update | delete
    text: str  # this file's part of the patch, as written
    hunks: list[Hunk] = field(default_factory=list)
    moved_to: str = ""

    @property
    def added_content(self) -> str:
        """An added file's content."""
        return "".join(line + "\n" for hunk in self.hunks for line in hunk.new)


def parse_patch(text: str) -> list[FilePatch]:
    """Every file a patch changes, in order; [] when it names none."""
    if "*** Begin Patch" in text or _has_codex_header(text):
        return _codex(text)
    return _unified(text)


def apply_hunks(content: str, hunks: list[Hunk]) -> str | None:
    """`content` with the hunks replayed; None when one of them does not fit."""
    lines = content.split("\n")
    trailing_newline = content.endswith("\n")
    if trailing_newline:
        lines.pop()
    start = 0
    for hunk in hunks:
        if not hunk.old:
            if hunk.new:
                lines[start:start] = hunk.new  # pure addition: at the hunk's place, the start without context
                start += len(hunk.new)
            continue
        at = _find(lines, hunk.old, start)
        if at is None:
            at = _find(lines, hunk.old, 0)
            if at is None:
                return None
        lines[at : at + len(hunk.old)] = hunk.new
        start = at + len(hunk.new)
    return "\n".join(lines) + ("\n" if trailing_newline or not lines else "")


def _find(lines: list[str], block: list[str], start: int) -> int | None:
    n = len(block)
    for index in range(start, len(lines) - n + 1):
        if lines[index : index + n] == block:
            return index
    stripped = [line.rstrip() for line in block]  # hand-written patches lose trailing spaces
    for index in range(start, len(lines) - n + 1):
        if [line.rstrip() for line in lines[index : index + n]] == stripped:
            return index
    return None


def _has_codex_header(text: str) -> bool:
    return any(_CODEX_FILE.match(line) for line in text.splitlines())


def _codex(text: str) -> list[FilePatch]:
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    part: list[str] = []
    hunk: Hunk | None = None
    for line in text.split("\n"):
        match = _CODEX_FILE.match(line)
        if match or line.startswith("*** End Patch"):
            if current is not None:
                current.text = "\n".join(part) + "\n"
            if not match:
                current = None
                continue
            current = FilePatch(match.group(2), match.group(1).lower(), "")
            patches.append(current)
            part, hunk = [line], None
            if current.operation == ADD:
                hunk = Hunk()
                current.hunks.append(hunk)
            continue
        if current is None:
            continue
        part.append(line)
        move = _CODEX_MOVE.match(line)
        if move:
            current.moved_to = move.group(1)
        elif line.startswith("@@") or hunk is None:
            hunk = Hunk()
            current.hunks.append(hunk)
            if not line.startswith("@@"):
                _hunk_line(hunk, line)
        else:
            _hunk_line(hunk, line)
    if current is not None:
        current.text = "\n".join(part) + "\n"
    for patch in patches:
        patch.hunks = [h for h in patch.hunks if h.old or h.new]
    return patches


def _hunk_line(hunk: Hunk, line: str) -> None:
    if line.startswith("+"):
        hunk.new.append(line[1:])
    elif line.startswith("-"):
        hunk.old.append(line[1:])
    elif line.startswith(" "):
        hunk.old.append(line[1:])
        hunk.new.append(line[1:])
    elif line == "*** End of File":
        return
    elif line == "":
        return  # a blank line between hunks (an empty context line would be " ")
    else:
        hunk.old.append(line)
        hunk.new.append(line)


def _unified(text: str) -> list[FilePatch]:
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    old_path = ""
    lines = text.split("\n")
    part_start = 0
    for index, line in enumerate(lines):
        old_match = _UNIFIED_OLD.match(line)
        if old_match and index + 1 < len(lines) and _UNIFIED_NEW.match(lines[index + 1]):
            if current is not None:
                current.text = "\n".join(lines[part_start:index]) + "\n"
            old_path = old_match.group(1)
            current, hunk, part_start = None, None, index
            continue
        new_match = _UNIFIED_NEW.match(line)
        if new_match and current is None and index > 0 and _UNIFIED_OLD.match(lines[index - 1]):
            path = new_match.group(1)
            if path == "/dev/null":
                current = FilePatch(old_path, DELETE, "")
            else:
                current = FilePatch(path, ADD if old_path == "/dev/null" else UPDATE, "")
            patches.append(current)
            continue
        if current is None:
            continue
        if line.startswith("@@"):
            hunk = Hunk()
            current.hunks.append(hunk)
        elif hunk is not None and line[:1] in ("+", "-", " "):
            _hunk_line(hunk, line)
    if current is not None:
        current.text = "\n".join(lines[part_start:]).rstrip("\n") + "\n"
    return patches
