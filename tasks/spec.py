"""The plain description of a task that analysis and scoring work from."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    """What analysis needs to know about a task, without the ORM."""

    name: str
    category: str = ""
    metric: str = ""
    direction: str = ""  # lower | higher
    baseline_score: float | None = None
    reference_score: float | None = None
    scoring_rule: str = ""  # "" (by category) | log_stretch | anchored_linear | rebench
    # RE-Bench's f: "identity" or "log" (of y - transform_offset); final_only: only the last score counts.
    transform: str = "identity"
    transform_offset: float = 0.0
    final_only: bool = False
    clip: bool = True
    benchmark_pattern: str = ""
    metric_pattern: str = ""
    instruction: str = ""
    budget_sec: float | None = None
    # Explicit local benchmark commands from task.toml, when the task names them.
    benchmark_commands: tuple[str, ...] = ()


def name_candidates(trial_task_name: str) -> list[str]:
    """The task names a Harbor trial's task name may mean, in order: the whole name, then the part after the last
    "__" (trials name their task like "musubi-tuner__flux2_klein_lora", a library prefix and the task's name)."""
    name = (trial_task_name or "").strip()
    candidates = [name] if name else []
    if "__" in name:
        suffix = name.rsplit("__", 1)[1]
        if suffix and suffix not in candidates:
            candidates.append(suffix)
    return candidates
