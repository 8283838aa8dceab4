"""Harness-native agent logs in a trial folder, and Harbor's converters for them.

Harbor's installed agents write their own logs under `agent/` and convert
them to ATIF (`agent/trajectory.json`) when the agent ends. A trial whose
conversion did not run (the trial was killed, the converter failed, an
older Harbor) has only the native logs: mini-swe-agent's
`mini-swe-agent.trajectory.json`, gemini-cli's
`gemini-cli.trajectory.json(l)`, claude-code's session JSONL under
`sessions/projects/`, Codex's `rollout-*.jsonl` under `sessions/`, and
OpenHands' event files under `sessions/<id>/events/`. `FORMATS` names each
with the Harbor agent whose `populate_context_post_run` converts it; the
conversion runs on a private copy of `agent/`, never in the trial folder.

`describe_file` tells what a single file is, for the error given when a
native log (not its trial folder) is passed to the importer.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class NativeFormat:
    name: str  # as people call it ("claude-code session JSONL")
    agent: str  # the Harbor agent (AgentName value) whose converter reads it
    matches: Callable[[str], bool]  # a relative path under agent/ that belongs to it

    def files(self, names: frozenset[str] | set[str]) -> list[str]:
        return sorted(name for name in names if name.startswith("agent/") and self.matches(name[len("agent/"):]))


FORMATS: tuple[NativeFormat, ...] = (
    NativeFormat("mini-swe-agent trajectory", "mini-swe-agent", lambda p: p == "mini-swe-agent.trajectory.json"),
    NativeFormat("gemini-cli session", "gemini-cli", lambda p: p in ("gemini-cli.trajectory.json", "gemini-cli.trajectory.jsonl")),
    NativeFormat(
        "claude-code session JSONL", "claude-code",
        lambda p: p.startswith("sessions/projects/") and p.endswith(".jsonl") and "/subagents/" not in p,
    ),
    NativeFormat(
        "Codex session JSONL", "codex",
        lambda p: p.startswith("sessions/") and re.search(r"(^|/)rollout-[^/]*\.jsonl$", p) is not None,
    ),
    NativeFormat("OpenHands event list", "openhands", lambda p: re.fullmatch(r"sessions/[^/]+/events/\d+\.json", p) is not None),
)


def detect(names: frozenset[str] | set[str]) -> NativeFormat | None:
    """The native format whose files a trial folder holds (relative names), or None."""
    for fmt in FORMATS:
        if fmt.files(names):
            return fmt
    return None


class ConversionError(Exception):
    """Harbor's converter gave no trajectory; the message says why."""


