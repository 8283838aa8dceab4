"""trajectories.reading.trial_tabs: which file is the log, text or binary, the log's search, the task.toml note."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from trajectories.reading.trial_tabs import (
    Revision, filter_log, is_text, other_logs, task_toml_note, trial_log_path, verifier_streams, whole_lines,
)

# (stored paths, the trial's log)
LOG_CASES = [
    ([], None),
    (["config.json", "result.json"], None),
    (["trial.log", "agent/trial.log"], "trial.log"),
    (["agent/trial.log", "agent/terminus_2.pane"], "agent/trial.log"),
    (["run.log", "result.json"], "run.log"),  # the only root-level .log
    (["a.log", "b.log"], None),  # two candidates: neither is guessed
    (["agent/setup.log"], None),  # a harness's log is not the trial's
]


@pytest.mark.parametrize(("paths", "log"), LOG_CASES)
def test_trial_log_path(paths, log):
    assert trial_log_path(paths) == log


def test_other_logs_and_verifier_streams():
    paths = ["trial.log", "agent/terminus_2.pane", "agent/setup/stdout.log", "verifier/test-stderr.txt",
             "verifier/test-stdout.txt", "verifier/reward.json", "stdout.txt"]
    assert other_logs(paths, "trial.log") == ["agent/setup/stdout.log", "agent/terminus_2.pane"]
    assert verifier_streams(paths) == ["verifier/test-stdout.txt", "verifier/test-stderr.txt"]


# (first bytes, reads as text)
TEXT_CASES = [
    (b"", True),
    (b"plain ascii\n", True),
    ("déjà vu ✓".encode(), True),
    ("✓".encode()[:2], True),  # a character cut by the end of the sample
    (b"\x00\x01\x02", False),
    (b"text then \x00 a NUL", False),
    (b"\xff\xfe\xfd latin junk", False),
    (b"\x89PNG\r\n\x1a\n", False),
]


@pytest.mark.parametrize(("head", "text"), TEXT_CASES)
def test_is_text(head, text):
    assert is_text(head) is text


def test_the_log_without_a_query_is_its_last_lines():
    text = "\n".join(f"line {n}" for n in range(1, 11))
    view = filter_log(text, "", max_lines=3)
    assert [(line.number, line.text) for line in view.lines] == [(8, "line 8"), (9, "line 9"), (10, "line 10")]
    assert (view.total_lines, view.matched, view.more) == (10, 10, True)
    assert not filter_log(text, "").more


def test_the_log_search_is_case_insensitive_and_keeps_line_numbers():
    text = "Starting\nERROR: disk full\nretrying\nerror again\nDone"
    view = filter_log(text, "  error ")
    assert [(line.number, line.text) for line in view.lines] == [(2, "ERROR: disk full"), (4, "error again")]
    assert (view.query, view.matched, view.total_lines, view.more) == ("error", 2, 5, False)
    capped = filter_log("x\n" * 10, "x", max_lines=4)
    assert capped.shown == 4 and capped.matched == 10 and capped.more
    assert filter_log(text, "absent").lines == ()


def test_whole_lines_drops_the_partial_first_line_of_a_tail():
    assert whole_lines(b"tial line\nwhole\n", cut_at_start=True) == "whole\n"
    assert whole_lines(b"first\nsecond", cut_at_start=False) == "first\nsecond"
    assert whole_lines(b"no newline at all", cut_at_start=True) == "no newline at all"


RUN = datetime(2026, 4, 26, 12, 0)


# (revisions, what the note says)
NOTE_CASES = [
    ([], "not known"),
    ([Revision(RUN - timedelta(days=3), ())], "The task.toml this run used"),
    ([Revision(RUN - timedelta(days=3), ()), Revision(RUN + timedelta(days=1), ())], "The task.toml this run used"),
    ([Revision(RUN + timedelta(days=1), ())], "cannot tell"),
    ([Revision(RUN - timedelta(days=3), ()), Revision(RUN + timedelta(days=1), ("budget_sec", "metric")),
      Revision(RUN + timedelta(days=2), ("metric",))], "changed 2 times since the run started (budget_sec, metric)"),
    ([Revision(RUN - timedelta(days=3), ()), Revision(RUN - timedelta(days=1), ("metric",))], "The task.toml this run used"),
]


@pytest.mark.parametrize(("revisions", "says"), NOTE_CASES)
def test_task_toml_note(revisions, says):
    assert says in task_toml_note(RUN, revisions)


def test_task_toml_note_without_a_start():
    assert "not known" in task_toml_note(None, [Revision(RUN, ())])
