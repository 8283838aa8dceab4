"""Trajectory analysis entry point. STUB: replaced by the analysis work."""
from __future__ import annotations

from datetime import datetime

from .parsed import ParsedStep, RolloutAnalysis, StepAnalysis, TaskSpec


def analyse_rollout(steps: list[ParsedStep], spec: TaskSpec, agent_started_at: datetime | None) -> RolloutAnalysis:
    return RolloutAnalysis(steps=[StepAnalysis(kinds=[], call_kinds=[[] for _ in s.tool_calls]) for s in steps], curve=[])
