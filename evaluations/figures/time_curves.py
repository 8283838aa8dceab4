"""RE-Bench's curves from score logs: score@k by total time budget, score over elapsed time, score against cost.

Pure functions over plain runs (no ORM, no HTTP); `evaluations.boards.compute`
feeds them every counted rollout of a version scored by the best of its
score log. Definitions, as RE-Bench's paper plots them:

- A run cut at L seconds scores what it would have scored had it stopped
  then (`score_at`): the best of its score log up to L (0 before its first
  score), its final score from its end on. On a final-only task only a
  submission counts: the last score up to L, the final one from its end on.
- score@k at total budget B (`allocation`): B split into k runs of L = B/k;
  per task, the expected best of k runs drawn without replacement from the
  task's runs, each cut at L (exact over subsets,
  `aggregation.expected_best_of_k`); then the mean over all tasks, a task
  without runs counting 0 (as Avg@k). A k needs k runs on every task that
  has any. The best allocation at B is the k that scores most.
- No extrapolation: a cut longer than the entry's longest run is beyond its
  data; such budgets are not plotted and `data_end` says where the data ends.
- Score over elapsed time (`elapsed_curve`): score@1 at each time, that is
  the mean over runs of their best so far (per task, then over tasks).
- Score against cost (`cost_points`): every point of the best-allocation
  curve at its cost, the budget times the entry's dollars per hour (agents:
  their rollouts' recorded cost over their hours; humans: the staff-set rate).

Budgets and cuts are exact (`Fraction`s; the grid in whole seconds but for
its ends, which are the data's own values): a cut of 8 h / 2 is 4 h, so a
score logged at exactly 4 h counts, where floating point once cut at
14399.99999999999 s and dropped it.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tasks.scoring import BEST_OF_SCORE_LOG, run_score

from evaluations.figures.aggregation import expected_best_of_k


@dataclass(frozen=True)
class Run:
    """One counted run: its score log as (elapsed seconds, normalised score), its end and final score."""

    points: tuple[tuple[float, float], ...]
    end: float
    final: float | None = None
    final_only: bool = False


def score_at(run: Run, cut: float | Fraction) -> float:
    """The run's score had it stopped at `cut` seconds (see the module doc); float and Fraction compare exactly."""
    seen = [s for t, s in sorted(run.points) if t <= cut]
    final = run.final if cut >= run.end else None
    if run.final_only:
        # Only a submission counts: the last one up to the cut, the final one from the run's end on.
        final = final if final is not None else (seen[-1] if seen else None)
        seen = []
    return run_score(BEST_OF_SCORE_LOG, final, seen, run.final_only) or 0.0


def budget_ks(runs: Mapping[Hashable, Sequence[Run]]) -> list[int]:
    """k = 1, 2, 4, ... up to the fewest runs any task with runs has."""
    counts = [len(r) for r in runs.values() if r]
    if not counts:
        return []
    ks, k = [], 1
    while k <= min(counts):
        ks.append(k)
        k *= 2
    return ks


def data_end(runs: Mapping[Hashable, Sequence[Run]]) -> float:
    """The longest run's length: cuts beyond it would be extrapolation."""
    return max((run.end for rs in runs.values() for run in rs), default=0.0)


def score_at_budget(
    runs: Mapping[Hashable, Sequence[Run]], tasks: Sequence[Hashable], k: int, cut: float | Fraction
) -> float | None:
    """score@k with every run cut at `cut`: per-task expected best of k, mean over all tasks; None if k is not available."""
    if not tasks:
        return None
    total = 0.0
    for task in tasks:
        task_runs = runs.get(task) or ()
        if not task_runs:
            continue
        if len(task_runs) < k:
            return None
        total += expected_best_of_k([score_at(run, cut) for run in task_runs], k)
    return total / len(tasks)


@dataclass
class Allocation:
    """score@k at one total budget: every available k's score and the best one."""

    budget: float | Fraction
    by_k: dict[int, float]
    best_k: int | None
    best: float | None

    def as_dict(self) -> dict:
        return {"budget": float(self.budget), "by_k": {str(k): v for k, v in self.by_k.items()}, "best_k": self.best_k,
                "best": self.best}