def convert(
    trial_dir: Path, fmt: NativeFormat, names: frozenset[str] | set[str], *, model_name: str,
    read: Callable[[str], bytes],
) -> dict[str, Any]:
    """The ATIF document Harbor's converter makes of the native logs; raises ConversionError.

    Only the format's own files are copied (read with `read`, which refuses
    links) into a temporary folder, where the converter writes its output.
    """
    with tempfile.TemporaryDirectory(prefix="native-") as tmp:
        logs_dir = Path(tmp) / "agent"
        for relative in fmt.files(names):
            target = logs_dir / relative[len("agent/"):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(read(relative))
        agent = _harbor_agent(fmt, logs_dir, model_name)
        from harbor.models.agent.context import AgentContext

        try:
            agent.populate_context_post_run(AgentContext())
        except Exception as exc:  # noqa: BLE001  (a converter bug is a reason, not a crash)
            raise ConversionError(f"Harbor's {fmt.agent} converter failed: {type(exc).__name__}: {exc}"[:300]) from exc
        output = logs_dir / "trajectory.json"
        if not output.is_file():
            raise ConversionError(f"Harbor's {fmt.agent} converter wrote no trajectory from these logs")
        try:
            return json.loads(output.read_text(encoding="utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            raise ConversionError(f"Harbor's {fmt.agent} converter wrote invalid JSON ({exc})") from exc


def _harbor_agent(fmt: NativeFormat, logs_dir: Path, model_name: str):
    # litellm (imported by Harbor's agents) would otherwise fetch a price list from the internet.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from harbor.agents.factory import AgentFactory
        from harbor.models.agent.name import AgentName

        agent_class = AgentFactory.get_agent_class(AgentName(fmt.agent))
        return agent_class(logs_dir=logs_dir, model_name=model_name or None)
    except Exception as exc:  # noqa: BLE001
        raise ConversionError(f"Harbor's {fmt.agent} agent is not available here: {type(exc).__name__}: {exc}"[:300]) from exc


def harbor_version() -> str:
    try:
        from importlib.metadata import version

        return version("harbor")
    except Exception:  # noqa: BLE001
        return "?"


def misplaced(raw: bytes) -> tuple[NativeFormat, dict[str, bytes]] | None:
    """A harness's own log saved as `agent/trajectory.json`: its format and the files its converter reads.

    Some runs leave mini-swe-agent's or gemini-cli's log, or OpenHands' event
    list, where Harbor's ATIF trajectory belongs; the trial was refused whole
    (its reward and result lost). The files are named as the format's own
    (OpenHands' events one file each), for `convert`.
    """
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except (json.JSONDecodeError, RecursionError):
        return None
    by_name = {fmt.agent: fmt for fmt in FORMATS}
    if isinstance(data, dict) and ("trajectory_format" in data or "mini_version" in data.get("info", {}) or
                                   ("messages" in data and "info" in data)):
        return by_name["mini-swe-agent"], {"agent/mini-swe-agent.trajectory.json": raw}
    if isinstance(data, dict) and "sessionId" in data and "messages" in data:
        return by_name["gemini-cli"], {"agent/gemini-cli.trajectory.json": raw}
    if isinstance(data, list) and data and all(isinstance(e, dict) and "source" in e for e in data) and any(
            "action" in e or "observation" in e for e in data):
        files = {f"agent/sessions/imported/events/{e.get('id', i)}.json": json.dumps(e).encode() for i, e in enumerate(data)}
        return by_name["openhands"], files
    return None


# -- one file given on its own ---------------------------------------------------------


def describe_file(path: Path) -> str | None:
    """What a single agent log is ("a mini-swe-agent trajectory"), or None when it is none we know."""
    name = path.name
    for fmt in FORMATS:
        if fmt.matches(name) or (fmt.agent == "openhands" and path.parent.name == "events" and name[:-5].isdigit()):
            return fmt.name
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return "Codex session JSONL"
    head = _head(path)
    if name.endswith(".jsonl"):
        if '"session_meta"' in head:
            return "Codex session JSONL"
        if '"sessionId"' in head and ('"type":"assistant"' in head.replace(" ", "") or '"type":"user"' in head.replace(" ", "")):
            return "claude-code session JSONL"
        return None
    if name.endswith(".json"):
        if '"ATIF' in head or ('"schema_version"' in head and '"steps"' in head):
            return "ATIF trajectory"
        if '"trajectory_format"' in head or '"mini_version"' in head:
            return "mini-swe-agent trajectory"
        if '"sessionId"' in head and '"messages"' in head:
            return "gemini-cli session"
    return None


def _head(path: Path, size: int = 65536) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def single_file_error(path: Path) -> str | None:
    """The importer's error for one agent log given instead of its trial folder, or None."""
    kind = describe_file(path)
    if kind is None:
        return None
    trial = path.parent
    while trial.parent != trial and trial.name != "agent":
        trial = trial.parent
    where = trial.parent if trial.name == "agent" else path.parent
    return (
        f"{path}: {'an' if kind[0] in 'AEIOUaeiou' else 'a'} {kind}, not a trial folder. Import the trial folder that holds it ({where}): its "
        "config.json and result.json say which task, model and reward it belongs to"
        + ("; the native log is converted with Harbor's own converter" if kind != "ATIF trajectory" else "")
    )

