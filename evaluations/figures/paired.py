"""Paired differences between entries, the ranks they allow, and the runs needed to tell two entries apart.

Plain scores in (an `aggregation.ScoreTable`), figures out; no database, no
HTTP, no Django. The resampling is the site's one scheme
(evaluations.figures.bootstrap: tasks within categories, then each entry's
rollouts within each drawn task), here drawn over the tasks *both* entries
have, the same task draws for both (paired):

- Difference: Avg@k of the first minus Avg@k of the second over the tasks
  both have a counted rollout on (overall, or in one category), each task
  weighing the same: the mean of the per-task differences.
- Interval: the ranking.INTERVAL_PERCENT percentile interval of the
  difference over the replicates of the paired clustered bootstrap.
- P(ahead): the share of replicates in which the first is ahead (a tie,
  within TIE_TOLERANCE, counts one half).
- p-value (two-sided, bootstrap): twice the smaller tail of the replicates
  about 0, counted as (tail + 1) / (B + 1) so it is never 0; capped at 1.
  Per-category claims are Holm-corrected over the categories compared
  (`holm`): a category's difference is *separated* when its Holm-adjusted
  p-value is below 1 - INTERVAL_PERCENT / 100. Overall, the difference is
  separated when its interval excludes 0. Nothing is separated on fewer than
  MIN_TASKS common tasks: one task's rollouts say nothing of the spread
  across tasks (its interval is then the rollouts' alone).
- Rank ranges (`rank_ranges`): entry i is surely above j when their paired
  interval lies wholly above 0; i's rank range runs from 1 + the number of
  entries surely above it to n - the number surely below it: the ranks
  consistent with every paired interval.
- Runs needed (`runs_needed`): per task the rollouts each entry would need
  for the difference as measured to be separated at the current variance,
  by the normal approximation Var = between / T + within / (T k): `between`
  the variance of the per-task differences beyond what their rollouts
  explain, `within` the per-rollout variance of the difference (both
  entries' rollout variances, summed). None when no number of rollouts
  would do (the tasks' own spread is too wide for the difference, or it is
  0): more tasks are needed, not more runs.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs
from evaluations.figures.ranking import INTERVAL_PERCENT, TIE_TOLERANCE

ALPHA = 1 - INTERVAL_PERCENT / 100
# Fewer common tasks than this and nothing is claimed: one task's rollouts say nothing of the spread across tasks.
MIN_TASKS = 2
METHOD = "paired clustered bootstrap"


@dataclass(frozen=True)
class PairedDifference:
    """Avg@k of `a` minus Avg@k of `b` over the tasks both have, in one scope (None: all tasks)."""

    a: Hashable
    b: Hashable
    scope: str | None
    n_tasks: int  # tasks both have a counted rollout on
    difference: float | None
    ci: tuple[float, float] | None
    p_ahead: float | None  # P(a ahead of b) over the replicates
    p_value: float | None  # two-sided bootstrap p-value of "no difference"
    p_holm: float | None  # Holm-adjusted over the scopes compared (categories); the overall one as it is
    runs_needed: int | None  # rollouts per task to separate the pair at the current variance
    se: float | None  # standard deviation of the replicates

    @property
    def separated(self) -> bool:
        """Overall: the interval excludes 0; a category: its Holm-adjusted p-value is below ALPHA. Never on
        fewer than MIN_TASKS common tasks."""
        if self.ci is None or self.n_tasks < MIN_TASKS:
            return False
        if self.scope is None:
            return self.ci[0] > TIE_TOLERANCE or self.ci[1] < -TIE_TOLERANCE
        return self.p_holm is not None and self.p_holm < ALPHA

    def as_dict(self) -> dict:
        """Field names carry the level and the method (INTERVAL_PERCENT, paired clustered bootstrap)."""
        level = f"ci{INTERVAL_PERCENT}_paired_clustered_bootstrap"
        return {
            "scope": self.scope,
            "n_tasks_both": self.n_tasks,
            "avg_difference": self.difference,
            f"avg_difference_{level}_low": self.ci[0] if self.ci else None,
            f"avg_difference_{level}_high": self.ci[1] if self.ci else None,
            "p_first_ahead_paired_clustered_bootstrap": self.p_ahead,
            "p_value_two_sided_paired_clustered_bootstrap": self.p_value,
            "p_value_holm_over_categories": self.p_holm,
            "separated": self.separated,
            "rollouts_per_task_needed_normal_approximation": self.runs_needed,
            "avg_difference_se_paired_clustered_bootstrap": self.se,
        }


def common_positions(counts_a: np.ndarray, counts_b: np.ndarray, positions: Sequence[int]) -> np.ndarray:
    """The positions (of `positions`) where both entries have a counted rollout."""
    positions = np.asarray(positions, dtype=np.int64)
    return positions[(counts_a[positions] > 0) & (counts_b[positions] > 0)]


class Replicates:
    """Each entry's per-task rollout replicates on a table (`bootstrap.entry_resamples`), made once and kept."""

    def __init__(self, table: agg.ScoreTable, n_resamples: int, seed: int):
        self.table, self.n_resamples, self.seed = table, n_resamples, seed
        self.values, self.counts = table.arrays()
        self.categories = agg.task_categories(table)
        self._kept: dict[Hashable, np.ndarray] = {}

    def of(self, entry: Hashable) -> np.ndarray:
        """(B, T) the entry's per-task Avg@k replicates."""
        if entry not in self._kept:
            i = self.table.entries.index(entry)
            self._kept[entry] = bs.entry_resamples(
                self.values[i], self.counts[i], self.n_resamples, self.seed, entry, self.table.tasks
            )[0]
        return self._kept[entry]

    def difference(self, a: Hashable, b: Hashable, positions: np.ndarray) -> np.ndarray:
        """(B,) replicates of the paired difference over `positions`: tasks drawn within their categories,
        the same draws for both entries."""
        strata = bs.strata_of(positions, self.categories)
        draws = bs.clustered_task_draws(self.n_resamples, strata, bs.task_rng(self.seed))
        return bs.gathered(self.of(a) - self.of(b), draws).mean(axis=-1)