def allocation(runs: Mapping[Hashable, Sequence[Run]], tasks: Sequence[Hashable], budget: float | Fraction) -> Allocation:
    """Every k whose cut L = budget / k lies within the data, and the best of them (the smallest k on ties)."""
    end = data_end(runs)
    by_k: dict[int, float] = {}
    for k in budget_ks(runs):
        cut = Fraction(budget) / k  # exact: a float quotient falls just short of a score logged at L
        if cut > end:
            continue
        value = score_at_budget(runs, tasks, k, cut)
        if value is not None:
            by_k[k] = value
    if not by_k:
        return Allocation(budget, {}, None, None)
    best_k = max(by_k, key=lambda k: (by_k[k], -k))
    return Allocation(budget, by_k, best_k, by_k[best_k])


def budget_grid(all_runs: Sequence[Mapping[Hashable, Sequence[Run]]], points: int = 25) -> list[Fraction]:
    """Shared total budgets (seconds), log-spaced from the shortest first score to the largest k times the longest run.

    Whole seconds between the two ends, which are exact: the largest budget
    is k times a run's length, whose cut at k must be that length.
    """
    starts = [t for runs in all_runs for rs in runs.values() for run in rs for t, _ in run.points if t > 0]
    starts += [run.end for runs in all_runs for rs in runs.values() for run in rs if run.end > 0]
    if not starts:
        return []
    high = max((max(budget_ks(runs), default=1) * Fraction(data_end(runs)) for runs in all_runs), default=Fraction(0))
    low = Fraction(min(starts))
    if high <= low:
        return [low]
    inner = {Fraction(round(b)) for b in np.geomspace(float(low), float(high), points)[1:-1]}
    return sorted({low, high} | {b for b in inner if low < b < high})


def budget_curve(
    runs: Mapping[Hashable, Sequence[Run]], tasks: Sequence[Hashable], grid: Sequence[float | Fraction]
) -> list[Allocation]:
    """The allocation at each budget of `grid` (budgets beyond the data come back empty)."""
    return [allocation(runs, tasks, budget) for budget in grid]


def elapsed_grid(all_runs: Sequence[Mapping[Hashable, Sequence[Run]]], points: int = 40) -> list[float]:
    """0, then log-spaced times from the first score to the longest run, and every entry's own data end.

    Log-spaced because agents' runs of minutes and humans' of hours share the
    axis; each entry's data end is on the grid so its line reaches it.
    """
    ends = [data_end(runs) for runs in all_runs if data_end(runs) > 0]
    if not ends:
        return []
    firsts = [t for runs in all_runs for rs in runs.values() for run in rs for t, _ in run.points if t > 0]
    low = min(firsts + ends)
    # Rounded to the microsecond: geomspace's last digit differs between numpy releases (2.5 against
    # 2.3), and the curves' JSON must not.
    spaced = np.geomspace(low, max(ends), points) if max(ends) > low else []
    times = {0.0, *ends, *(round(float(t), 6) for t in spaced)}
    return sorted(times)


def elapsed_curve(runs: Mapping[Hashable, Sequence[Run]], tasks: Sequence[Hashable], grid: Sequence[float]) -> list[float | None]:
    """Mean best-so-far at each elapsed time (score@1), None past the entry's data."""
    end = data_end(runs)
    return [score_at_budget(runs, tasks, 1, t) if t <= end else None for t in grid]


def cost_points(curve: Sequence[Allocation], dollars_per_hour: float | None) -> list[dict]:
    """The best-allocation curve against its cost: (budget in hours x dollars per hour, score)."""
    if dollars_per_hour is None:
        return []
    return [
        {"cost": float(a.budget) / 3600 * dollars_per_hour, "score": a.best, "budget": float(a.budget), "k": a.best_k}
        for a in curve
        if a.best is not None
    ]
