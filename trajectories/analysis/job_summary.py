"""A set of trials summed up as Harbor's job view says it (Django-free).

"36/36 finished, 2 errors, 14.5 M tokens, $212, 71 h", plus the rewards'
distribution as a small histogram. The campaign page and the job page
(/jobs/<job_id>/, trials imported from one Harbor job) both read it from
`summarise`, so the two say the same of the same rollouts.

Harbor's conventions: a trial is finished once it ended (its result.json
is written), whatever its outcome; an error is a trial with an exception;
a cancelled trial (our runner's: staff stopped it) is neither, and is
counted as cancelled, as the campaign's status counts say it;
tokens are input plus output (cached tokens are a part of the input);
the hours are the trials' own durations added up (compute spent, not the
job's wall-clock, which parallel trials shorten).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

BINS = 10


@dataclass(frozen=True, slots=True)
class TrialFacts:
    """What the summary reads of one trial."""

    ended: bool
    errored: bool = False
    cancelled: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    seconds: float | None = None
    reward: float | None = None


@dataclass(frozen=True, slots=True)
class Bin:
    """One bar of the histogram: rewards in [low, high) (the last bar holds its high end too)."""

    low: float
    high: float
    count: int


@dataclass(frozen=True, slots=True)
class JobSummary:
    n_trials: int
    n_finished: int
    n_errors: int
    tokens: int | None
    cost_usd: float | None
    seconds: float | None
    n_rewarded: int
    mean_reward: float | None
    bins: tuple[Bin, ...] = ()
    n_cancelled: int = 0

    @property
    def text(self) -> str:
        """One line, as Harbor's job view puts it: "36/36 finished, 2 errors, 14.5 M tokens, $212, 71 h"."""
        parts = [f"{self.n_finished}/{self.n_trials} finished", f"{self.n_errors} error{'s' if self.n_errors != 1 else ''}"]
        if self.n_cancelled:
            parts.append(f"{self.n_cancelled} cancelled")
        if self.tokens is not None:
            parts.append(f"{compact_count(self.tokens)} tokens")
        if self.cost_usd is not None:
            parts.append(dollars(self.cost_usd))
        if self.seconds is not None:
            parts.append(hours(self.seconds))
        return ", ".join(parts)

    @property
    def low(self) -> float | None:
        """Where the histogram starts (0 unless a reward is below it)."""
        return self.bins[0].low if self.bins else None

    @property
    def high(self) -> float | None:
        """Where the histogram ends (1 unless a reward is above it)."""
        return self.bins[-1].high if self.bins else None

    @property
    def tallest(self) -> int:
        return max((b.count for b in self.bins), default=0)


def summarise(trials: Iterable[TrialFacts], bins: int = BINS) -> JobSummary:
    """The summary of `trials`; a figure none of them records (tokens, cost, time) is None, not 0."""
    trials = list(trials)
    rewards = [t.reward for t in trials if t.reward is not None and math.isfinite(t.reward)]
    return JobSummary(
        n_trials=len(trials),
        n_finished=sum(t.ended and not t.cancelled for t in trials),
        n_errors=sum(t.errored and not t.cancelled for t in trials),
        n_cancelled=sum(t.cancelled for t in trials),
        tokens=_known_sum([(t.input_tokens or 0) + (t.output_tokens or 0) for t in trials
                           if t.input_tokens is not None or t.output_tokens is not None]),
        cost_usd=_known_sum([t.cost_usd for t in trials if t.cost_usd is not None]),
        seconds=_known_sum([t.seconds for t in trials if t.seconds is not None and t.seconds >= 0]),
        n_rewarded=len(rewards),
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        bins=histogram(rewards, bins),
    )


def histogram(rewards: list[float], bins: int = BINS) -> tuple[Bin, ...]:
    """`bins` equal bars over [0, 1], widened to take any reward outside it (an unclipped verifier's)."""
    if not rewards:
        return ()
    low, high = min(0.0, min(rewards)), max(1.0, max(rewards))
    width = (high - low) / bins
    counts = [0] * bins
    for reward in rewards:
        counts[min(int((reward - low) / width), bins - 1)] += 1
    return tuple(Bin(round(low + i * width, 10), round(low + (i + 1) * width, 10), n) for i, n in enumerate(counts))


def compact_count(n: int) -> str:
    """950, 12.3 k, 14.5 M, 2.1 G."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return str(n)


def dollars(cost: float) -> str:
    """$212 from a hundred up, $12.40 below."""
    return f"${cost:,.0f}" if cost >= 100 else f"${cost:.2f}"


def hours(seconds: float) -> str:
    """71 h from ten hours up, 1.5 h from one, 42 min below."""
    if seconds >= 36_000:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min"


def _known_sum(values: list) -> float | int | None:
    return sum(values) if values else None
