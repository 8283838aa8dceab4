"""One small rollout as each harness writes it, in ATIF: our own fixtures.

Every rollout does the same four things to the same file, in its harness's
words (tool names and argument shapes as Harbor's converters and the
harnesses' documentation have them): read /app/solve.py, replace `slow()`
by `fast()` in it, run the benchmark `python3 bench.py` (which prints
"time: 8.0 ms"), and finish. The tests check that each imports with the
read as an inspect step, the edit as a real diff, the benchmark call with
its metric, and the file in "Files changed".
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

START = datetime(2026, 1, 2, 10, 0, 0, tzinfo=timezone.utc)
PATH = "/app/solve.py"
BEFORE = "def solve():\n    return slow()\n"
AFTER = "def solve():\n    return fast()\n"
DIFF_LINES = "-    return slow()\n+    return fast()\n"
BENCH_OUTPUT = "warming up\ntime: 8.0 ms\n"


def _numbered(text: str, separator: str) -> str:
    return "".join(f"{n:6d}{separator}{line}\n" for n, line in enumerate(text.splitlines(), 1))


def _trajectory(agent: str, steps: list[dict[str, Any]], *, version: str = "1.0.0") -> dict[str, Any]:
    prompt = {"step_id": 1, "timestamp": START.isoformat(), "source": "user", "message": "Make solve.py fast; run python3 bench.py."}
    for number, step in enumerate(steps, 2):
        step.setdefault("step_id", number)
        step.setdefault("timestamp", (START + timedelta(seconds=30 * (number - 1))).isoformat())
        step.setdefault("source", "agent")
        step.setdefault("model_name", "test-model")
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": f"{agent}-session",
        "agent": {"name": agent, "version": version, "model_name": "test-model"},
        "steps": [prompt, *steps],
        "final_metrics": {"total_prompt_tokens": 10, "total_completion_tokens": 5, "total_steps": len(steps) + 1},
    }


def _call(call_id: str, name: str, arguments: dict[str, Any], output: str, message: str = "") -> dict[str, Any]:
    return {
        "message": message,
        "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments}],
        "observation": {"results": [{"source_call_id": call_id, "content": output}]},
    }


def claude_code() -> dict[str, Any]:
    """Claude Code: Read (numbered with →), Edit, Bash; it just stops when done."""
    return _trajectory(
        "claude-code",
        [
            _call("toolu_1", "Read", {"file_path": PATH}, _numbered(BEFORE, "→") + "\n<system-reminder>\nbe careful\n</system-reminder>\n"),
            _call("toolu_2", "Edit", {"file_path": PATH, "old_string": "return slow()", "new_string": "return fast()"},
                  f"The file {PATH} has been updated."),
            _call("toolu_3", "Bash", {"command": "python3 bench.py", "description": "Run the benchmark"}, BENCH_OUTPUT),
            {"message": "Done: solve() now calls fast()."},
        ],
    )


def claude_code_multi_edit_and_write() -> dict[str, Any]:
    """Claude Code's other editors: Write a new file, MultiEdit it."""
    return _trajectory(
        "claude-code",
        [
            _call("toolu_1", "Write", {"file_path": "/app/fast.py", "content": "A = 1\nB = 2\n"}, "File created successfully"),
            _call("toolu_2", "MultiEdit", {"file_path": "/app/fast.py", "edits": [
                {"old_string": "A = 1", "new_string": "A = 10"}, {"old_string": "B = 2", "new_string": "B = 20"}]}, "Applied 2 edits"),
            _call("toolu_3", "Grep", {"pattern": "fast", "path": "/app"}, "/app/fast.py"),
            _call("toolu_4", "BashOutput", {"bash_id": "bash_1"}, "still running"),
        ],
    )


def codex() -> dict[str, Any]:
    """Codex: shell with an argv list, apply_patch with its own patch format, exec_command."""
    patch = f"*** Begin Patch\n*** Update File: {PATH}\n@@\n def solve():\n-    return slow()\n+    return fast()\n*** End Patch\n"
    return _trajectory(
        "codex",
        [
            _call("call_1", "shell", {"command": ["bash", "-lc", f"cat {PATH}"], "workdir": "/app"}, BEFORE),
            _call("call_2", "apply_patch", {"input": patch}, "Success. Updated the following files:\nM /app/solve.py\n"),
            _call("call_3", "exec_command", {"cmd": "python3 bench.py", "yield_time_ms": 1000}, BENCH_OUTPUT),
            {"message": "solve() now calls fast()."},
        ],
    )


