"""One way to write a length of time (autolab_site.durations), and no module with a copy of its own.

The rollout page once said "1h 02m", the campaign page "1 h 02 min" and
import_trials "1 h 2 min" for the same hour: three writers of one rule.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autolab_site.durations import format_duration
from tests.test_import_graph import project_modules


@pytest.mark.parametrize(
    "seconds, expected",
    [
        (None, "—"), (0, "0.0s"), (12.34, "12.3s"), (59.96, "60.0s"), (60, "1m 00s"), (65, "1m 05s"), (3599.4, "59m 59s"),
        (3599.6, "1h 00m"), (3600, "1h 00m"), (3725, "1h 02m"), (14400, "4h 00m"), (45 * 3600, "45h 00m"),
    ],
)
def test_format_duration(seconds, expected):
    assert format_duration(seconds) == expected


def test_a_missing_length_is_what_the_caller_says():
    assert format_duration(None, missing="") == "" and format_duration(None) == "—"


# Functions that write a duration under another name would be the next drift.
DURATION_WRITER = re.compile(r"^_?(format_)?(duration|elapsed_text|seconds_text)$")
OWNER = Path("autolab_site/durations.py")


def duration_writers(path: Path) -> list[str]:
    return [
        f"{node.name} (line {node.lineno})"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and DURATION_WRITER.match(node.name)
    ]


def test_no_other_module_writes_durations():
    found = {
        name: defs for name, path in project_modules().items()
        if not path.as_posix().endswith(OWNER.as_posix()) and (defs := duration_writers(path))
    }
    assert found == {}, f"use autolab_site.durations.format_duration: {found}"


def test_the_check_sees_a_copy(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def _duration(seconds):\n    return f'{seconds} s'\n")
    assert duration_writers(path) == ["_duration (line 1)"]
