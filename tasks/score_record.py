"""The score log of a best-of-log task, kept where the agent cannot write it.

RE-Bench scores a run by the best entry of its score log, and its score is
not capped. A log the agent writes decides its score: one line with a
runtime of 1e-300 counted 176.99. METR's own infrastructure runs the
scoring tool as another user, which appends the entry; our agent is root in
its sandbox, so nothing inside it is out of its reach.

So an entry only points at the agent's work, never carries a number:

- the task names what its scoring tool scores (`[scoring] snapshot`, paths
  in the sandbox) and its tool appends a line to REQUESTS_FILE at each call
  (any line: only the call counts, never what it says);
- the runner, outside the sandbox, answers each call by copying those paths
  out (a *snapshot*) and records the entry (the host's time, the snapshot)
  in a record of its own, out of the agent's reach;
- the verifier, sealed, gets the record at RECORD_DIR and measures every
  snapshot again: an entry's score is the verifier's measurement of the
  work as it was at that call.

The record's layout, which a task's verifier reads:

    RECORD_DIR/log.jsonl          {"at": <unix time>, "snapshot": "s0001", "sha256": ...} a line per call
    RECORD_DIR/s0001/app/solve.py the snapshot: each path under its sandbox path

Identical snapshots are kept once (a call that changed nothing points at the
earlier copy). Django-free.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# The scoring tool's cue to the runner: it appends a line here at each call.
REQUESTS_FILE = "/logs/agent/score_requests.jsonl"
# Where a verifier finds the runner's record (carried to it as an artifact).
RECORD_DIR = "/logs/scoring"
LOG_NAME = "log.jsonl"

# An agent that calls its scoring tool without end gets this many distinct
# snapshots and this many entries; later calls are not recorded.
MAX_SNAPSHOTS = 100
MAX_ENTRIES = 2000

# Paths a snapshot may not name: the verifier's own, and the logs.
_FORBIDDEN = ("/logs", "/tests", "/solution", "/proc", "/sys", "/dev")


def snapshot_problem(paths: object) -> str:
    """Why `[scoring] snapshot` is not a list of absolute paths in the sandbox ("" when it is)."""
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
        return "[scoring] snapshot must be a list of absolute paths (what the scoring tool scores)"
    for path in paths:
        pure = PurePosixPath(path)
        if not pure.is_absolute() or ".." in pure.parts or str(pure) == "/":
            return f"[scoring] snapshot: {path!r} is not an absolute path below /"
        if any(pure == PurePosixPath(root) or pure.is_relative_to(root) for root in _FORBIDDEN):
            return f"[scoring] snapshot: {path!r} is under {', '.join(_FORBIDDEN)}, which a snapshot may not name"
    return ""


def snapshot_paths(task_toml: dict) -> list[str]:
    """The sandbox paths a task's scoring tool scores (`[scoring] snapshot`), [] when it keeps no score log."""
    scoring = task_toml.get("scoring")
    paths = scoring.get("snapshot") if isinstance(scoring, dict) else None
    if paths is None or snapshot_problem(paths):
        return []
    return [str(PurePosixPath(path)) for path in paths]


def task_snapshot_paths(task_dir: Path) -> list[str]:
    """`snapshot_paths` of a task folder's task.toml ([] when it cannot be read: the import says why)."""
    try:
        data = tomllib.loads((Path(task_dir) / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    return snapshot_paths(data)


def tree_digest(folder: Path) -> str:
    """A digest of a folder's regular files, names and contents (links and the like never appear in a snapshot)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass
class ScoreRecord:
    """The runner's record of the scoring tool's calls: a folder of snapshots and its log."""

    folder: Path
    entries: list[dict] = field(default_factory=list)
    _by_digest: dict[str, str] = field(default_factory=dict)
    refused: int = 0  # calls past the limits

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.write()

    def add(self, at: float, fetched: Path, calls: int = 1) -> str | None:
        """Record `calls` calls answered by the snapshot in `fetched` (moved into the record), taken at `at`.

        Returns the snapshot's name, or None when the limits refused it.
        """
        digest = tree_digest(fetched)
        name = self._by_digest.get(digest)
        if name is None and len(self._by_digest) < MAX_SNAPSHOTS:
            name = f"s{len(self._by_digest) + 1:04d}"
            os.replace(fetched, self.folder / name)
            self._by_digest[digest] = name
        else:
            shutil.rmtree(fetched, ignore_errors=True)
        room = max(MAX_ENTRIES - len(self.entries), 0)
        if name is None or room == 0:
            self.refused += calls
            return None
        for _ in range(min(calls, room)):
            self.entries.append({"at": round(at, 3), "snapshot": name, "sha256": digest})
        self.refused += max(calls - room, 0)
        self.write()
        return name

    def write(self) -> None:
        text = "".join(json.dumps(entry) + "\n" for entry in self.entries)
        temporary = self.folder / f".{LOG_NAME}.tmp"
        temporary.write_text(text)
        os.replace(temporary, self.folder / LOG_NAME)

    def publish(self, target: Path) -> None:
        """Put a copy of the record at `target` (what Harbor collected there from the sandbox is removed first)."""
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.folder, target, ignore=shutil.ignore_patterns(".*"))
