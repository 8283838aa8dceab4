"""Harness-native agent logs, our own, in the shapes Harbor's converters read.

The same rollout as harness_trajectories (read /app/solve.py, replace
slow() by fast(), run python3 bench.py, finish), written as each harness
logs it natively, before Harbor converts it to ATIF: mini-swe-agent's
trajectory file (text mode), gemini-cli's session file and claude-code's
session JSONL (the shapes are those of the harnesses' documentation and
of what Harbor's converters read).
"""
from __future__ import annotations

import json
from pathlib import Path

from .harness_trajectories import BEFORE, BENCH_OUTPUT, PATH

T = "2026-01-02T10:00:{:02d}.000Z"


def mini_swe_agent() -> dict:
    def reply(thought: str, command: str) -> dict:
        return {"role": "assistant", "content": f"THOUGHT: {thought}\n\n```bash\n{command}\n```",
                "extra": {"response": {"usage": {"prompt_tokens": 100, "completion_tokens": 10}}}}

    def output(text: str) -> dict:
        return {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{text}</output>"}

    return {
        "info": {
            "mini_version": "1.14.0",
            "exit_status": "Submitted",
            "config": {"model": {"model_name": "openai/test-model"}, "agent": {"step_limit": 50}},
            "model_stats": {"instance_cost": 0.02, "api_calls": 4},
        },
        "messages": [
            {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
            {"role": "user", "content": "Make solve.py fast; run python3 bench.py."},
            reply("Look at the solver.", f"cat {PATH}"),
            output(BEFORE),
            reply("Use the fast path.", f"sed -i 's/return slow()/return fast()/' {PATH}"),
            output(""),
            reply("Measure.", "python3 bench.py"),
            output(BENCH_OUTPUT),
            reply("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
        ],
        "trajectory_format": "mini-swe-agent-1",
    }


def gemini_cli() -> dict:
    def call(n: int, name: str, args: dict, out: str) -> dict:
        return {
            "id": f"msg-{n}", "type": "gemini", "timestamp": T.format(n), "content": "", "model": "gemini-2.5-pro",
            "tokens": {"input": 100, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": 110},
            "toolCalls": [{
                "id": f"{name}-{n}", "name": name, "args": args, "status": "success", "timestamp": T.format(n),
                "result": [{"functionResponse": {"id": f"{name}-{n}", "name": name, "response": {"output": out}}}],
            }],
        }

    return {
        "sessionId": "gemini-session-1",
        "projectHash": "abc",
        "startTime": T.format(0),
        "lastUpdated": T.format(9),
        "messages": [
            {"id": "msg-0", "type": "user", "timestamp": T.format(0), "content": "Make solve.py fast; run python3 bench.py."},
            call(1, "read_file", {"absolute_path": PATH}, BEFORE),
            call(2, "replace", {"file_path": PATH, "old_string": "return slow()", "new_string": "return fast()"}, "ok"),
            call(3, "run_shell_command", {"command": "python3 bench.py"}, BENCH_OUTPUT),
            {"id": "msg-4", "type": "gemini", "timestamp": T.format(4), "content": "Done.", "model": "gemini-2.5-pro",
             "tokens": {"input": 100, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 105}},
        ],
    }


SESSION_ID = "7f3c1f0e-4b7a-4a8e-9a51-3d2b1c0a9e11"


def claude_code_session() -> list[dict]:
    """The lines of a claude-code session JSONL: user and assistant events in a chain."""
    events: list[dict] = []

    def event(kind: str, message: dict) -> None:
        n = len(events)
        events.append({
            "type": kind, "uuid": f"00000000-0000-0000-0000-{n:012d}",
            "parentUuid": events[-1]["uuid"] if events else None, "sessionId": SESSION_ID, "timestamp": T.format(n),
            "cwd": "/app", "version": "2.0.14", "isSidechain": False, "userType": "external", "message": message,
        })

    def tool(n: int, name: str, arguments: dict, output: str) -> None:
        event("assistant", {
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": arguments}],
            "usage": {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 0},
        })
        event("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output}]})

    event("user", {"role": "user", "content": "Make solve.py fast; run python3 bench.py."})
    numbered = "".join(f"{i:6d}→{line}\n" for i, line in enumerate(BEFORE.splitlines(), 1))
    tool(1, "Read", {"file_path": PATH}, numbered)
    tool(2, "Edit", {"file_path": PATH, "old_string": "return slow()", "new_string": "return fast()"}, "updated")
    tool(3, "Bash", {"command": "python3 bench.py", "description": "Run the benchmark"}, BENCH_OUTPUT)
    event("assistant", {"id": "msg_4", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": "Done."}], "usage": {"input_tokens": 100, "output_tokens": 5}})
    return events


def write_native(agent_dir: Path, harness: str) -> Path:
    """Write `harness`'s native log under `agent_dir`; returns the file."""
    if harness == "mini-swe-agent":
        path = agent_dir / "mini-swe-agent.trajectory.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mini_swe_agent(), indent=2))
    elif harness == "gemini-cli":
        path = agent_dir / "gemini-cli.trajectory.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(gemini_cli(), indent=2))
    elif harness == "claude-code":
        path = agent_dir / "sessions" / "projects" / "-app" / f"{SESSION_ID}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in claude_code_session()))
    elif harness == "openhands":
        path = write_openhands(agent_dir)
    elif harness == "codex":
        path = write_codex(agent_dir)
    else:
        raise ValueError(harness)
    return path


def openhands_events() -> list[dict]:
    """OpenHands' event files (sessions/<id>/events/N.json): actions and their observations, linked by cause."""
    events: list[dict] = []

    def add(**event) -> int:
        event.setdefault("id", len(events))
        event.setdefault("timestamp", T.format(len(events)).replace("Z", ""))
        events.append(event)
        return event["id"]

    def tool(name: str, arguments: dict, output: str, action: str, observation: str) -> None:
        call_id = f"toolu_{len(events)}"
        metadata = {
            "function_name": name, "tool_call_id": call_id,
            "model_response": {"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}}]},
        }
        cause = add(source="agent", message=f"Running {name}", action=action, args=arguments, tool_call_metadata=metadata,
                    llm_metrics={"accumulated_cost": 0.001 * len(events),
                                 "accumulated_token_usage": {"prompt_tokens": 100 * len(events), "completion_tokens": 10 * len(events)}})
        add(source="agent", cause=cause, observation=observation, content=output, message="", tool_call_metadata=metadata)

    add(source="user", message="Make solve.py fast; run python3 bench.py.", action="message", args={"content": "..."})
    view = f"Here's the result of running `cat -n` on {PATH}:\n" + "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(BEFORE.splitlines(), 1))
    tool("str_replace_editor", {"command": "view", "path": PATH}, view, "read", "read")
    tool("str_replace_editor", {"command": "str_replace", "path": PATH, "old_str": "return slow()", "new_str": "return fast()"},
         "The file has been edited.", "edit", "edit")
    tool("execute_bash", {"command": "python3 bench.py"}, BENCH_OUTPUT, "run", "run")
    tool("finish", {"message": "done"}, "", "finish", "agent_state_changed")
    return events


def write_openhands(agent_dir: Path) -> Path:
    events_dir = agent_dir / "sessions" / "5b7c0c1d" / "events"
    events_dir.mkdir(parents=True, exist_ok=True)
    for event in openhands_events():
        (events_dir / f"{event['id']}.json").write_text(json.dumps(event))
    return events_dir / "1.json"


def codex_session() -> list[dict]:
    """The lines of a Codex rollout-*.jsonl: session_meta, then response items (calls and their outputs)."""
    lines: list[dict] = []

    def item(payload_type: str, payload: dict, kind: str = "response_item") -> None:
        lines.append({"timestamp": T.format(len(lines)), "type": kind, "payload": {"type": payload_type, **payload}})

    lines.append({"timestamp": T.format(0), "type": "session_meta",
                  "payload": {"id": "0199a1b2-0000-7000-8000-000000000001", "cwd": "/app", "cli_version": "0.46.0",
                              "originator": "codex_exec", "instructions": None}})
    lines.append({"timestamp": T.format(1), "type": "turn_context", "payload": {"cwd": "/app", "model": "gpt-5-codex"}})
    item("message", {"role": "user", "content": [{"type": "input_text", "text": "Make solve.py fast; run python3 bench.py."}]})
    patch = f"*** Begin Patch\n*** Update File: {PATH}\n@@\n def solve():\n-    return slow()\n+    return fast()\n*** End Patch\n"
    calls = [
        ("function_call", "shell", {"arguments": json.dumps({"command": ["bash", "-lc", f"cat {PATH}"], "workdir": "/app"})}, BEFORE),
        ("custom_tool_call", "apply_patch", {"input": patch}, "Success. Updated the following files:\nM /app/solve.py\n"),
        ("function_call", "shell", {"arguments": json.dumps({"command": ["bash", "-lc", "python3 bench.py"]})}, BENCH_OUTPUT),
    ]
    for n, (kind, name, arguments, output) in enumerate(calls, 1):
        item(kind, {"name": name, "call_id": f"call_{n}", **arguments})
        blob = json.dumps({"output": output, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
        item(f"{kind}_output", {"call_id": f"call_{n}", "output": blob if kind == "function_call" else output})
    item("message", {"role": "assistant", "content": [{"type": "output_text", "text": "solve() now calls fast()."}]})
    return lines


def write_codex(agent_dir: Path) -> Path:
    path = agent_dir / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T10-00-00-0199a1b2.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in codex_session()))
    return path
