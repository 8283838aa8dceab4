"""Leaderboard figures from plain per-rollout scores. No database, no HTTP.

Definitions (the leaderboard page and the API documentation repeat them):

- An *entry* is (model, harness, benchmark version); a *comparison set* is the
  entries that compete with each other (not ablations, not taken out by staff).
- Which rollouts count (`trajectories.verdict`): finished or failed rollouts count;
  superseded rollouts, unfinished ones (queued ... verifying) and cancelled
  ones do not; infrastructure errors do not count and are reported apart. An
  agent failure (reward missing or 0) counts as 0.
- Avg@k: mean of a task's counted rollout scores, then the mean over *all*
  tasks of the version (or category), each task weighing the same. A task
  without a counted rollout contributes 0, so skipping hard tasks never pays.
- Best@k: the same with the per-task maximum instead of the mean.
- An Inspect task's samples (`ScoreTable.bests`): Inspect reduces each
  sample's scored epochs first, with the log's reducer (`reduce_epochs`,
  "mean" by default), then averages the samples. So on a version scored by
  the final score, an Inspect task's counted "rollouts" are its samples:
  its Avg@k is the mean of their reduced scores, Inspect's own accuracy, and
  its Best@k the mean of each sample's best epoch (Inspect's accuracy under
  the "max" reducer), never above the best score a sample can get.
- Dominance: per task, the fraction of the *other* entries of the comparison
  set whose per-task Avg@k this entry beats (ties count one half), averaged
  over tasks. Over a comparison set it averages to exactly 0.5.
- Intervals (Avg@k, Best@k, Dominance), at ranking.INTERVAL_PERCENT: a percentile clustered bootstrap
  (evaluations.figures.bootstrap) that resamples tasks within each category
  (the same task draw for every entry, so comparisons are paired) and, within
  each task, the entry's rollouts (redrawn once per replicate). Seeded, so
  pages are reproducible.
- Rank (evaluations.figures.ranking): among the comparison set's entries with at
  least one counted rollout in the scope, 1 + the number of entries whose
  Avg@k interval lies wholly above this one's (LMArena's rule); entries with
  nothing counted are listed unranked. The rank range is the range of the
  entry's rank over the middle INTERVAL_PERCENT of the paired bootstrap replicates.
- Medals: per task, by per-task Avg@k among the comparison set, competition
  style (two golds, then a bronze); a per-task score of 0 wins nothing.
- score@k: the expected best of k rollouts drawn without replacement from
  those available (exact, by counting subsets, as RE-Bench plots it); a task
  with fewer than k rollouts contributes the best of what it has. An Inspect
  task's: each sample's expected best of k of its epochs, then the mean over
  the samples (at its most epochs, its Best@k).
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


from evaluations.figures import bootstrap as bs
from evaluations.figures import ranking
from evaluations.figures.ranking import INTERVAL_PERCENT, INTERVAL_PERCENTILES, TIE_TOLERANCE

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20260510


@dataclass
class ScoreTable:
    """Counted rollout scores of entries on the tasks of one version.

    `scores[(entry, task)]` lists the counted scores; a missing key means no
    counted rollout. `tasks` is every task of the version, in display order.
    """

    entries: list[Hashable]
    tasks: list[Hashable]
    scores: Mapping[tuple[Hashable, Hashable], Sequence[float]]
    categories: Mapping[Hashable, str] = field(default_factory=dict)
    # Cells whose scores are units of their own (an Inspect task's samples): each unit's best, in the
    # order of `scores`; the cell's Best@k is their mean.
    bests: Mapping[tuple[Hashable, Hashable], Sequence[float]] = field(default_factory=dict)
    # The rollouts behind a cell whose scores are not one a rollout (the epochs of an Inspect task's samples).
    n_rollouts: Mapping[tuple[Hashable, Hashable], int] = field(default_factory=dict)
    # Where the scores are units: each unit's scored epochs (score@k draws a sample's epochs, never other samples).
    epochs: Mapping[tuple[Hashable, Hashable], Sequence[Sequence[float]]] = field(default_factory=dict)

    def units(self, entry: Hashable, task: Hashable) -> Sequence[Sequence[float]]:
        """What score@k draws from: each unit's epochs where the scores are units, else the cell's rollouts as one."""
        return self.epochs.get((entry, task)) or [self.scores.get((entry, task), ())]

    def arrays(self, tasks: Sequence[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(E, T, K) scores padded with 0 and (E, T) counts, for `tasks`."""
        tasks = self.tasks if tasks is None else tasks
        k = max((len(v) for v in self.scores.values()), default=0) or 1
        values = np.zeros((len(self.entries), len(tasks), k))
        counts = np.zeros((len(self.entries), len(tasks)), dtype=np.int64)
        for i, entry in enumerate(self.entries):
            values[i], counts[i] = padded([self.scores.get((entry, task), ()) for task in tasks], k)
        return values, counts

    def best_arrays(self, tasks: Sequence[Hashable] | None = None) -> np.ndarray | None:
        """(E, T, K) of `bests`, NaN on a cell without them (its Best@k is its maximum); None when no cell has them."""
        if not self.bests:
            return None
        tasks = self.tasks if tasks is None else tasks
        k = max((len(v) for v in self.scores.values()), default=0) or 1
        return np.stack([_best_rows([self.bests.get((entry, task)) for task in tasks], k) for entry in self.entries])

    def rollout_counts(self, counts: np.ndarray, positions: Sequence[int] | None = None) -> np.ndarray:
        """(E, T) the rollouts behind each cell: `counts`, but a unit's epochs where the scores are units."""
        if not self.n_rollouts:
            return counts
        tasks = self.tasks if positions is None else [self.tasks[j] for j in positions]
        result = counts.copy()
        for i, entry in enumerate(self.entries):
            for j, task in enumerate(tasks):
                if (entry, task) in self.n_rollouts:
                    result[i, j] = self.n_rollouts[(entry, task)]
        return result

    def category_names(self) -> list[str]:
        return sorted({self.categories.get(t, "") for t in self.tasks} - {""})

    def tasks_in(self, category: str | None) -> list[Hashable]:
        if category is None:
            return list(self.tasks)
        return [t for t in self.tasks if self.categories.get(t, "") == category]


