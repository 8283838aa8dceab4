"""The board's columns and how rows sort by them, shared by the pages, the API and the CSV exports.

No Django here: rows are the board's entries (`board.BoardEntry`).
"""
from __future__ import annotations

from typing import Any

from evaluations.boards import board as board_shape

SORT_KEYS = ("rank", "model", "harness", "avg", "best", "dom", "tasks", "rollouts", "cost", "tokens", "hours", "calls")
# Columns where bigger is better sort descending by default.
DESCENDING_FIRST = {"avg", "best", "dom", "tasks", "rollouts"}


def sort_value(entry: board_shape.BoardEntry, key: str, category: str | None) -> Any:
    """The value a column sorts by; None sorts last in either direction.

    "cat:<category>[:best|:dom]" sorts by a category's figure; Avg@k without a suffix.
    """
    figures = entry.figures(category)
    usage = entry.scope(category).usage
    if key.startswith("cat:"):
        _, name, measure = (key.split(":") + ["avg"])[:3]
        figures = entry.categories.get(name)
        key = measure if measure in board_shape.MEASURE_FIELDS else "avg"
    if key in board_shape.MEASURE_FIELDS:
        return board_shape.measure_value(figures, key) if figures else None
    return {
        "rank": figures.rank if figures else None,
        "model": entry.model_label.lower(),
        "harness": entry.harness.lower(),
        "tasks": figures.n_tasks if figures else None,
        "rollouts": figures.n_rollouts if figures else None,
        "cost": usage.cost_usd,
        "tokens": None if usage.input_tokens is None else usage.input_tokens + usage.output_tokens,
        "hours": usage.agent_hours,
        "calls": usage.benchmark_calls_per_hour,
    }.get(key)


def parse_sort(value: str | None, categories: list[str]) -> tuple[str, bool]:
    """'-avg' -> ('avg', descending). Unknown keys fall back to Avg@k, best first."""
    value = (value or "").strip()
    descending = value.startswith("-")
    key = value.lstrip("-")
    if key in SORT_KEYS:
        return key, descending
    parts = key.split(":")
    if parts[0] == "cat" and len(parts) in (2, 3) and parts[1] in categories and parts[2:] in ([], ["best"], ["dom"]):
        return key, descending
    return "avg", True


def sort_entries(rows: list[board_shape.BoardEntry], key: str, descending: bool, category: str | None) -> list[board_shape.BoardEntry]:
    """Rows sorted by one column; ties by Avg@k (best first), missing values last."""

    def avg(entry: board_shape.BoardEntry) -> float:
        figures = entry.figures(category)
        return (figures.avg if figures else None) or 0.0

    present = [e for e in rows if sort_value(e, key, category) is not None]
    missing = [e for e in rows if sort_value(e, key, category) is None]
    present.sort(key=lambda e: (-avg(e), e.model, e.harness))
    missing.sort(key=lambda e: (-avg(e), e.model, e.harness))
    # Python's sort is stable in both directions, so the tie order survives.
    present.sort(key=lambda e: sort_value(e, key, category), reverse=descending)
    return present + missing
