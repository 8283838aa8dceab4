"""The harness tool vocabulary: each harness's rollout analysed alike, and the table's cases."""
from __future__ import annotations

import pytest

from tasks.spec import TaskSpec
from trajectories.analysis import tool_vocabulary as v
from trajectories.analysis.rollout import analyse_rollout
from trajectories.reading.atif import parse_trajectory_data
from trajectories.analysis.tool_vocabulary import message_commands, read_output_content, tool_use

from . import harness_trajectories as h

SPEC = TaskSpec(name="demo", metric="time_ms", direction="lower", baseline_score=20.0, reference_score=5.0,
                category="system_optimization", benchmark_pattern=r"python3 bench\.py")


@pytest.mark.parametrize("harness", sorted(h.HARNESSES))
def test_each_harness_has_its_read_edit_and_benchmark_understood(harness):
    make, expected_kinds = h.HARNESSES[harness]
    steps = parse_trajectory_data(make()).steps
    result = analyse_rollout(steps, SPEC, None)
    kinds = [analysis.kinds for analysis in result.steps[1:]]
    assert kinds == expected_kinds
    edit = result.steps[2]
    # A real diff of the file's content, not a replacement hunk or the command.
    assert f"--- a{h.PATH}\n+++ b{h.PATH}\n" in edit.diff and h.DIFF_LINES in edit.diff, edit.diff
    assert edit.edited_files == [h.PATH]
    bench = result.steps[3]
    assert (bench.metric.status, bench.metric.value, bench.metric.unit) == ("parsed", 8.0, "ms")
    assert result.n_benchmark_calls == 1 and result.best_metric == 8.0
    changed = {change.path: change for change in result.files}
    assert h.DIFF_LINES in changed[h.PATH].diff and changed[h.PATH].start_known and changed[h.PATH].end_known
    assert changed[h.PATH].step_ids == [3]


def test_claude_code_write_multi_edit_grep_and_background_output():
    steps = parse_trajectory_data(h.claude_code_multi_edit_and_write()).steps
    result = analyse_rollout(steps, SPEC, None)
    assert [a.kinds for a in result.steps[1:]] == [["edit"], ["edit"], ["inspect"], ["wait"]]
    assert "+A = 1\n+B = 2\n" in result.steps[1].diff
    assert "-A = 1\n-B = 2\n+A = 10\n+B = 20\n" in result.steps[2].diff
    [change] = result.files
    assert (change.path, change.step_ids, change.start_known) == ("/app/fast.py", [2, 3], False)
    assert "+A = 10\n+B = 20\n" in change.diff


def test_terminus_2_xml_reply_in_the_message():
    steps = parse_trajectory_data(h.terminus_2_xml()).steps
    [analysis] = analyse_rollout(steps, SPEC, None).steps[1:]
    assert analysis.kinds == ["benchmark", "submit"] and analysis.metric.value == 8.0


# -- the table ------------------------------------------------------------------------

USES = [
    # (tool name, arguments) -> role, command, path
    (("Bash", {"command": "ls -la"}), (v.SHELL, "ls -la", "")),
    (("bash", {"cmd": "ls"}), (v.SHELL, "ls", "")),
    (("bash_command", {"keystrokes": "ls\n", "duration": 1}), (v.SHELL, "ls\n", "")),
    (("shell", {"command": ["bash", "-lc", "make -j4"]}), (v.SHELL, "make -j4", "")),
    (("shell", {"command": ["ls", "-l"]}), (v.SHELL, "ls -l", "")),
    (("exec_command", {"cmd": "pytest"}), (v.SHELL, "pytest", "")),
    (("execute_bash", {"command": "pwd"}), (v.SHELL, "pwd", "")),
    (("run_shell_command", {"command": "pwd"}), (v.SHELL, "pwd", "")),
    (("Read", {"file_path": "/a.py"}), (v.READ, None, "/a.py")),
    (("read_file", {"absolute_path": "/a.py"}), (v.READ, None, "/a.py")),
    (("Grep", {"pattern": "x", "path": "/app"}), (v.SEARCH, None, "/app")),
    (("Edit", {"file_path": "/a.py", "old_string": "a", "new_string": "b"}), (v.REPLACE, None, "/a.py")),
    (("edit", {"file_path": "/a.py", "old_string": "a", "new_string": "b"}), (v.REPLACE, None, "/a.py")),
    (("replace", {"file_path": "/a.py", "old_string": "a", "new_string": "b"}), (v.REPLACE, None, "/a.py")),
    (("MultiEdit", {"file_path": "/a.py", "edits": []}), (v.MULTI_REPLACE, None, "/a.py")),
    (("Write", {"file_path": "/a.py", "content": "x"}), (v.WRITE, None, "/a.py")),
    (("write_file", {"file_path": "/a.py", "content": "x"}), (v.WRITE, None, "/a.py")),
    (("str_replace_editor", {"command": "view", "path": "/a.py"}), (v.EDITOR, None, "/a.py")),
    (("text_editor", {"command": "create", "path": "/a.py", "file_text": "x"}), (v.EDITOR, None, "/a.py")),
    (("apply_patch", {"input": "*** Begin Patch"}), (v.PATCH, None, "")),
    (("python", {"code": "print(1)"}), (v.PYTHON, "python3 - <<'PYCODE'\nprint(1)\nPYCODE\n", "")),
    (("mark_task_complete", {}), (v.SUBMIT, None, "")),
    (("finish", {"message": "done"}), (v.SUBMIT, None, "")),
    (("submit", {"answer": "42"}), (v.SUBMIT, None, "")),
    (("BashOutput", {"bash_id": "1"}), (v.WAIT, None, "")),
    (("TodoWrite", {"todos": []}), (v.OTHER, None, "")),
    # Names we do not know: by their arguments, as before.
    (("my_runner", {"command": "make"}), (v.SHELL, "make", "")),
    (("my_editor", {"command": "view", "path": "/a.py"}), (v.EDITOR, None, "/a.py")),
    (("EXECUTE_BASH", {"command": "ls"}), (v.SHELL, "ls", "")),
    (("my_tool", {"query": "x"}), (v.OTHER, None, "")),
]


