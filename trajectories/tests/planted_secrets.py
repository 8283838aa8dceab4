"""Secrets planted in every spelling an attacker's review found (issue 43), in every file of a real trial.

Each spelling carries its own secret, and each secret a core of its own
(`Q7x03Lm9Rt2Vw...`): a page that shows a core shows (part of) a secret,
whatever was masked around it. `plant(folder)` writes them into a copy of
a real Harbor trial: the agent's messages, reasoning, tool calls and
outputs, a subagent's trajectory, trial.log, exception.txt, result.json's
exception and config, config.json's env and kwargs, the verifier's
stdout, reward.json and other outputs, a terminal pane and a binary file.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path


def core(index: int) -> str:
    return f"Q7x{index:02d}Lm9Rt2VwK"


# (what it is, the text with the secret as {s}, the secret's core inside {s}).
SPELLINGS = [
    ("an env line", "OPENAI_API_KEY={s}"),
    ("a quoted export", "export ANTHROPIC_API_KEY='{s}'"),
    ("a bearer header", "Authorization: Bearer {s}"),
    ("a Token header", "Authorization: Token {s}"),
    ("an ApiKey header", "Authorization: ApiKey {s}"),
    ("a Key header", "Authorization: Key {s}"),
    ("a curl header", "curl -s -H 'X-Api-Key: {s}' https://api.example.org/v1/models"),
    ("an --api-key flag", "python run.py --api-key {s} --model m"),
    ("a --token flag", "python run.py --token {s}"),
    ("an --api-key= flag", "python run.py --api-key={s}"),
    ("a URL's api_key", "GET https://api.example.org/v1/models?api_key={s}&limit=5"),
    ("a URL's user part", "git clone https://{s}@github.com/org/repo.git"),
    ("a URL's password", "pip install --index-url https://user:{s}@pypi.example.org/simple x"),
    ("escaped JSON", '{{\\"api_key\\": \\"{s}\\"}}'),
    ("a nested dict", "{{'headers': {{'x-api-key': '{s}'}}}}"),
    ("an env list", '[{{"name": "OPENAI_API_KEY", "value": "{s}"}}]'),
    ("header pairs", '[["Authorization", "Token {s}"]]'),
    ("JSON", '{{"api_key": "{s}"}}'),
    ("YAML", "password: {s}"),
    ("os.environ", 'os.environ["HF_TOKEN"] = "{s}"'),
]
# Keys in the shapes providers give them, each with a core of its own.
KEY_SHAPES = [
    "sk-proj-{c}abcd", "sk-ant-api03-{c}abcd", "AIzaSy{c}abcdefgh", "hf_{c}abcd", "ghp_{c}abcd", "xai-{c}abcd",
    "gsk_{c}abcd", "github_pat_{c}abcd", "xoxb-{c}abcd", "r8_{c}abcd", "glpat-{c}abcdef",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{c}.{c}sig",
]


def secrets() -> list[tuple[str, str, str]]:
    """(what it is, the line holding it, its core) for every planted secret."""
    planted = []
    for index, (what, spelling) in enumerate(SPELLINGS):
        planted.append((what, spelling.format(s=f"{core(index)}abc"), core(index)))
    for offset, shape in enumerate(KEY_SHAPES, start=len(SPELLINGS)):
        planted.append((shape.split("{")[0] + "... key", f"the key {shape.format(c=core(offset))} works", core(offset)))
    aws = core(len(planted)).upper()[:12]
    planted.append(("an AWS key", f"aws_access_key_id AKIA{aws}WXYZ", aws))
    return planted


def block() -> str:
    """Every planted line, one a line."""
    return "\n".join(line for _, line, _ in secrets())


def cores() -> list[tuple[str, str]]:
    return [(what, core_) for what, _, core_ in secrets()]


ENV_SECRET = core(90)
KWARG_SECRET = core(91)
REWARD_SECRET = core(92)


def plant(folder: Path) -> Path:
    """Plant the secrets in the trial folder `folder` (a copy of a real one); returns it."""
    text = block()
    trajectory_path = folder / "agent" / "trajectory.json"
    trajectory = json.loads(trajectory_path.read_text())
    agent_steps = [step for step in trajectory["steps"] if step.get("source") == "agent"]
    for step in (agent_steps[0], agent_steps[-1]):
        step["message"] = f"{step.get('message') or ''}\n{text}"
        step["reasoning_content"] = f"{step.get('reasoning_content') or ''}\n{text}"
        calls = step.setdefault("tool_calls", [])
        calls.append({"tool_call_id": "planted_1", "function_name": "bash_command",
                      "arguments": {"keystrokes": f"{text}\n", "duration": 1.0}})
        calls.append({"tool_call_id": "planted_2", "function_name": "http_request",
                      "arguments": {"url": "https://api.example.org", "api_key": f"{core(93)}abc",
                                    "headers": {"Authorization": f"Token {core(94)}abc"}}})
        results = step.setdefault("observation", {}).setdefault("results", [])
        results.append({"source_call_id": "planted_1", "content": f"$ env\n{text}\n"})
    trajectory_path.write_text(json.dumps(trajectory))
    summary = {
        "schema_version": trajectory.get("schema_version", "ATIF-v1.6"),
        "session_id": "planted-summary",
        "agent": {"name": "terminus-2-summarization-summary", "version": "2.0.0", "model_name": "openai/x"},
        "steps": [
            {"step_id": 1, "source": "user", "message": f"Summarise.\n{text}"},
            {"step_id": 2, "source": "agent", "message": f"The agent set:\n{text}"},
        ],
    }
    (folder / "agent" / "trajectory.summarization-1-summary.json").write_text(json.dumps(summary))
    (folder / "trial.log").write_text(f"INFO starting\n{text}\nINFO done\n")
    (folder / "agent" / "terminus_2.pane").write_text(f"root@box:/app# env\n{text}\n")
    (folder / "exception.txt").write_text(f"Traceback (most recent call last):\n{text}\nRuntimeError: {text.splitlines()[0]}\n")
    (folder / "agent" / "weights.bin").write_bytes(b"\x00\x01\x02" + text.encode() + b"\x00\xff")
    config = json.loads((folder / "config.json").read_text())
    config["agent"]["env"] = {"OPENAI_API_KEY": f"{ENV_SECRET}abc", "NOTE": text}
    config["agent"]["kwargs"] = {"api_key": f"{KWARG_SECRET}abc", "api_base": f"https://u:{core(95)}abc@proxy.example.org/v1"}
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    result = json.loads((folder / "result.json").read_text())
    result["config"] = config
    result["exception_info"] = {
        "exception_type": "RuntimeError", "exception_message": text,
        "exception_traceback": f"Traceback (most recent call last):\n{text}\nRuntimeError: boom",
        "occurred_at": result.get("finished_at"),
    }
    (folder / "result.json").write_text(json.dumps(result, indent=2))
    verifier = folder / "verifier"
    (verifier / "test-stdout.txt").write_text(f"{(verifier / 'test-stdout.txt').read_text()}\n{text}\n")
    reward = json.loads((verifier / "reward.json").read_text())
    reward.update({"reason": text, "api_key": f"{REWARD_SECRET}abc"})
    (verifier / "reward.json").write_text(json.dumps(reward))
    (verifier / "measured.json").write_text(json.dumps({"log": text, "token": f"{core(96)}abc"}))
    return folder


def planted_copy(trial_dir: Path, root: Path) -> Path:
    """A copy of the real trial `trial_dir` under `root`, with the secrets planted."""
    copy = root / trial_dir.name
    shutil.copytree(trial_dir, copy)
    return plant(copy)


def all_cores() -> list[tuple[str, str]]:
    """(what it is, core) of every secret planted, the config's and the verifier's included."""
    return [*cores(), ("config.json's env", ENV_SECRET), ("config.json's kwargs", KWARG_SECRET),
            ("reward.json's api_key", REWARD_SECRET), ("a tool call's api_key", core(93)),
            ("a tool call's headers", core(94)), ("config.json's api_base", core(95)), ("measured.json's token", core(96))]


def leaks(text: str) -> list[str]:
    """What of the planted secrets `text` shows."""
    lowered = text.lower()
    return [what for what, core_ in all_cores() if core_.lower() in lowered]


def stored_text(rollout) -> str:
    """Every text the database holds of `rollout`: its rows' text and JSON columns, full outputs and search words."""
    from trajectories.models import (
        Observation, ObservationText, RolloutDocument, RolloutEvent, Step, StepChunk, SubTrajectory, ToolCall,
    )
    from trajectories.storing.observation_text import decompressed_chunks

    rollout.refresh_from_db()
    parts = [json.dumps({field.name: getattr(rollout, field.attname) for field in rollout._meta.concrete_fields}, default=str)]
    parts += [json.dumps(row, default=str) for row in Step.objects.filter(rollout=rollout).values()]
    parts += [json.dumps(row, default=str) for row in ToolCall.objects.filter(step__rollout=rollout).values()]
    parts += [json.dumps(row, default=str) for row in Observation.objects.filter(step__rollout=rollout).values()]
    parts += [json.dumps(row, default=str) for row in SubTrajectory.objects.filter(rollout=rollout).values()]
    parts += [json.dumps(row, default=str) for row in StepChunk.objects.filter(rollout=rollout).values()]
    parts += [json.dumps(row, default=str) for row in RolloutDocument.objects.filter(rollout=rollout).values()]
    parts += [json.dumps(row, default=str) for row in RolloutEvent.objects.filter(rollout=rollout).values()]
    for data in ObservationText.objects.filter(observation__step__rollout=rollout).values_list("data", flat=True):
        parts.append(b"".join(decompressed_chunks(bytes(data))).decode("utf-8", "replace"))
    return "\n".join(parts)
