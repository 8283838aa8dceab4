"""Edit reconstruction: which files a call writes and the diffs, by table."""
from __future__ import annotations

import pytest

from trajectories.analysis.edits import FileTracker, cat_outputs, prompt_cwd, python_writes, shell_writes, tool_writes
from trajectories.reading.parsed import ParsedToolCall
from trajectories.analysis.sed import apply_sed
from trajectories.analysis.shell import split_commands

from .real_trials import OPUS, load_steps

# /app/dataset.toml as the opus4.6 trajectory's `cat` showed it (step 2), and
# the heredoc it then wrote (step 9), verbatim.
DATASET_BEFORE = (
    '[general]\nresolution = 1024\ncaption_extension = ".txt"\nbatch_size = 2\nenable_bucket = true\n\n'
    '[[datasets]]\nimage_directory = "/data/concept"\nnum_repeats = 10\n'
)
DATASET_HEREDOC = (
    "cat > /app/dataset.toml << 'EOF'\n[general]\nresolution = 1024\ncaption_extension = \".txt\"\n"
    "batch_size = 1\nenable_bucket = true\n\n[[datasets]]\nimage_directory = \"/data/concept\"\nnum_repeats = 10\nEOF\n"
)
DATASET_DIFF = (
    "--- a/app/dataset.toml\n+++ b/app/dataset.toml\n@@ -1,7 +1,7 @@\n [general]\n resolution = 1024\n"
    " caption_extension = \".txt\"\n-batch_size = 2\n+batch_size = 1\n enable_bucket = true\n \n [[datasets]]\n"
)
# Lines of /app/train.sh around what grok4.20's sed commands touched.
TRAIN_SH = (
    "TEXT_ENC=/models/text_encoder\n"
    "    --learning_rate 5e-5 \\\n"
    "    --max_train_epochs 2 \\\n"
    "    --cache_latents \\\n"
    "    --seed 42 \\\n"
)


def run(tracker: FileTracker, keystrokes: str) -> list[tuple[str, str]]:
    return list(tracker.apply_commands(split_commands(keystrokes)))


def test_real_heredoc_against_content_seen_by_cat():
    tracker = FileTracker()
    tracker.seed("/app/dataset.toml", DATASET_BEFORE)
    assert run(tracker, DATASET_HEREDOC) == [("/app/dataset.toml", DATASET_DIFF)]
    assert "batch_size = 1\n" in tracker.known["/app/dataset.toml"]


