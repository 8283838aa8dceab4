"""What the rollout page's trial tabs read from a trial's files: plain data, no Django.

Harbor's viewer shows a trial's verifier output, artifacts, config, log and
exception in tabs; the rollout page does the same, each tab fetched only when
opened. This module holds the rules that do not need a request or the ORM:
which tabs exist, which stored file is the trial's log and which are the
verifier's streams, whether a file's bytes are text, and the log's search.
Everything here treats the files as the agent's: text, never markup.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

# (slug, label), in the order the page shows them.
TABS: tuple[tuple[str, str], ...] = (
    ("verifier", "Verifier"),
    ("artifacts", "Artifacts"),
    ("config", "Config"),
    ("log", "Log"),
    ("exception", "Exception"),
)
TAB_SLUGS = frozenset(slug for slug, _ in TABS)

# The trial's own log, by preference: Harbor writes trial.log at the trial's root.
LOG_NAMES = ("trial.log", "agent/trial.log", "log.txt", "trial.txt")
# The log tab reads at most the last this many bytes, and shows at most this many lines.
LOG_BYTES = 1024 * 1024
LOG_LINES = 2000
# A text file is shown in a page up to this many bytes; the whole is a download away.
VIEW_BYTES = 512 * 1024
# Bytes looked at to tell text from binary.
SNIFF_BYTES = 8192

VERIFIER_STREAM_NAMES = ("test-stdout.txt", "test-stderr.txt", "stdout.txt", "stderr.txt", "stdout.log", "stderr.log")
REWARD_JSON = "verifier/reward.json"
EXCEPTION_FILE = "exception.txt"  # Harbor's, on failure


def trial_log_path(paths: Iterable[str]) -> str | None:
    """The stored file that is the trial's log: one of LOG_NAMES, else the only root-level `.log` file."""
    listed = set(paths)
    for name in LOG_NAMES:
        if name in listed:
            return name
    root_logs = sorted(path for path in listed if "/" not in path and path.endswith(".log"))
    return root_logs[0] if len(root_logs) == 1 else None


def other_logs(paths: Iterable[str], log: str | None) -> list[str]:
    """Every other `.log` or `.pane` file (the harness's, the sandbox's), for links beside the trial log."""
    return sorted(path for path in paths if path != log and path.rsplit(".", 1)[-1] in ("log", "pane"))


def verifier_streams(paths: Iterable[str]) -> list[str]:
    """The verifier's stdout and stderr files among the stored paths, stdout first."""
    listed = set(paths)
    return [f"verifier/{name}" for name in VERIFIER_STREAM_NAMES if f"verifier/{name}" in listed]


def is_text(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` reads as text: no NUL, and UTF-8 (a character cut at the end allowed)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        # Only a multi-byte character cut by the end of the sample is forgiven.
        return error.start >= len(head) - 3 and error.reason == "unexpected end of data"
    return True


def file_kind(path: str) -> str:
    """A short word for the file list: its suffix, or "file"."""
    suffix = PurePosixPath(path).suffix.lower().lstrip(".")
    return suffix or "file"


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based, within the text read
    text: str


@dataclass(frozen=True)
class LogView:
    """The lines of a log the tab shows: all of them (the last LOG_LINES), or those holding the query."""

    lines: tuple[LogLine, ...]
    total_lines: int  # lines in the text read
    matched: int  # lines holding the query (all lines when there is none)
    query: str
    more: bool  # more lines matched than are shown

    @property
    def shown(self) -> int:
        return len(self.lines)


def filter_log(text: str, query: str = "", max_lines: int = LOG_LINES) -> LogView:
    """The log's lines holding `query` (case-insensitive; the first `max_lines`), or its last `max_lines` without one."""
    all_lines = text.splitlines()
    query = query.strip()
    if not query:
        start = max(len(all_lines) - max_lines, 0)
        shown = tuple(LogLine(number, line) for number, line in enumerate(all_lines[start:], start=start + 1))
        return LogView(shown, len(all_lines), len(all_lines), "", start > 0)
    needle = query.casefold()
    matches = [LogLine(number, line) for number, line in enumerate(all_lines, start=1) if needle in line.casefold()]
    return LogView(tuple(matches[:max_lines]), len(all_lines), len(matches), query, len(matches) > max_lines)


def whole_lines(data: bytes, cut_at_start: bool) -> str:
    """Bytes read from the end of a file as text, without the partial first line when the start was cut."""
    text = data.decode("utf-8", "replace")
    if cut_at_start:
        _, newline, rest = text.partition("\n")
        return rest if newline else text
    return text


@dataclass(frozen=True)
class Revision:
    """One import of a task that the site recorded: when, and which fields changed (none for the first)."""

    imported_at: object  # a datetime; compared only with the run's start
    changed: tuple[str, ...]


def task_toml_note(run_started, revisions: Iterable[Revision]) -> str:
    """What the Config tab says of the task.toml it shows (the current one): whether it is the one the run used.

    The site keeps a task's current files and, per import, which fields
    changed: it can tell that a task did not change after a run, not what an
    earlier task.toml said.
    """
    ordered = sorted(revisions, key=lambda r: r.imported_at)
    if run_started is None or not ordered:
        return "The task's current task.toml: when this run started is not known, so whether it ran with this one is not either."
    if ordered[0].imported_at > run_started:
        return (
            "The task's current task.toml. The task was imported after this run started, so the site cannot tell "
            "whether the run used this version of it."
        )
    later = [r for r in ordered if r.imported_at > run_started and r.changed]
    if not later:
        return "The task.toml this run used: the task has not changed since the run started."
    fields = sorted({name for r in later for name in r.changed})
    return (
        f"The task's current task.toml, not the one this run used: it changed {len(later)} time{'s' if len(later) != 1 else ''} "
        f"since the run started ({', '.join(fields)})."
    )
