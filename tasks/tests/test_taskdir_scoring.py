"""task.toml's [scoring] section (RE-Bench's rule), read and refused with the file named."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasks.taskdir import TaskDirError, parse_task_dir

WINDOW = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench" / "window_sums"


def with_scoring(tmp_path: Path, section: str) -> Path:
    task = tmp_path / "window_sums"
    shutil.copytree(WINDOW, task)
    text = (task / "task.toml").read_text()
    (task / "task.toml").write_text(text.split("[scoring]")[0] + section)
    return task


def test_the_example_declares_rebench_scoring():
    task = parse_task_dir(WINDOW)
    assert (task.scoring_rule, task.transform, task.transform_offset, task.final_only) == ("rebench", "log", 0.0, False)


def test_defaults_without_a_section(tmp_path):
    task = parse_task_dir(with_scoring(tmp_path, ""))
    assert (task.scoring_rule, task.transform, task.transform_offset, task.final_only) == ("", "identity", 0.0, False)


@pytest.mark.parametrize(
    "section, message",
    [
        ('[scoring]\nrule = "fancy"\n', "rule must be one of"),
        ('[scoring]\nrule = "rebench"\ntransform = "sqrt"\n', "transform must be one of"),
        ('[scoring]\nrule = "rebench"\nlog_offset = 1.0\n', "log_offset only applies"),
        ('[scoring]\nrule = "rebench"\ntransform = "log"\nlog_offset = 6.0\n', "must exceed log_offset"),
        ('[scoring]\nrule = "rebench"\nfinal_only = "yes"\n', "final_only must be true or false"),
        ('[scoring]\nrule = "log_stretch"\ntransform = "log"\n', 'belong to rule = "rebench"'),
    ],
)
def test_bad_sections_are_refused_naming_the_file(tmp_path, section, message):
    task = with_scoring(tmp_path, section)
    with pytest.raises(TaskDirError, match=message) as raised:
        parse_task_dir(task)
    assert str(task / "task.toml") in str(raised.value)