@pytest.mark.parametrize(("call", "expected"), USES, ids=[f"{call[0]}-{i}" for i, (call, _) in enumerate(USES)])
def test_tool_use_table(call, expected):
    use = tool_use(*call)
    assert (use.role, use.command, use.path) == expected


def test_every_role_in_the_table_is_known():
    assert {tool.role for tool in v.TOOLS.values()} <= set(v.ROLES)


MESSAGES = [
    ("THOUGHT: look\n\n```bash\nls -la\n```", [("ls -la\n", False, False)]),
    ("```sh\nmake\n```", [("make\n", False, False)]),
    # mini-swe-agent runs exactly one block; with several it runs none.
    ("```bash\nmake\n```\nand\n```bash\n./run\n```", []),
    ("```\nmake\n```", []),
    ('{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 0.1}], "task_complete": false}',
     [("ls\n", True, False)]),
    ('```json\n{"commands": [], "task_complete": true}\n```', [("", True, True)]),
    ("<response><commands><keystrokes duration=\"1\">a &lt; b\n</keystrokes></commands></response>", [("a < b\n", True, False)]),
    ("Just words, no command.", []),
    ("```python\nprint(1)\n```", []),
]


@pytest.mark.parametrize(("message", "expected"), MESSAGES)
def test_message_commands(message, expected):
    assert [(c.text, c.keystrokes, c.submit) for c in message_commands(message)] == expected


READS = [
    ("     1→a\n     2→b\n", "a\nb\n"),
    ("     1\ta\n     2\t\n     3\tb", "a\n\nb\n"),
    ("Here's the result of running `cat -n` on /x:\n     1\ta\n", "a\n"),
    ("     1→a\n\n<system-reminder>\nnote\n</system-reminder>\n", "a\n"),
    ("plain\ntext\n", "plain\ntext\n"),
    ("     1→a\nwrapped line\n", None),
    ("", None),
]


@pytest.mark.parametrize(("output", "content"), READS)
def test_read_output_content(output, content):
    assert read_output_content(output) == content


def test_claude_code_edit_with_replace_all_replaces_every_occurrence():
    from trajectories.analysis.edits import FileTracker, tool_writes
    from trajectories.reading.parsed import ParsedToolCall

    tracker = FileTracker()
    tracker.seed("/a.py", "x = 1\ny = x + x\n")
    call = ParsedToolCall("t", "Edit", {"file_path": "/a.py", "old_string": "x", "new_string": "z", "replace_all": True})
    [write] = tool_writes(call)
    tracker.apply(write)
    assert tracker.known["/a.py"] == "z = 1\ny = z + z\n"
    call = ParsedToolCall("t", "Edit", {"file_path": "/a.py", "old_string": "z", "new_string": "w"})
    [write] = tool_writes(call)
    tracker.apply(write)
    assert tracker.known["/a.py"] == "w = 1\ny = z + z\n"


@pytest.mark.parametrize(
    "args, names, expected",
    [
        ({"path": "/a.py"}, ("path", "file_path"), "/a.py"),
        ({"file_path": "/b.py"}, ("path", "file_path"), "/b.py"),
        ({"path": "/a.py", "file_path": "/b.py"}, ("file_path", "path"), "/b.py"),  # the table's order decides
        ({"path": None, "file_path": "/b.py"}, ("path", "file_path"), "/b.py"),  # no text: the next name
        ({"path": 3}, ("path",), None),
        ({"path": ""}, ("path",), ""),  # empty text is text
        ({}, ("path",), None),
        ({"path": "/a.py"}, (), None),
    ],
)
def test_first_string_argument(args, names, expected):
    assert v._first_string(args, names) == expected


@pytest.mark.parametrize(
    "value, expected",
    [(3, 3), ("3", 3), (" 7 ", 7), (3.0, 3), (-1, -1), (None, None), ("three", None), ("3.5", None), ([3], None),
     (True, None), (False, None)],
)
def test_int_argument(value, expected):
    assert v._int_argument(value) == expected