@dataclass(frozen=True, slots=True)
class Figures:
    """One entry's figures over one scope (all tasks or one category); the board carries them as they are."""

    avg: float
    best: float
    avg_ci: tuple[float, float]
    best_ci: tuple[float, float]
    dominance: float | None
    dominance_ci: tuple[float, float] | None
    rank: int | None
    rank_range: tuple[int, int] | None
    n_tasks: int  # tasks with at least one counted rollout
    n_tasks_total: int
    n_rollouts: int

    def as_dict(self) -> dict:
        return {
            "avg": self.avg,
            "avg_ci": list(self.avg_ci),
            "best": self.best,
            "best_ci": list(self.best_ci),
            "dominance": self.dominance,
            "dominance_ci": list(self.dominance_ci) if self.dominance_ci else None,
            "rank": self.rank,
            "rank_range": list(self.rank_range) if self.rank_range else None,
            "n_tasks": self.n_tasks,
            "n_tasks_total": self.n_tasks_total,
            "n_rollouts": self.n_rollouts,
        }


def task_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per-task Avg@k, 0 where an entry has no counted rollout."""
    sums = values.sum(axis=-1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)


def task_bests(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per-task Best@k, 0 where an entry has no counted rollout."""
    present = np.arange(values.shape[-1]) < counts[..., None]
    best = np.where(present, values, -np.inf).max(axis=-1)
    return np.where(counts > 0, best, 0.0)


def pooled_bests(values: np.ndarray, counts: np.ndarray, bests: np.ndarray | None) -> np.ndarray:
    """Per-task Best@k: `task_bests`, but the mean of the units' bests where `bests` has a row (not NaN)."""
    plain = task_bests(values, counts)
    if bests is None:
        return plain
    present = np.arange(bests.shape[-1]) < counts[..., None]
    means = np.where(present, np.nan_to_num(bests), 0.0).sum(axis=-1) / np.maximum(counts, 1)
    return np.where(np.isnan(bests[..., 0]) | (counts == 0), plain, means)


# Inspect's epoch reducers the figures apply themselves (inspect_ai.scorer's of these names, on float scores).
EPOCH_REDUCERS = ("mean", "median", "mode", "max")


