"""Loading the shared real Harbor trials for analysis tests, with plain json.

Deliberately independent of the ATIF parser (trajectories.reading.atif) so that the
analysis tests fail only for analysis reasons.
"""
from __future__ import annotations

import json
import tomllib
from datetime import datetime
from pathlib import Path

from tasks.spec import TaskSpec
from trajectories.reading.parsed import ParsedObservation, ParsedStep, ParsedToolCall

OPUS = "opus4.6__2026-04-26__2TyoFTQ"
GROK = "grok4.20__2026-04-27__dJkbgCB"


def load_steps(trial_dir: Path) -> list[ParsedStep]:
    data = json.loads((trial_dir / "agent" / "trajectory.json").read_text())
    steps = []
    for raw in data["steps"]:
        calls = [
            ParsedToolCall(call.get("tool_call_id", ""), call["function_name"], call.get("arguments") or {})
            for call in raw.get("tool_calls") or []
        ]
        results = (raw.get("observation") or {}).get("results") or []
        observations = [ParsedObservation(result.get("source_call_id") or "", result.get("content") or "") for result in results]
        steps.append(
            ParsedStep(
                step_id=raw["step_id"],
                timestamp=datetime.fromisoformat(raw["timestamp"]) if raw.get("timestamp") else None,
                source=raw["source"],
                message=raw.get("message") or "",
                tool_calls=calls,
                observations=observations,
            )
        )
    return steps


def keystrokes(trial_dir: Path) -> list[str]:
    """Every keystroke string the agent typed, in order."""
    return [
        call.arguments["keystrokes"]
        for step in load_steps(trial_dir)
        for call in step.tool_calls
        if "keystrokes" in call.arguments
    ]


def flux2_spec(tasks_dir: Path) -> TaskSpec:
    """The flux2_klein_lora task as analysis sees it, read from the real task.toml."""
    folder = tasks_dir / "flux2_klein_lora"
    with open(folder / "task.toml", "rb") as handle:
        toml = tomllib.load(handle)
    optimization = toml["optimization"]
    return TaskSpec(
        name="flux2_klein_lora",
        category=toml["metadata"]["domain"],
        metric=optimization["metric"],
        direction=optimization["direction"],
        baseline_score=optimization["baseline"]["score"],
        reference_score=optimization["reference"]["score"],
        instruction=(folder / "instruction.md").read_text(),
        budget_sec=toml["agent"]["timeout_sec"],
    )