def p_ahead(replicates: np.ndarray) -> float:
    """The share of replicates above 0, a tie (within TIE_TOLERANCE) counting one half."""
    above = (replicates > TIE_TOLERANCE).mean()
    tied = (np.abs(replicates) <= TIE_TOLERANCE).mean()
    return float(above + tied / 2)


def p_value(replicates: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "no difference": twice the smaller tail about 0, (tail + 1) / (B + 1)."""
    n = len(replicates)
    low = int((replicates <= TIE_TOLERANCE).sum())
    high = int((replicates >= -TIE_TOLERANCE).sum())
    return min(1.0, 2 * (min(low, high) + 1) / (n + 1))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and is not counted among the hypotheses)."""
    present = [(p, k) for k, p in enumerate(p_values) if p is not None]
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, k) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[k] = running
    return adjusted


def variance_parts(table: agg.ScoreTable, a: Hashable, b: Hashable, positions: np.ndarray) -> tuple[float, float, float]:
    """(between, within, mean k) of the per-task differences over `positions` (see the module's doc).

    within: the mean over tasks of both entries' rollout variances (ddof 1, a task with one rollout
    contributing 0), summed; between: the variance of the per-task differences (ddof 1) less the
    part their rollouts explain (within / k per task), at least 0; mean k the mean rollouts per task.
    """
    diffs, within, explained, ks = [], [], [], []
    for p in positions.tolist():
        task = table.tasks[p]
        x, y = table.scores[(a, task)], table.scores[(b, task)]
        vx = float(np.var(x, ddof=1)) if len(x) > 1 else 0.0
        vy = float(np.var(y, ddof=1)) if len(y) > 1 else 0.0
        diffs.append(float(np.mean(x)) - float(np.mean(y)))
        within.append(vx + vy)
        explained.append(vx / len(x) + vy / len(y))
        ks.append((len(x) + len(y)) / 2)
    spread = float(np.var(diffs, ddof=1)) if len(diffs) > 1 else 0.0
    return max(0.0, spread - float(np.mean(explained))), float(np.mean(within)), float(np.mean(ks))


def runs_needed(difference: float, between: float, within: float, n_tasks: int, level: float = INTERVAL_PERCENT / 100) -> int | None:
    """Rollouts per task for `difference` to lie outside the interval of 0 at the given variance parts.

    Solves z * sqrt(between / T + within / (T k)) < |difference| for k; None when even infinitely many
    rollouts leave the tasks' own spread (between / T) too wide, or the difference is 0.
    """
    z = NormalDist().inv_cdf(0.5 + level / 2)
    room = (abs(difference) / z) ** 2 - between / n_tasks
    if n_tasks < MIN_TASKS or abs(difference) <= TIE_TOLERANCE or room <= 0:
        return None
    if within <= 0:
        return 1
    return max(1, math.ceil(within / (n_tasks * room)))


def paired_difference(
    table: agg.ScoreTable, a: Hashable, b: Hashable, scope: str | None = None,
    n_resamples: int = agg.DEFAULT_RESAMPLES, seed: int = agg.DEFAULT_SEED, replicates: Replicates | None = None,
) -> tuple[PairedDifference, np.ndarray]:
    """The paired difference of `a` and `b` in one scope, and its replicates (empty without a common task).

    `replicates`: the table's `Replicates`, when several pairs share them (their n_resamples and seed win).
    """
    replicates = replicates or Replicates(table, n_resamples, seed)
    counts = replicates.counts
    i, j = table.entries.index(a), table.entries.index(b)
    wanted = set(table.tasks_in(scope))
    positions = common_positions(counts[i], counts[j], [p for p, t in enumerate(table.tasks) if t in wanted])
    if not len(positions):
        return PairedDifference(a, b, scope, 0, None, None, None, None, None, None, None), np.zeros(0)
    per_task = [float(np.mean(table.scores[(a, table.tasks[p])])) - float(np.mean(table.scores[(b, table.tasks[p])]))
                for p in positions.tolist()]
    difference = float(np.mean(per_task))
    drawn = replicates.difference(a, b, positions)
    low, high = bs.percentile_interval(drawn)
    between, within, _ = variance_parts(table, a, b, positions)
    p = p_value(drawn)
    return PairedDifference(
        a=a, b=b, scope=scope, n_tasks=len(positions), difference=difference, ci=(float(low), float(high)),
        p_ahead=p_ahead(drawn), p_value=p, p_holm=p, runs_needed=runs_needed(difference, between, within, len(positions)),
        se=float(np.std(drawn)),
    ), drawn