def reduce_epochs(values: Sequence[float], reducer: str = "mean") -> float:
    """One Inspect sample's scored epochs as Inspect reduces them; an unknown reducer reads as "mean".

    "mode" is the most common value, the first seen on a tie (as Inspect's
    `Counter.most_common`).
    """
    if not values:
        raise ValueError("a sample without a scored epoch has no score")
    if reducer == "max":
        return float(max(values))
    if reducer == "median":
        return float(statistics.median(values))
    if reducer == "mode":
        return float(Counter(values).most_common(1)[0][0])
    return float(statistics.fmean(values))


def _best_rows(rows: Sequence[Sequence[float] | None], k: int) -> np.ndarray:
    result = np.full((len(rows), k), np.nan)
    for j, row in enumerate(rows):
        if row is not None:
            result[j, :] = 0.0
            result[j, : len(row)] = row
    return result


def dominance(means: np.ndarray) -> np.ndarray:
    """(C, T) per-task means of a comparison set -> (C,) dominance."""
    n, n_tasks = means.shape[0], means.shape[-1]
    if n < 2:
        return np.full(n, np.nan)
    return bs.dominance_share(bs.dominance_points(means), n, n_tasks)


percentile_interval = bs.percentile_interval


def scope_positions(table: ScoreTable, scopes: Iterable[str | None]) -> dict[str | None, list[int]]:
    """Each scope's task positions in `table.tasks` (None: all tasks)."""
    result = {}
    for scope in scopes:
        wanted = set(table.tasks_in(scope))
        result[scope] = [j for j, t in enumerate(table.tasks) if t in wanted]
    return result


def entry_scores(table: ScoreTable, entries: Iterable[Hashable] | None = None, with_bests: bool = False):
    """(entry, values (T, K), counts (T,)) of each entry, as `bootstrap.Bootstrap` takes them.

    `with_bests`: (entry, values, counts, bests (T, K) or None), the table's
    `bests` of the entry's cells (`bootstrap.entry_resamples`).
    """
    wanted = table.entries if entries is None else list(entries)
    tasks = table.tasks
    for entry in wanted:
        values, counts = padded([table.scores.get((entry, t), ()) for t in tasks])
        if not with_bests:
            yield entry, values, counts
            continue
        rows = [table.bests.get((entry, t)) for t in tasks]
        yield entry, values, counts, _best_rows(rows, values.shape[1]) if any(r is not None for r in rows) else None


