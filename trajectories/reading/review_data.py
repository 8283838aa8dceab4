"""A reading of a rollout against a rubric, as plain data (Django-free).

Harbor's `analysis.json` (its `AnalyzeResult`: a summary and checks, name to
`{explanation, outcome}`) and our own judge's answer are both read into a
`Reading`; `trajectories.reviews.record_review` stores one. Outcomes are
Harbor's three words.
"""
from __future__ import annotations

from dataclasses import dataclass, field

PASS, FAIL, NOT_APPLICABLE = "pass", "fail", "not_applicable"
OUTCOMES = (PASS, FAIL, NOT_APPLICABLE)


class ReadingError(ValueError):
    """A reading that cannot be stored (an unknown outcome, a check without a name)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One criterion's verdict: its outcome, why, and the ATIF step ids it rests on."""

    name: str
    outcome: str
    explanation: str = ""
    steps: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ReadingError("a check has no name")
        if self.outcome not in OUTCOMES:
            raise ReadingError(f"check {self.name!r}: outcome must be one of {', '.join(OUTCOMES)}, not {self.outcome!r}")


@dataclass(frozen=True, slots=True)
class Reading:
    """A summary paragraph and one check per criterion, with what reading it cost where known."""

    summary: str
    checks: tuple[Check, ...] = ()
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [check.name for check in self.checks]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ReadingError(f"checks named twice: {', '.join(repeated)}")