def openhands() -> dict[str, Any]:
    """OpenHands: str_replace_editor view / str_replace, execute_bash, finish."""
    view = f"Here's the result of running `cat -n` on {PATH}:\n" + _numbered(BEFORE, "\t")
    return _trajectory(
        "openhands",
        [
            _call("toolu_1", "str_replace_editor", {"command": "view", "path": PATH}, view),
            _call("toolu_2", "str_replace_editor",
                  {"command": "str_replace", "path": PATH, "old_str": "    return slow()", "new_str": "    return fast()"},
                  f"The file {PATH} has been edited."),
            _call("toolu_3", "execute_bash", {"command": "python3 bench.py", "is_input": "false"},
                  BENCH_OUTPUT + "[The command completed with exit code 0.]"),
            _call("toolu_4", "finish", {"message": "done", "task_completed": "true"}, ""),
        ],
    )


def mini_swe_agent() -> dict[str, Any]:
    """mini-swe-agent in text mode: one ```bash block per reply, no tool calls, output in the observation."""

    def turn(thought: str, command: str, output: str) -> dict[str, Any]:
        return {
            "message": f"THOUGHT: {thought}\n\n```bash\n{command}\n```",
            "observation": {"results": [{"content": f"<returncode>0</returncode>\n<output>\n{output}</output>"}]},
        }

    return _trajectory(
        "mini-swe-agent",
        [
            turn("Look at the solver.", f"cat {PATH}", BEFORE),
            turn("Use the fast path.", f"sed -i 's/return slow()/return fast()/' {PATH}", ""),
            turn("Measure.", "python3 bench.py", BENCH_OUTPUT),
            turn("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", ""),
        ],
    )


def gemini_cli() -> dict[str, Any]:
    """gemini-cli: read_file, replace, run_shell_command."""
    return _trajectory(
        "gemini-cli",
        [
            _call("read_file-1", "read_file", {"absolute_path": PATH}, BEFORE),
            _call("replace-2", "replace", {"file_path": PATH, "old_string": "return slow()", "new_string": "return fast()"},
                  f"Successfully modified file: {PATH} (1 replacements)."),
            _call("run_shell_command-3", "run_shell_command", {"command": "python3 bench.py", "description": "bench"},
                  "Command: python3 bench.py\nDirectory: (root)\nOutput: " + BENCH_OUTPUT + "Exit Code: 0"),
            {"message": "Done."},
        ],
    )


def _screen(typed: str, output: str) -> str:
    return f"root@box:/app# {typed}\n{output}root@box:/app# "


def terminus_2_raw_content() -> dict[str, Any]:
    """terminus-2 with raw_content: the reply's JSON is the message, and there are no tool calls."""

    def turn(keystrokes: str, output: str, *, done: bool = False) -> dict[str, Any]:
        reply = {"analysis": "…", "plan": "…", "commands": [{"keystrokes": keystrokes, "duration": 1.0}] if keystrokes else [],
                 "task_complete": done}
        return {"message": json.dumps(reply, indent=2), "observation": {"results": [{"content": output}]}}

    return _trajectory(
        "terminus-2",
        [
            turn(f"cat {PATH}\n", _screen(f"cat {PATH}", BEFORE)),
            turn(f"sed -i 's/return slow()/return fast()/' {PATH}\n", _screen("sed -i ...", "")),
            turn("python3 bench.py\n", _screen("python3 bench.py", BENCH_OUTPUT)),
            turn("", "", done=True),
        ],
        version="2.0.0",
    )


def terminus_2_xml() -> dict[str, Any]:
    """terminus-2's XML parser with raw_content."""
    reply = (
        "<response><analysis>a</analysis><plan>p</plan><commands>"
        "<keystrokes duration=\"1.0\">python3 bench.py &amp;&amp; echo ok\n</keystrokes>"
        "</commands><task_complete>true</task_complete></response>"
    )
    return _trajectory(
        "terminus-2",
        [{"message": reply, "observation": {"results": [{"content": _screen("python3 bench.py && echo ok", BENCH_OUTPUT + "ok\n")}]}}],
    )