def padded(rows: Sequence[Sequence[float]], k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(len(rows), k) scores padded with 0, and each row's count: what is counted reads the counts, never the padding.

    `k`: the longest row's length (at least 1) unless given.
    """
    k = k or max(map(len, rows), default=0) or 1
    values = np.zeros((len(rows), k))
    counts = np.zeros(len(rows), dtype=np.int64)
    for j, scores in enumerate(rows):
        counts[j] = len(scores)
        values[j, : len(scores)] = scores
    return values, counts


def build_bootstrap(
    table: ScoreTable,
    comparison: Iterable[Hashable],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    scopes: Iterable[str | None] | None = None,
) -> bs.Bootstrap:
    """Every entry's replicates from nothing, for `scopes` (default: all tasks and every category)."""
    if scopes is None:
        scopes = [None, *table.category_names()]
    return bs.Bootstrap.build(
        scope_positions(table, scopes), table.tasks, entry_scores(table, with_bests=True), set(comparison), n_resamples, seed,
        task_categories(table),
    )


def task_categories(table: ScoreTable) -> list[str]:
    """Each task's category, by position in `table.tasks` ("" for none): the strata of the clustered bootstrap."""
    return [table.categories.get(t, "") for t in table.tasks]


def scope_figures(
    table: ScoreTable,
    comparison: Iterable[Hashable],
    category: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[Hashable, Figures]:
    """Figures of every entry over all tasks (category None) or one category."""
    if not table.entries or not table.tasks_in(category):
        return {}
    boot = build_bootstrap(table, comparison, n_resamples, seed, scopes=[category])
    return figures_from(boot, table, comparison, category)


def figures_from(
    boot: bs.Bootstrap, table: ScoreTable, comparison: Iterable[Hashable], category: str | None = None,
    arrays: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[Hashable, Figures]:
    """Figures of every entry over one scope, the intervals from `boot` (built or kept up to date for `table`).

    `arrays` is `table.arrays()`, when several scopes share it.
    """
    tasks = table.tasks_in(category)
    comparison = set(comparison)
    if not table.entries or not tasks:
        return {}
    scope = boot.scopes[category]
    values, counts = table.arrays() if arrays is None else arrays
    values, counts = values[:, scope.positions], counts[:, scope.positions]
    means = task_means(values, counts)
    avg = means.mean(axis=1)
    bests = table.best_arrays()
    best = pooled_bests(values, counts, None if bests is None else bests[:, scope.positions]).mean(axis=1)

    members = [i for i, e in enumerate(table.entries) if e in comparison]
    dom: dict[int, float] = {}
    dom_ci: dict[int, tuple[float, float]] = {}
    if len(members) >= 2:
        point = dominance(means[members])
        points = np.stack([scope.points[table.entries[i]] for i in members])  # (C, B)
        intervals = percentile_interval(bs.dominance_share(points, len(members), scope.n_tasks), axis=1).T
        for i, share, (low, high) in zip(members, point.tolist(), intervals.tolist()):
            dom[i] = share
            dom_ci[i] = (low, high)

    # Per entry as plain numbers, computed for all at once: per-entry numpy calls were a good part of a
    # 100-entry board's update.
    n_rollouts = table.rollout_counts(counts, scope.positions).sum(axis=1).tolist()
    n_tasks = (counts > 0).sum(axis=1).tolist()
    # Only entries with something counted in the scope are ranked.
    ranked = [table.entries[i] for i in members if n_rollouts[i] > 0]
    rank_of = dict(zip(ranked, ranking.interval_ranks([scope.avg_ci[e] for e in ranked])))
    if set(ranked) == set(scope.above):  # the ranks kept up to date with the replicates
        ranks = np.stack([scope.above[e] + 1 for e in ranked]) if ranked else np.zeros((0, boot.n_resamples))
        ranges = ranking.ranges_of_ranks(ranks, INTERVAL_PERCENT / 100)
    else:  # `boot` was kept for another comparison set than `comparison` (not the board's way): from nothing
        ranges = ranking.rank_ranges(np.stack([scope.avg[e] for e in ranked])) if ranked else []
    range_of = dict(zip(ranked, ranges))
    avg, best = avg.tolist(), best.tolist()
    return {
        entry: Figures(
            avg=avg[i],
            best=best[i],
            avg_ci=scope.avg_ci[entry],
            best_ci=scope.best_ci[entry],
            dominance=dom.get(i),
            dominance_ci=dom_ci.get(i),
            rank=rank_of.get(entry),
            rank_range=range_of.get(entry),
            n_tasks=n_tasks[i],
            n_tasks_total=len(tasks),
            n_rollouts=n_rollouts[i],
        )
        for i, entry in enumerate(table.entries)
    }


def all_figures(
    table: ScoreTable,
    comparison: Iterable[Hashable],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    boot: bs.Bootstrap | None = None,
    arrays: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str | None, dict[Hashable, Figures]]:
    """Figures per scope: key None is all tasks, then one key per category.

    `boot` is the board's bootstrap kept up to date (leaderboard's incremental
    board); without it one is built from nothing, which is what it must equal.
    """
    comparison = set(comparison)
    if not table.entries or not table.tasks:
        return {None: {}}
    if boot is None:
        boot = build_bootstrap(table, comparison, n_resamples, seed)
    arrays = table.arrays() if arrays is None else arrays
    return {scope: figures_from(boot, table, comparison, scope, arrays) for scope in [None, *table.category_names()]}


MEDALS = ("gold", "silver", "bronze")


def medal_places(means: np.ndarray) -> np.ndarray:
    """(C, T) per-task Avg@k -> (C, T) index into MEDALS of each entry's medal on each task, -1 for none.

    Competition style: an entry's place is the number of entries above it
    (beyond TIE_TOLERANCE), so ties share and the next place skips; a score
    of 0 wins nothing.
    """
    better = (means[None, :, :] > means[:, None, :] + TIE_TOLERANCE).sum(axis=1)  # (C, T): those above each
    return np.where((means > 0) & (better < len(MEDALS)), better, -1)


def medal_table(
    table: ScoreTable, comparison: Iterable[Hashable], category: str | None = None,
    arrays: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[Hashable, dict[str, int]]:
    """Medal counts per comparison entry over all tasks (or one category's), by per-task Avg@k.

    `arrays` is `table.arrays()`, when several scopes share it.
    """
    comparison = set(comparison)
    members = [i for i, e in enumerate(table.entries) if e in comparison]
    counts = {table.entries[i]: dict.fromkeys(MEDALS, 0) for i in members}
    tasks = set(table.tasks_in(category))
    if not members or not tasks:
        return counts
    values, n = table.arrays() if arrays is None else arrays
    positions = [j for j, t in enumerate(table.tasks) if t in tasks]
    values, n = values[:, positions], n[:, positions]
    places = medal_places(task_means(values[members], n[members]))
    for row, i in enumerate(members):
        won = np.bincount(places[row][places[row] >= 0], minlength=len(MEDALS))
        counts[table.entries[i]] = {medal: int(won[m]) for m, medal in enumerate(MEDALS)}
    return counts


def expected_best_of_k(scores: Sequence[float], k: int) -> float:
    """E[max of k scores drawn without replacement] from the given scores.

    With the scores sorted ascending, the i-th smallest (1-based) is the
    maximum of exactly C(i-1, k-1) of the C(n, k) possible draws. When k > n
    the best of all n is returned (see module doc); no scores give 0.
    """
    n = len(scores)
    if n == 0:
        return 0.0
    k = max(1, min(k, n))
    ordered = sorted(scores)
    total = math.comb(n, k)
    return sum(s * math.comb(i, k - 1) for i, s in enumerate(ordered)) / total


def score_at_k(
    table: ScoreTable, entry: Hashable, max_k: int | None = None, category: str | None = None
) -> list[float]:
    """[score@1, ..., score@K] over all tasks (or one category's), missing tasks counting 0.

    A task whose scores are units (an Inspect task's samples) scores the mean over its samples of each one's
    expected best of k of its epochs: k runs to the most epochs a sample has, and score@k there is Best@k.
    """
    tasks = table.tasks_in(category)
    per_task = [table.units(entry, t) for t in tasks]
    if max_k is None:
        max_k = max((len(unit) for units in per_task for unit in units), default=0)
    if not tasks:
        return []
    return [
        sum(sum(expected_best_of_k(unit, k) for unit in units) / len(units) for units in per_task) / len(tasks)
        for k in range(1, max_k + 1)
    ]


def score_at_cut(
    points: Sequence[tuple[float, float]], grid: np.ndarray, final: tuple[float, float] | None = None
) -> np.ndarray:
    """A rollout's score had it been stopped at each time of `grid`.

    `points` are (t, best_score) of its benchmark calls; before the first
    call the score is 0. Best-so-far is re-taken as a running maximum so that
    an unsorted or non-monotone curve cannot lower it. From `final` (the time
    the rollout ended, its score) on, the score is the rollout's own: the
    verifier's reward is the truth that the local best-so-far only
    approximates, so every budget curve ends at Avg@k. Before it, the points
    are what the agent saw of its own benchmark runs, whose output it
    controls: they never show above the final score.
    """
    result = np.zeros(len(grid))
    if points:
        ordered = sorted(points)
        times = np.array([t for t, _ in ordered], dtype=float)
        best = np.maximum.accumulate(np.array([s for _, s in ordered], dtype=float))
        if final is not None:
            best = np.minimum(best, final[1])
        at = np.searchsorted(times, grid, side="right") - 1
        result = np.where(at >= 0, best[np.maximum(at, 0)], 0.0)
    if final is not None and len(grid):
        end, score = final
        result = np.where(grid >= min(end, grid[-1]), score, result)
    return result


def budget_curve(
    curves: Mapping[Hashable, Sequence[tuple[Sequence[tuple[float, float]], tuple[float, float] | None]]],
    tasks: Sequence[Hashable],
    grid: np.ndarray,
) -> np.ndarray:
    """Expected score of an entry if every rollout were cut at each grid time.

    `curves[task]` lists, per counted rollout on that task, its (t, best_score)
    points and its (end, score) (see `score_at_cut`). Aggregated like Avg@k:
    mean over the task's rollouts, then over all tasks, a task without
    rollouts counting 0.
    """
    if not tasks:
        return np.zeros(len(grid))
    total = np.zeros(len(grid))
    for task in tasks:
        rollouts = curves.get(task) or ()
        if rollouts:
            total += np.mean([score_at_cut(points, grid, final) for points, final in rollouts], axis=0)
    return total / len(tasks)


def pareto_frontier(points: Mapping[Hashable, tuple[float | None, float]]) -> set[Hashable]:
    """Keys not dominated on (cost: lower is better, score: higher is better).

    Points with an unknown cost are left out: they can neither be on the
    frontier nor push others off it.
    """
    keys = [k for k, (x, _) in points.items() if x is not None]
    if not keys:
        return set()
    x = np.array([points[k][0] for k in keys], dtype=float)
    y = np.array([points[k][1] for k in keys], dtype=float)
    # dominated[i]: some point at most as dear and at least as good, and better on one of the two.
    dominated = (
        (x[None, :] <= x[:, None]) & (y[None, :] >= y[:, None]) & ((x[None, :] < x[:, None]) | (y[None, :] > y[:, None]))
    ).any(axis=1)
    return {k for k, d in zip(keys, dominated) if not d}


@dataclass
class Usage:
    """What an entry's counted rollouts consumed."""

    n_rollouts: int = 0
    cost_usd: float = 0.0
    n_cost_known: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    n_tokens_known: int = 0
    agent_seconds: float = 0.0
    n_time_known: int = 0
    benchmark_calls: int = 0
    # The time of the rollouts whose benchmark calls are known (an agent's own account of them is not).
    calls_seconds: float = 0.0

    def add(
        self,
        cost_usd: float | None,
        input_tokens: int | None,
        output_tokens: int | None,
        agent_seconds: float | None,
        benchmark_calls: int | None,
    ) -> None:
        self.n_rollouts += 1
        if cost_usd is not None:
            self.cost_usd += cost_usd
            self.n_cost_known += 1
        if input_tokens is not None or output_tokens is not None:
            self.input_tokens += input_tokens or 0
            self.output_tokens += output_tokens or 0
            self.n_tokens_known += 1
        if agent_seconds is not None:
            self.agent_seconds += agent_seconds
            self.n_time_known += 1
            # Calls per hour only over rollouts whose time and calls are known.
            if benchmark_calls is not None:
                self.benchmark_calls += benchmark_calls
                self.calls_seconds += agent_seconds

    @property
    def agent_hours(self) -> float:
        return self.agent_seconds / 3600

    @property
    def calls_per_hour(self) -> float | None:
        return self.benchmark_calls / (self.calls_seconds / 3600) if self.calls_seconds > 0 else None

    @property
    def cost_per_rollout(self) -> float | None:
        return self.cost_usd / self.n_cost_known if self.n_cost_known else None

    @property
    def tokens_per_rollout(self) -> float | None:
        if not self.n_tokens_known:
            return None
        return (self.input_tokens + self.output_tokens) / self.n_tokens_known

    def as_dict(self) -> dict:
        return {
            "n_rollouts": self.n_rollouts,
            "cost_usd": self.cost_usd if self.n_cost_known else None,
            "cost_known_rollouts": self.n_cost_known,
            "cost_per_rollout": self.cost_per_rollout,
            "input_tokens": self.input_tokens if self.n_tokens_known else None,
            "output_tokens": self.output_tokens if self.n_tokens_known else None,
            "tokens_per_rollout": self.tokens_per_rollout,
            "agent_hours": self.agent_hours if self.n_time_known else None,
            "benchmark_calls_per_hour": self.calls_per_hour,
        }


# No paper prints more; a float written out in full ("0.35000000000000003") or "1e-300" would otherwise
# print hundreds of digits on the board (and 1e-40000 overflowed the column).
MAX_PRINTED_DECIMALS = 10


def printed_decimals(text: str) -> int:
    """How many decimals a published number was printed with: "0.350" -> 3, "0.2" -> 1, "1" -> 0 (at most 10)."""
    from decimal import Decimal, InvalidOperation

    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except (InvalidOperation, AttributeError):
        return 3
    return min(MAX_PRINTED_DECIMALS, max(0, -exponent)) if isinstance(exponent, int) else 3


def reproduces(published: float, decimals: int, ours: float) -> bool:
    """True when `ours` rounds to the published figure as printed (half a unit of its last digit)."""
    return abs(ours - published) <= 0.5 * 10.0 ** -decimals + 1e-9
