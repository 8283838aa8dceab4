"""Plain data shapes passed between ATIF parsing, analysis and persistence.

The parser (trajectories.reading.atif) produces these from a trajectory file; the
analysis (trajectories.analysis.rollout) reads them and returns per-step findings;
ingestion (trajectories.storing.ingest) stores both. None of them touch the database.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tasks.spec import TaskSpec  # noqa: F401  (re-exported for analysis)


@dataclass
class ParsedToolCall:
    call_id: str
    function_name: str
    arguments: dict[str, Any]
    # What the call does, as analysis.tool_vocabulary.use_of read it: once per
    # call, for the several step-kind and edit rules that ask.
    use: Any = field(default=None, compare=False, repr=False)


@dataclass
class ParsedObservation:
    source_call_id: str  # "" when the result is not linked to a call
    content: str
    # e.g. {"session_id": ..., "trajectory_path": ...} for subagent results
    subagent_ref: dict[str, Any] | None = None
    # What the text does not hold: non-text content parts, every subagent
    # ref when there are several, the result's own `extra`.
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedStep:
    step_id: int
    timestamp: datetime | None
    source: str  # system | user | agent
    message: str = ""
    reasoning: str = ""
    model_name: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    tool_calls: list[ParsedToolCall] = field(default_factory=list)
    observations: list[ParsedObservation] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedTrajectory:
    schema_version: str
    session_id: str
    agent_name: str
    agent_version: str
    model_name: str
    steps: list[ParsedStep]
    agent_extra: dict[str, Any] = field(default_factory=dict)
    final_metrics: dict[str, Any] = field(default_factory=dict)
    # Embedded subagent trajectories (ATIF >= 1.5), keyed by session id.
    subagents: list["ParsedTrajectory"] = field(default_factory=list)
    # Why the strict (Harbor pydantic) parse failed, when the tolerant one was used.
    warnings: list[str] = field(default_factory=list)
    # ATIF >= 1.7: the per-document id that subagent refs resolve against.
    trajectory_id: str = ""
    # A long trajectory read without its text (trial_folder._read_large_trajectory): the steps
    # above hold no message, calls or observations, and restream(on_step) hands each full step
    # to on_step(position, step), numbered as above, raising TrialFolderError if the file changed.
    restream: Callable[[Callable[[int, ParsedStep], None]], None] | None = field(default=None, compare=False, repr=False)


@dataclass
class MetricReading:
    status: str  # parsed | unparseable
    value: float | None = None
    unit: str = ""
    score: float | None = None  # normalised through the task's scoring rule
    name: str = ""  # the metric name as printed, when seen


@dataclass
class StepAnalysis:
    kinds: list[str]  # see trajectories.analysis.rollout.StepKind, several per step
    call_kinds: list[list[str]]  # per tool call, same order as ParsedStep.tool_calls
    metric: MetricReading | None = None  # set on benchmark calls
    diff: str = ""  # unified diffs of files edited in this step
    edited_files: list[str] = field(default_factory=list)
    # It only looks (or waits) with the very calls of the step before: a check repeated (trajectories.analysis.rollout).
    repeats: bool = False


@dataclass
class FileChange:
    """What a rollout did to one file overall: from before its first change to the end."""

    path: str
    step_ids: list[int]  # the steps that changed it, in order
    diff: str  # the net unified diff; "" when the end content is unknown or unchanged
    end_known: bool  # False when a change could not be replayed and nothing showed the file after
    start_known: bool  # False when the content before the first change was never seen


@dataclass
class CurvePoint:
    step_id: int
    t: float | None  # seconds since the agent started
    metric: float
    score: float | None
    best_metric: float
    best_score: float | None
    improved: bool


@dataclass
class RolloutAnalysis:
    steps: list[StepAnalysis]
    curve: list[CurvePoint]
    n_benchmark_calls: int = 0
    n_edits: int = 0
    first_benchmark_sec: float | None = None
    last_improvement_sec: float | None = None
    budget_used_fraction: float | None = None
    best_metric: float | None = None
    best_score: float | None = None
    # Every file the rollout changed, by path (trajectories.analysis.edits.FileTracker.net_changes).
    files: list[FileChange] = field(default_factory=list)