def inspect_tools() -> dict[str, Any]:
    """Inspect AI's standard tools as ATIF calls: text_editor, python, bash."""
    view = f"Here's the result of running `cat -n` on {PATH}:\n" + _numbered(BEFORE, "\t")
    return _trajectory(
        "inspect-ai",
        [
            _call("c1", "text_editor", {"command": "view", "path": PATH}, view),
            _call("c2", "text_editor", {"command": "str_replace", "path": PATH, "old_str": "slow()", "new_str": "fast()"}, "edited"),
            _call("c3", "bash", {"cmd": "python3 bench.py"}, BENCH_OUTPUT),
            _call("c4", "python", {"code": "open('/app/notes.txt', 'w').write('fast\\n')"}, ""),
            _call("c5", "submit", {"answer": "done"}, ""),
        ],
    )


def openhands_text_mode() -> dict[str, Any]:
    """OpenHands without function calling: each reply writes its call as <function=...><parameter=...> text."""

    def turn(text: str, output: str) -> dict[str, Any]:
        return {"message": f"Let me do that.\n{text}", "observation": {"results": [{"content": output}]}}

    view = f"Here's the result of running `cat -n` on {PATH}:\n" + _numbered(BEFORE, "\t")
    return _trajectory(
        "openhands",
        [
            turn(f"<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>{PATH}</parameter>\n"
                 "</function>", view),
            turn(f"<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>{PATH}"
                 "</parameter>\n<parameter=old_str>    return slow()</parameter>\n<parameter=new_str>    return fast()"
                 "</parameter>\n</function>", f"The file {PATH} has been edited."),
            turn("<function=execute_bash>\n<parameter=command>python3 bench.py</parameter>\n</function>",
                 BENCH_OUTPUT + "[The command completed with exit code 0.]"),
            turn("<function=finish>\n<parameter=message>done</parameter>\n</function>", ""),
        ],
    )


def terminus_2_rejected_reply() -> dict[str, Any]:
    """terminus-2 with raw_content, one reply rejected (a required field missing), so nothing of it ran.

    terminus-2 records such a reply as an agent step whose observation is its
    "Previous response had parsing errors" prompt; the same write, sent again
    in a valid reply, is the one that changed the file.
    """

    def turn(reply: str, output: str) -> dict[str, Any]:
        return {"message": reply, "observation": {"results": [{"content": output}]}}

    def valid(keystrokes: str, *, done: bool = False) -> str:
        commands = [{"keystrokes": keystrokes, "duration": 1.0}] if keystrokes else []
        return json.dumps({"analysis": "…", "plan": "…", "commands": commands, "task_complete": done})

    sed = f"sed -i 's/return slow()/return fast()/' {PATH}\n"
    # JSON enough for a tolerant reader, but without its "analysis": terminus-2 refused it.
    rejected = json.dumps({"plan": "…", "commands": [{"keystrokes": sed, "duration": 1.0}], "task_complete": False})
    return _trajectory(
        "terminus-2",
        [
            turn(valid(f"cat {PATH}\n"), _screen(f"cat {PATH}", BEFORE)),
            turn(rejected, "Previous response had parsing errors:\nERROR: Missing required fields: analysis\n\n"
                           "Please fix these issues and provide a proper JSON response."),
            turn(valid(sed), _screen("sed -i ...", "")),
            turn(valid("python3 bench.py\n"), _screen("python3 bench.py", BENCH_OUTPUT)),
            turn(valid("", done=True), ""),
        ],
        version="2.0.0",
    )


# name -> (trajectory, the step that edits, the steps' expected kinds from step 2 on)
HARNESSES = {
    "claude-code": (claude_code, [["inspect"], ["edit"], ["benchmark"], []]),
    "codex": (codex, [["inspect"], ["edit"], ["benchmark"], []]),
    "openhands": (openhands, [["inspect"], ["edit"], ["benchmark"], ["submit"]]),
    "openhands-text": (openhands_text_mode, [["inspect"], ["edit"], ["benchmark"], ["submit"]]),
    "mini-swe-agent": (mini_swe_agent, [["inspect"], ["edit"], ["benchmark"], ["submit"]]),
    "gemini-cli": (gemini_cli, [["inspect"], ["edit"], ["benchmark"], []]),
    "terminus-2-raw": (terminus_2_raw_content, [["inspect"], ["edit"], ["benchmark"], ["submit"]]),
    "inspect-ai": (inspect_tools, [["inspect"], ["edit"], ["benchmark"], ["edit"], ["submit"]]),
}
