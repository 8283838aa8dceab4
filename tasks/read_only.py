"""Which workspace files a task declares read-only, and which of them it pins itself. Django-free.

AutoLab instructions say which files the agent may not touch, in a file
table ("| `main.py` | Local verifier (read-only) |", "| Model code
(read-only) | `/app/model/` |") or in a rule ("Do not modify `Makefile`",
"Do NOT modify `/app/evaluate.py`"). Some tasks also pin such a file at
build time under /orig (`RUN sha256sum /app/Makefile > /orig/...`) and
their verifier refuses a changed one; others (discover_sorting's main.py)
run the file the agent was told not to change and believe what it prints.

Sealed grading (tasks.sealing) uses both: the declared files a task does
not pin itself are put back from the task's own image after the workspace
is carried to the verifier, so the verifier runs them as published; a
pinned file stays as the agent left it, for the task's own check to judge,
as it does in Harbor's own run.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

_INLINE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
# A file or folder named alone: `main.py`, `/app/model/`, `/app/data/*.npz`, `Cargo.toml`, `Makefile`;
# not a function or class named in the same row (`find_bit_flips`, `MiniResNet`).
_PATH = re.compile(r"^/?(?:[\w.*-]+/)*[\w.*-]+/?$")
_NAMED_FILE = re.compile(r"[./]|^(?:Makefile|makefile|GNUmakefile|Dockerfile)$")
_READ_ONLY = re.compile(r"read[- ]?only", re.I)
_EDITABLE = re.compile(r"\bedit", re.I)
# "Do not modify `X`", "Do NOT modify `/app/evaluate.py`, `/app/eval_prompts.txt`, or any file under ...".
_DO_NOT = re.compile(r"\bdo\s+not\s+(?:modify|change|edit|touch)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z`])")


def declared_read_only(instruction: str) -> list[str]:
    """The paths an instruction declares read-only, as written, in order.

    A table row counts when one of its cells says read-only and none tells
    the agent to edit (a row like "| `solve.py` | **Edit** |" names the
    solution). A sentence counts when it says "do not modify" (or change,
    edit, touch); of a line with several sentences ("Edit `/app/src/solve.rs`
    only. Do not modify `src/main.rs`"), only that sentence. Code blocks are
    examples, never declarations.
    """
    if not instruction:
        return []
    found: list[str] = []

    def add(text: str) -> None:
        for match in _INLINE.finditer(text):
            path = match.group(1).strip()
            if _PATH.match(path) and _NAMED_FILE.search(path) and not path.startswith("-") and path not in found:
                found.append(path)

    fenced = [(match.start(), match.end()) for match in _FENCE.finditer(instruction)]
    offset = 0
    for line in instruction.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if any(begin <= start < end for begin, end in fenced):
            continue
        if line.lstrip().startswith("|"):
            if _READ_ONLY.search(line) and not _EDITABLE.search(line):
                add(line)
            continue
        for sentence in _SENTENCE_END.split(line):
            if _DO_NOT.search(sentence):
                add(sentence)
    return found


def in_workspace(path: str, workspace: str) -> str | None:
    """`path` relative to `workspace` ("main.py" for `/app/main.py` or `main.py`); None outside it, or for the workspace."""
    root = PurePosixPath(workspace)
    candidate = PurePosixPath(path.rstrip("/") or "/")
    if not candidate.is_absolute():
        candidate = root / candidate
    if candidate == root or not candidate.is_relative_to(root) or ".." in candidate.parts:
        return None
    return candidate.relative_to(root).as_posix()


def pinned_under_orig(run_commands: list[tuple[str, str]], workspace: str) -> set[str]:
    """Workspace files (relative) that a build step pins under /orig: named in a RUN that writes to /orig.

    `run_commands`: (command, working directory) of each RUN step. A file
    counts when the step names it by its absolute path, or by its relative
    one from the workspace (`cd /app && sha256sum Makefile > /orig/...` is
    not followed; AutoLab's tasks name the absolute path).
    """
    pinned: set[str] = set()
    for command, workdir in run_commands:
        if "/orig" not in command:
            continue
        for token in re.findall(r"[\w./*-]+", command):
            if token.startswith("/"):
                relative = in_workspace(token, workspace)
            elif PurePosixPath(workdir) == PurePosixPath(workspace):
                relative = in_workspace(token, workspace) if "." in token else None
            else:
                relative = None
            if relative:
                pinned.add(relative)
    return pinned


def restored_from_image(instruction: str, run_commands: list[tuple[str, str]], workspace: str) -> list[str]:
    """The workspace paths a sealed verifier takes from the task's image: declared read-only, not pinned by the task.

    Relative to the workspace ("main.py", "data/*.npz", "model"), globs as
    the instruction wrote them; only the characters of _PATH, so they are
    safe in a shell word.
    """
    pinned = pinned_under_orig(run_commands, workspace)
    restored: list[str] = []
    for path in declared_read_only(instruction):
        relative = in_workspace(path, workspace)
        if relative and relative not in pinned and relative not in restored:
            restored.append(relative)
    return restored