def compare(
    table: agg.ScoreTable, a: Hashable, b: Hashable,
    n_resamples: int = agg.DEFAULT_RESAMPLES, seed: int = agg.DEFAULT_SEED,
) -> list[PairedDifference]:
    """Overall first, then every category: the categories' p-values Holm-corrected among themselves."""
    kept = Replicates(table, n_resamples, seed)
    overall, _ = paired_difference(table, a, b, None, replicates=kept)
    categories = [paired_difference(table, a, b, c, replicates=kept)[0] for c in table.category_names()]
    adjusted = holm([d.p_value for d in categories])
    return [overall] + [_with_holm(d, p) for d, p in zip(categories, adjusted)]


def _with_holm(d: PairedDifference, p: float | None) -> PairedDifference:
    return replace(d, p_holm=p)


def pairwise(
    table: agg.ScoreTable, entries: Sequence[Hashable], scope: str | None = None,
    n_resamples: int = agg.DEFAULT_RESAMPLES, seed: int = agg.DEFAULT_SEED, replicates: Replicates | None = None,
    holm_over_pairs: bool = True,
) -> dict[tuple[Hashable, Hashable], PairedDifference]:
    """Every ordered pair's difference in one scope (b, a is a, b with its sign turned); a category's
    p-values Holm-corrected over all its pairs (unless `holm_over_pairs` is False: raw)."""
    kept = replicates or Replicates(table, n_resamples, seed)
    result = {}
    for x, a in enumerate(entries):
        for b in entries[x + 1:]:
            result[(a, b)] = paired_difference(table, a, b, scope, replicates=kept)[0]
    if scope is not None and holm_over_pairs:
        result = holm_over_pairs_of(result)
    for (a, b), d in list(result.items()):
        result[(b, a)] = turned(d)
    return result


def holm_over_pairs_of(pairs: dict[tuple[Hashable, Hashable], PairedDifference]) -> dict[tuple[Hashable, Hashable], PairedDifference]:
    """One scope's pairs (each unordered pair once, or both orders) with p-values Holm-corrected over the pairs."""
    once = []
    for key in pairs:
        if (key[1], key[0]) not in once:
            once.append(key)
    adjusted = dict(zip(once, holm([pairs[k].p_value for k in once])))
    result = {}
    for key, d in pairs.items():
        p = adjusted.get(key, adjusted.get((key[1], key[0])))
        result[key] = _with_holm(d, p)
    return result


def holm_over_categories(
    by_scope: dict[str | None, dict[tuple[Hashable, Hashable], PairedDifference]],
) -> dict[str | None, dict[tuple[Hashable, Hashable], PairedDifference]]:
    """Raw pairwise differences by scope -> each pair's category p-values Holm-corrected over its categories
    (as `compare` does for one pair); the overall ones as they are."""
    categories = [s for s in by_scope if s is not None]
    result = {s: dict(pairs) for s, pairs in by_scope.items()}
    for key in by_scope[None]:
        adjusted = holm([by_scope[c][key].p_value for c in categories])
        for c, p in zip(categories, adjusted):
            result[c][key] = _with_holm(by_scope[c][key], p)
    return result


def turned(d: PairedDifference) -> PairedDifference:
    """b minus a, from a minus b."""
    return PairedDifference(
        a=d.b, b=d.a, scope=d.scope, n_tasks=d.n_tasks,
        difference=None if d.difference is None else -d.difference,
        ci=None if d.ci is None else (-d.ci[1], -d.ci[0]),
        p_ahead=None if d.p_ahead is None else 1 - d.p_ahead,
        p_value=d.p_value, p_holm=d.p_holm, runs_needed=d.runs_needed, se=d.se,
    )


def rank_ranges(entries: Sequence[Hashable], pairs: dict[tuple[Hashable, Hashable], PairedDifference]) -> dict[Hashable, tuple[int, int]]:
    """Each entry's (best, worst) rank consistent with every paired difference that is separated."""
    n = len(entries)
    result = {}
    for a in entries:
        above = sum(1 for b in entries if b != a and pairs[(b, a)].separated and pairs[(b, a)].difference > 0)
        below = sum(1 for b in entries if b != a and pairs[(a, b)].separated and pairs[(a, b)].difference > 0)
        result[a] = (1 + above, n - below)
    return result