def test_heredoc_to_an_unknown_file_is_shown_as_new_with_a_note():
    [(path, diff)] = run(FileTracker(), DATASET_HEREDOC)
    assert path == "/app/dataset.toml"
    assert diff.startswith("# /app/dataset.toml: previous content unknown; shown as a new file\n--- /dev/null\n+++ b/app/dataset.toml\n")
    assert "+batch_size = 1\n" in diff
    assert [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")] == []


SED_CASES = [
    # Real grok4.20 commands (step 6, 7, 10) on known content.
    (
        "sed -i 's|TEXT_ENC=/models/text_encoder|TEXT_ENC=/models/text_encoder/model-00001-of-00004.safetensors|' /app/train.sh\n",
        ["-TEXT_ENC=/models/text_encoder\n", "+TEXT_ENC=/models/text_encoder/model-00001-of-00004.safetensors\n"],
    ),
    ("sed -i '/--cache_latents/d' /app/train.sh\n", ["-    --cache_latents \\\n"]),
    ("sed -i 's/max_train_epochs 2/max_train_epochs 8/' /app/train.sh\n", ["-    --max_train_epochs 2 \\\n", "+    --max_train_epochs 8 \\\n"]),
    # GNU sed keeps the blanks after `a\` and drops the lone trailing backslash.
    ("sed -i '/--max_train_epochs 2/a \\    --max_train_steps 40 \\' /app/train.sh\n", ["+    --max_train_steps 40 \n"]),
    ("sed -i -e 's/5e-5/1e-4/' -e 's/42/7/' /app/train.sh\n", ["+    --learning_rate 1e-4 \\\n", "+    --seed 7 \\\n"]),
    ("sed -i -E 's/--seed ([0-9]+)/--seed \\1\\1/' /app/train.sh\n", ["+    --seed 4242 \\\n"]),
]


@pytest.mark.parametrize("keys,expected_lines", SED_CASES, ids=[case[0][:45] for case in SED_CASES])
def test_sed_replayed_on_known_content(keys, expected_lines):
    tracker = FileTracker()
    tracker.seed("/app/train.sh", TRAIN_SH)
    [(path, diff)] = run(tracker, keys)
    assert path == "/app/train.sh"
    assert diff.startswith("--- a/app/train.sh\n+++ b/app/train.sh\n@@ ")
    lines = diff.splitlines(keepends=True)
    for line in expected_lines:
        assert line in lines


def test_sed_on_unknown_content_is_a_pseudo_diff_and_forgets_nothing_it_did_not_know():
    tracker = FileTracker()
    [(path, diff)] = run(tracker, "sed -i '/--cache_latents/d' /app/train.sh\n")
    assert diff == (
        "--- a/app/train.sh\n+++ b/app/train.sh\n"
        "# sed -i '/--cache_latents/d' /app/train.sh on /app/train.sh (content before the edit unknown)\n"
    )
    assert tracker.known["/app/train.sh"] is None


def test_sed_script_we_cannot_replay_makes_the_content_unknown():
    tracker = FileTracker()
    tracker.seed("/app/train.sh", TRAIN_SH)
    [(_, diff)] = run(tracker, "sed -i 'y/abc/xyz/' /app/train.sh\n")
    assert "(script not replayed)" in diff
    assert tracker.known["/app/train.sh"] is None
    # The next full write is then shown as a new file.
    [(_, diff)] = run(tracker, "echo 'x' > /app/train.sh\n")
    assert "previous content unknown" in diff


APPLY_SED = [
    ("a b a\n", ["s/a/X/"], "X b a\n"),
    ("a b a\n", ["s/a/X/g"], "X b X\n"),
    ("a b a\n", ["s/a/X/2"], "a b X\n"),
    ("Key=1\n", ["s/key/K/I"], "K=1\n"),
    ("f(x, y)\n", [r"s/f(\(.*\))/g(\1)/"], "g(x, y)\n"),
    ("f(x, y)\n", [r"s/(x, y)/[&]/"], "f[(x, y)]\n"),
    ("one\ntwo\nthree\n", ["2d"], "one\nthree\n"),
    ("one\ntwo\nthree\n", ["$d"], "one\ntwo\n"),
    ("one\ntwo\nthree\n", ["1,2d"], "three\n"),
    ("one\ntwo\nthree\n", ["/two/,/three/s/^/# /"], "one\n# two\n# three\n"),
    ("one\ntwo\n", ["/one/i zero"], "zero\none\ntwo\n"),
    ("one\ntwo\n", ["/one/c uno"], "uno\ntwo\n"),
    ("a.b\n", [r"s/a\.b/ok/"], "ok\n"),
    ("path/to\n", [r"s/path\/to/x/"], "x\n"),
    ("  x\n", ["s/^[[:space:]]*//"], "x\n"),
    ("no newline", ["s/no/a/"], "a newline"),
]


@pytest.mark.parametrize("content,scripts,expected", APPLY_SED)
def test_apply_sed(content, scripts, expected):
    assert apply_sed(content, scripts) == expected


@pytest.mark.parametrize("script", ["y/abc/xyz/", "s/a/\\U&/", "1!G;h;$!d", "s/a/b/w out.txt", "s/unterminated"])
def test_apply_sed_refuses_what_it_cannot_replay(script):
    assert apply_sed("abc\n", [script]) is None


TOOL_EDITS = [
    # (known content, tool call arguments, expected new content or None when unknown after)
    (None, {"command": "create", "path": "/app/solve.py", "file_text": "x = 1\n"}, "x = 1\n"),
    ("x = 1\ny = 2\n", {"command": "str_replace", "path": "/app/solve.py", "old_str": "y = 2", "new_str": "y = 3"}, "x = 1\ny = 3\n"),
    ("x = 1\ny = 2\n", {"command": "insert", "path": "/app/solve.py", "insert_line": 1, "new_str": "z = 0"}, "x = 1\nz = 0\ny = 2\n"),
]


@pytest.mark.parametrize("known,arguments,expected", TOOL_EDITS)
def test_editor_tool_edits(known, arguments, expected):
    tracker = FileTracker()
    if known is not None:
        tracker.seed("/app/solve.py", known)
    [write] = tool_writes(ParsedToolCall("c", "str_replace_based_edit_tool", arguments))
    path, diff = tracker.apply(write)
    assert path == "/app/solve.py"
    assert tracker.known[path] == expected
    assert "+++ b/app/solve.py" in diff


def test_str_replace_on_unknown_content_shows_the_replacement_alone():
    call = ParsedToolCall("c", "edit", {"path": "/app/solve.py", "old_str": "x = 1\n", "new_str": "x = 2\n"})
    [write] = tool_writes(call)
    path, diff = FileTracker().apply(write)
    assert diff == (
        "# /app/solve.py: replacement shown without surrounding content (file content unknown)\n"
        "--- a/app/solve.py\n+++ b/app/solve.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    )


def test_write_file_and_apply_patch_tools():
    [write] = tool_writes(ParsedToolCall("c", "write_file", {"path": "/app/a.py", "content": "print(1)\n"}))
    assert (write.mode, write.content) == ("write", "print(1)\n")
    patch = "*** Begin Patch\n*** Update File: /app/solve.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
    [write] = tool_writes(ParsedToolCall("c", "apply_patch", {"input": patch}))
    assert write.path == "/app/solve.py"
    # Content unknown: this file's part of the patch is shown as written.
    assert FileTracker().apply(write) == ("/app/solve.py", "*** Update File: /app/solve.py\n@@\n-x = 1\n+x = 2\n")
    # Content known: replayed, a real diff.
    tracker = FileTracker()
    tracker.seed("/app/solve.py", "import os\nx = 1\n")
    assert tracker.apply(write) == ("/app/solve.py", "--- a/app/solve.py\n+++ b/app/solve.py\n@@ -1,2 +1,2 @@\n import os\n-x = 1\n+x = 2\n")
    assert tracker.known["/app/solve.py"] == "import os\nx = 2\n"
    assert tool_writes(ParsedToolCall("c", "bash", {"command": "ls"})) is None


PATCHES = [
    # Codex: an added file is a full write, a deleted one unknown, an updated one its own part.
    (
        "*** Begin Patch\n*** Add File: /app/new.py\n+a\n+b\n*** Update File: /app/old.py\n@@ def f():\n-    x\n+    y\n"
        "*** Delete File: /app/gone.py\n*** End Patch\n",
        [("/app/new.py", "write", "a\nb\n"), ("/app/old.py", "patch", "*** Update File: /app/old.py\n@@ def f():\n-    x\n+    y\n"),
         ("/app/gone.py", "unknown", None)],
    ),
    # Unified diff of two files.
    (
        "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-1\n+2\n--- a/y.py\n+++ b/y.py\n@@ -3 +3 @@\n-3\n+4\n",
        [("x.py", "patch", "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-1\n+2\n"), ("y.py", "patch", "--- a/y.py\n+++ b/y.py\n@@ -3 +3 @@\n-3\n+4\n")],
    ),
    ("not a patch", [("", "patch", "not a patch")]),
]


@pytest.mark.parametrize(("patch", "expected"), PATCHES)
def test_patch_writes_per_file(patch, expected):
    assert [(w.path, w.mode, w.content) for w in tool_writes(ParsedToolCall("c", "apply_patch", {"input": patch}))] == expected


def test_unified_patch_is_replayed_ignoring_its_line_numbers():
    tracker = FileTracker()
    tracker.seed("x.py", "a\nb\nc\n")
    [write] = tool_writes(ParsedToolCall("c", "apply_patch", {"patch": "--- a/x.py\n+++ b/x.py\n@@ -9,2 +9,2 @@\n b\n-c\n+C\n"}))
    path, diff = tracker.apply(write)
    assert tracker.known["x.py"] == "a\nb\nC\n" and "-c\n+C\n" in diff
    # A hunk that does not fit leaves the content unknown, and shows the part.
    [write] = tool_writes(ParsedToolCall("c", "apply_patch", {"patch": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-zzz\n+y\n"}))
    assert tracker.apply(write)[1].startswith("--- a/x.py") and tracker.known["x.py"] is None


PYTHON_WRITES = [
    ("open('/app/solve.py', 'w').write('x = 1\\n')", [("/app/solve.py", "write", "x = 1\n")]),
    ("with open('/app/cfg.toml', 'w') as f:\n    f.write('a = 1\\n')\n    f.write('b = 2\\n')\n", [("/app/cfg.toml", "write", "a = 1\nb = 2\n")]),
    ("from pathlib import Path\nPath('/app/x.sh').write_text('echo hi\\n')\n", [("/app/x.sh", "write", "echo hi\n")]),
    ("s = open('/app/x.py').read()\nopen('/app/x.py', 'w').write(s.replace('a', 'b'))\n", [("/app/x.py", "unknown", None)]),
    ("import json\njson.dump({}, open('/app/r.json', 'w'))\n", [("/app/r.json", "unknown", None)]),
    ("print(open('/app/x.py').read())", []),
    ("import sys\nopen(sys.argv[1], 'w').write('x')\n", [("", "unknown", None)]),
    ("from pathlib import Path\np = Path('/app') / 'x.py'\np.write_text('y')\n", [("", "unknown", None)]),
    ("this is not python (", []),
]


@pytest.mark.parametrize("code,expected", PYTHON_WRITES)
def test_python_writes(code, expected):
    assert [(write.path, write.mode, write.content) for write in python_writes(code)] == expected


SHELL_WRITES = [
    ("echo 'CFLAGS=-O3' >> /app/config.mk", [("/app/config.mk", "append", "CFLAGS=-O3\n")]),
    ("printf 'a\\nb\\n' > /app/x.txt", [("/app/x.txt", "write", "a\nb\n")]),
    ("cat <<'EOF' > /app/solve.c\nint x;\nEOF", [("/app/solve.c", "write", "int x;\n")]),
    ("tee -a /app/x.py <<EOF\ny = 2\nEOF", [("/app/x.py", "append", "y = 2\n")]),
    ("cp /tmp/best.c /app/solve.c", [("/app/solve.c", "copy", None)]),
    ("cp -r /app/out /tmp/", []),
    ("python3 /app/evaluate.py 2>&1 | tee /app/eval.log", []),
    ("python3 gen.py > /app/solve.c", [("/app/solve.c", "unknown", None)]),
    ("python3 run.py > /tmp/out.txt 2>&1", []),
    ("cat /app/solve.c > /dev/null", []),
    ("cat /tmp/head.c /tmp/body.c > /app/solve.c", [("/app/solve.c", "unknown", None)]),
    ("perl -pi -e 's/a/b/' /app/solve.c", [("/app/solve.c", "unknown", None)]),
]


@pytest.mark.parametrize("keys,expected", SHELL_WRITES)
def test_shell_writes(keys, expected):
    writes = [write for command in split_commands(keys) for write in shell_writes(command)]
    assert [(write.path, write.mode, write.content) for write in writes] == expected


def test_a_computed_file_name_is_an_edit_shown_as_its_command():
    tracker = FileTracker()
    [(path, diff)] = run(tracker, "python3 -c \"import sys; open(sys.argv[1], 'w').write('x')\" /app/a.py\n")
    assert path == ""
    assert diff.startswith("# python3 -c") and "name is computed" in diff
    assert tracker.known == {}


def test_copy_takes_the_known_content_of_its_source():
    tracker = FileTracker()
    tracker.seed("/tmp/best.c", "int best;\n")
    tracker.seed("/app/solve.c", "int slow;\n")
    [(path, diff)] = run(tracker, "cp /tmp/best.c /app/solve.c\n")
    assert "-int slow;\n+int best;\n" in diff


def test_relative_paths_follow_cd():
    tracker = FileTracker()
    [(path, _)] = run(tracker, "cd /app && cat > solve.c <<'EOF'\nint x;\nEOF\n")
    assert path == "/app/solve.c"


TERMINAL = (
    "New Terminal Output:\n\nroot@977371b89e17:/app# cat /data/concept/000.txt\n"
    "illustration in naruto styleroot@977371b89e17:/app# cat dataset.toml\n"
    "[general]\nbatch_size = 2\nroot@977371b89e17:/app# cat /app/evaluate.py\n#!/usr/bin/env python3\n"
    "[... output limited to 10000 bytes; 70 interior bytes omitted ...]\nroot@977371b89e17:/app# "
)


def test_cat_outputs_from_terminal_text():
    assert cat_outputs(TERMINAL) == [
        ("/data/concept/000.txt", "illustration in naruto style"),  # prompt glued to a file without final newline
        ("/app/dataset.toml", "[general]\nbatch_size = 2\n"),  # relative to the prompt's directory
    ]  # the truncated /app/evaluate.py output is not used


def test_cat_in_the_real_opus_observation_seeds_what_step_9_diffs_against(shared_trials_dir):
    steps = load_steps(shared_trials_dir / OPUS)
    seen = dict(cat_outputs(steps[1].observations[0].content))
    assert seen["/app/dataset.toml"] == DATASET_BEFORE
    assert seen["/app/train.sh"].startswith("#!/bin/bash\nset -euo pipefail\n")
    assert "/app/evaluate.py" not in seen  # cut by the harness
    heredoc = steps[8].tool_calls[0].arguments["keystrokes"]
    assert heredoc == DATASET_HEREDOC


# The scanner's shortcuts (plain lines, heredoc ends found by search) give what the full scan gives.
def test_plain_lines_keep_their_offsets_and_words():
    text = "  ls -la /app\n\ncat  /app/x.py\t\nnvidia-smi"
    commands = split_commands(text)
    assert [(c.text, c.start, c.stages, c.redirects) for c in commands] == [
        ("ls -la /app", 2, [["ls", "-la", "/app"]], []),
        ("cat  /app/x.py", 15, [["cat", "/app/x.py"]], []),
        ("nvidia-smi", 31, [["nvidia-smi"]], []),
    ]
    assert all(text[c.start : c.start + len(c.text)] == c.text for c in commands)


@pytest.mark.parametrize(
    "keys,body,after",
    [
        # `<<-` strips leading tabs from the body and from the delimiter line; a CR after it is allowed.
        ("cat <<-EOF > /app/x.py\n\tx = 1\n\t\ty = 2\n\tEOF\r\necho done\n", "x = 1\ny = 2\n", ["echo done"]),
        # The delimiter inside a line, or followed by more text, does not end the body.
        ("cat > /app/x.py <<'EOF'\nprint('EOF')\nEOF2\n EOF\nEOF\nls\n", "print('EOF')\nEOF2\n EOF\n", ["ls"]),
        # Without a delimiter line the body runs to the end.
        ("cat > /app/x.py <<EOF\na\nb", "a\nb\n", []),
    ],
)
def test_heredoc_bodies_end_at_the_delimiter_line(keys, body, after):
    [first, *rest] = split_commands(keys)
    assert first.heredoc == body
    assert [command.text for command in rest] == after


def test_prompt_cwd_reads_the_last_prompt():
    assert prompt_cwd("training...\nstep 3/10\n") is None
    assert prompt_cwd("root@host:/app# cd /tmp\nroot@host:/tmp# ") == "/tmp"
    assert prompt_cwd("mail me at a@b.c\n") is None


# --- a rollout's net change per file ------------------------------------------

NET_CASES = [
    # (what the tracker saw, in order) -> (start known, end known, net diff lines that must be there)
    pytest.param(
        [("seed", "/app/dataset.toml", DATASET_BEFORE), ("keys", DATASET_HEREDOC)],
        (True, True, ["-batch_size = 2\n", "+batch_size = 1\n"]),
        id="seen, then rewritten",
    ),
    pytest.param(
        [("seed", "/app/train.sh", TRAIN_SH), ("keys", "sed -i 's/5e-5/1e-4/' /app/train.sh\n"),
         ("keys", "sed -i 's/max_train_epochs 2/max_train_epochs 8/' /app/train.sh\n")],
        (True, True, ["-    --learning_rate 5e-5 \\\n", "+    --learning_rate 1e-4 \\\n", "+    --max_train_epochs 8 \\\n"]),
        id="two edits make one net diff",
    ),
    pytest.param(
        [("keys", "echo 'a' > /app/x.txt\n"), ("keys", "sed -i 's/a/b/' /app/x.txt\n")],
        (False, True, ["--- /dev/null\n", "+b\n"]),
        id="never seen before: shown as new",
    ),
    pytest.param(
        [("seed", "/app/x.txt", "a\n"), ("keys", "echo 'b' > /app/x.txt\n"), ("keys", "echo 'a' > /app/x.txt\n")],
        (True, True, []),
        id="changed back: no net diff",
    ),
    pytest.param(
        [("keys", "sed -i '/--cache_latents/d' /app/train.sh\n")],
        (False, False, []),
        id="not replayed: end unknown",
    ),
    pytest.param(
        [("keys", "sed -i '/--cache_latents/d' /app/train.sh\n"), ("seed", "/app/train.sh", TRAIN_SH)],
        (False, True, ["+TEXT_ENC=/models/text_encoder\n"]),
        id="shown by cat after the change: end known",
    ),
]


@pytest.mark.parametrize("events, expected", NET_CASES)
def test_net_change_per_file(events, expected):
    tracker = FileTracker()
    for event in events:
        if event[0] == "seed":
            tracker.seed(event[1], event[2])
        else:
            run(tracker, event[1])
    [change] = tracker.net_changes({change_path: [3, 7] for change_path in tracker.before})
    start_known, end_known, lines = expected
    assert (change.start_known, change.end_known, change.step_ids) == (start_known, end_known, [3, 7])
    diff_lines = change.diff.splitlines(keepends=True)
    assert all(line in diff_lines for line in lines)
    assert bool(change.diff) == bool(lines)


def test_files_only_read_are_no_change():
    tracker = FileTracker()
    tracker.seed("/app/read_only.py", "x = 1\n")
    run(tracker, "cat /app/read_only.py\n")
    assert tracker.net_changes({}) == []


def test_the_real_rollouts_net_changes(shared_trials_dir):
    from tasks.models import BenchmarkVersion, Task
    from tasks.services import task_spec
    from tasks.taskdir import parse_task_dir
    from trajectories.analysis.rollout import analyse_rollout

    task_dir = shared_trials_dir.parent / "tasks" / "flux2_klein_lora"
    spec = task_spec(Task(version=BenchmarkVersion(name="t"), **parse_task_dir(task_dir).model_fields()))
    files = analyse_rollout(load_steps(shared_trials_dir / OPUS), spec, None).files
    assert [(f.path, f.step_ids, f.start_known, f.end_known) for f in files] == [
        ("/app/dataset.toml", [9], True, True),
        ("/app/train.sh", [9, 11, 14], True, True),
    ]
    assert files[0].diff == DATASET_DIFF
    assert "-    --model_version klein-9b\n" in files[1].diff and "+    --model_version klein-base-9b\n" in files[1].diff
