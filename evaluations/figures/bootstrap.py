"""The site's one resampling scheme, and the leaderboard's bootstrap kept one entry at a time. No database, no HTTP.

The scheme (every interval the site shows comes from it: the board's
Avg@k, Best@k, Dominance and rank ranges, and the paired differences of
evaluations.figures.paired) is a *clustered* bootstrap following the
benchmark's structure, category -> task -> rollout. In each of B replicates:

1. the tasks are redrawn with replacement *within each category*
   (`clustered_task_draws`): a category of n tasks gets n draws from its own
   tasks, so every replicate keeps the benchmark's mix of categories;
2. within each task, every entry's rollouts are redrawn with replacement
   (`entry_resamples`), once per replicate: a task drawn twice in a replicate
   counts the same redrawn rollouts twice.

The task draws are the same for every entry (paired). Nothing else in the
project draws resamples (tests/test_one_resampling_scheme.py holds it so).

Two choices make a board updatable when one entry changes
instead of recomputed:

- An entry's rollout draws on a task come from a generator seeded by the
  board's seed and the entry's and the task's names alone, so they depend on
  nothing else on the board: a new rollout changes its own cell's replicates
  and no other. The task draws depend on the seed and the scope's tasks alone.
- Dominance is counted in whole points: per replicate and task, 2 for a win
  against another entry, 1 for a tie. An entry's points are a sum over the
  other entries, so replacing one entry subtracts its old pairs and adds its
  new ones, exactly (integers), and the incremental board equals the full
  recompute bit for bit (evaluations/tests/test_incremental_board.py holds it
  so). Ranks per replicate are kept alike: for each entry, how many ranked
  entries are above it.
"""
from __future__ import annotations

import zlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from evaluations.figures.ranking import INTERVAL_PERCENTILES, TIE_TOLERANCE, competition_ranks


def cell_rng(seed: int, entry: Hashable, task: Hashable) -> np.random.Generator:
    """The generator of one entry's rollout draws on one task: the board's seed and the two names, nothing else."""
    return np.random.default_rng((seed, 0, zlib.crc32(repr(entry).encode()), zlib.crc32(repr(task).encode())))


def entry_resamples(
    values: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int, entry: Hashable, tasks: Sequence[Hashable],
    bests: np.ndarray | None = None,
) -> np.ndarray:
    """(2, B, T): per replicate, the mean [0] and the best [1] of each task's rollouts drawn with replacement.

    `values` (T, K) holds one entry's scores padded with anything, `counts`
    (T,) how many are real. Each task's draws come from its own generator
    (`cell_rng`) and its own count, so a new rollout on one task changes that
    task's replicates alone, and no other entry's. `bests` (T, K), where a
    task's row is not NaN, holds each drawn unit's own best (an Inspect
    sample's best epoch, `aggregation.ScoreTable.bests`): that task's best is
    the mean of the drawn units' bests, not the maximum of their values.
    """
    result = np.zeros((2, n_resamples, len(counts)))
    for j, (task, n) in enumerate(zip(tasks, counts)):
        if n == 0:
            continue
        picks = (cell_rng(seed, entry, task).random((n_resamples, n)) * n).astype(np.int64)
        picked = values[j, :n][picks]  # (B, n)
        result[0, :, j] = picked.sum(axis=-1) / n
        if bests is not None and not np.isnan(bests[j, 0]):
            result[1, :, j] = bests[j, :n][picks].sum(axis=-1) / n
        else:
            result[1, :, j] = picked.max(axis=-1)
    return result


def percentile_interval(samples: np.ndarray, axis: int = -1) -> np.ndarray:
    """The INTERVAL_PERCENT percentile interval of `samples` along `axis`: (low, high) first."""
    return np.percentile(samples, list(INTERVAL_PERCENTILES), axis=axis)


def drawn_tasks(n_resamples: int, positions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B, T') task positions drawn with replacement from `positions`, one row per replicate."""
    return positions[rng.integers(0, len(positions), size=(n_resamples, len(positions)))]


def strata_of(positions: Sequence[int], categories: Sequence[str] | None) -> list[np.ndarray]:
    """`positions` grouped by their task's category (`categories[position]`), the categories in sorted order.

    Without categories (or a scope of one category) there is one stratum: all of `positions`.
    """
    positions = np.asarray(positions, dtype=np.int64)
    if categories is None:
        return [positions]
    names = sorted({categories[p] for p in positions.tolist()})
    return [positions[[categories[p] == name for p in positions.tolist()]] for name in names]


def clustered_task_draws(n_resamples: int, strata: Sequence[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """(B, T') the tasks of each replicate: each stratum's (category's) tasks redrawn within it, strata in order.

    One stratum is `drawn_tasks` itself (the same draws from the same generator).
    """
    strata = [np.asarray(s, dtype=np.int64) for s in strata if len(s)]
    if not strata:
        return np.zeros((n_resamples, 0), np.int64)
    return np.concatenate([drawn_tasks(n_resamples, s, rng) for s in strata], axis=1)


def task_rng(seed: int) -> np.random.Generator:
    """The generator of a scope's task draws: the seed alone (adding an entry never changes them)."""
    return np.random.default_rng((seed, 1))


def gathered(replicates: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """(..., B, T) per-task replicates -> (..., B, T') at each replicate's drawn tasks."""
    return replicates[..., np.arange(draws.shape[0])[:, None], draws]


def comparisons(mine: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Per task, what `mine` (..., T) scores against each of `others` (n, ..., T): 2 a win, 1 a tie, 0 a loss.

    A pair's two sides always add up to 2 per task. (A win is above the other
    by more than TIE_TOLERANCE, a tie within it: the two tests add up.)
    """
    diff = mine - others
    return (diff > TIE_TOLERANCE).view(np.int8) + (diff >= -TIE_TOLERANCE).view(np.int8)


def weighted_points(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per-task codes (n, B, T) summed over each replicate's drawn tasks, for S scopes at once: (S, n, B).

    `weights` (B, T, S) counts how often each task is drawn in each replicate
    of each scope. One batched matrix product in float32, exact: every sum is
    a small integer (at most 2 x the tasks drawn).
    """
    products = np.matmul(np.ascontiguousarray(codes.transpose(1, 0, 2), dtype=np.float32), weights)  # (B, n, S)
    return np.rint(products).astype(np.int64).transpose(2, 1, 0)


def dominance_points(means: np.ndarray) -> np.ndarray:
    """(C, T) per-task means of a comparison set -> (C,) points each wins against the others.

    Every pair at once (C x C x T codes: small for one board's point
    figures); an entry's tie with itself (1 per task) is taken out.
    """
    return comparisons(means[:, None, :], means[None, :, :]).sum(axis=(1, 2), dtype=np.int64) - means.shape[-1]


def dominance_share(points: np.ndarray, n_members: int, n_tasks: int) -> np.ndarray:
    """Points -> Dominance: the share of (other entry, task) pairs won, a tie counting one half."""
    return points / (2 * (n_members - 1) * n_tasks)


@dataclass
class Scope:
    """One scope's (all tasks, or one category's) task draws and what each entry makes of them."""

    positions: np.ndarray  # (T',) the scope's tasks, as positions in the board's tasks
    draws: np.ndarray  # (B, T') positions in the board's tasks
    weights: np.ndarray  # (B, T) how often each of the board's tasks is drawn in each replicate
    avg: dict[Hashable, np.ndarray] = field(default_factory=dict)  # entry -> (B,) Avg@k replicates
    best: dict[Hashable, np.ndarray] = field(default_factory=dict)  # entry -> (B,) Best@k replicates
    avg_ci: dict[Hashable, tuple[float, float]] = field(default_factory=dict)
    best_ci: dict[Hashable, tuple[float, float]] = field(default_factory=dict)
    points: dict[Hashable, np.ndarray] = field(default_factory=dict)  # member -> (B,) Dominance points
    # Ranked: the members with a counted rollout in the scope; `above` counts, per replicate, the ranked
    # entries whose Avg@k is above this one's (beyond TIE_TOLERANCE): its rank is 1 + that.
    above: dict[Hashable, np.ndarray] = field(default_factory=dict)

    @property
    def n_tasks(self) -> int:
        return self.draws.shape[1]


def task_weights(draws: np.ndarray, n_tasks: int) -> np.ndarray:
    """(B, T') drawn positions -> (B, T) how many times each task is drawn in each replicate."""
    weights = np.zeros((draws.shape[0], n_tasks), dtype=np.int64)
    np.add.at(weights, (np.arange(draws.shape[0])[:, None], draws), 1)
    return weights


@dataclass
class Bootstrap:
    """Every entry's replicates on one board, and the Dominance points of the comparison set's members.

    `set_entry` replaces one entry (its scores changed, it joined or left the
    comparison set, it is new); `drop_entry` removes one. Built from nothing
    by `Bootstrap.build`, which is the reference the updates must equal.
    Entries' per-task Avg@k replicates sit in one array (a row each), so an
    entry is compared with all the others in one numpy operation.
    """

    n_resamples: int
    tasks: Sequence[Hashable]  # the board's, in order: their names seed their rollout draws
    seed: int
    scopes: dict[str | None, Scope]
    members: set[Hashable] = field(default_factory=set)
    rows: dict[Hashable, int] = field(default_factory=dict)  # entry -> its row of `stack`
    stack: np.ndarray | None = None  # (rows, B, T) per-task Avg@k replicates
    weights: np.ndarray | None = None  # (B, T, S) every scope's task weights, in `scopes`' order (float32)

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    @classmethod
    def empty(
        cls, scope_positions: dict[str | None, Sequence[int]], tasks: Sequence[Hashable], n_resamples: int, seed: int,
        categories: Sequence[str] | None = None,
    ) -> Bootstrap:
        """No entries yet; `scope_positions` gives each scope's task positions (None: all tasks), `categories`
        each task's category (by position: the strata of the clustered draws)."""
        scopes = {}
        for name, positions in scope_positions.items():
            # One draw of tasks for every scope, as its own generator: adding an entry never changes it.
            positions = np.asarray(positions, dtype=np.int64)
            draws = clustered_task_draws(n_resamples, strata_of(positions, categories), task_rng(seed))
            scopes[name] = Scope(positions=positions, draws=draws, weights=task_weights(draws, len(tasks)))
        weights = np.stack([s.weights for s in scopes.values()], axis=-1).astype(np.float32)
        return cls(n_resamples=n_resamples, tasks=list(tasks), seed=seed, scopes=scopes, weights=weights)

    @classmethod
    def build(
        cls,
        scope_positions: dict[str | None, Sequence[int]],
        tasks: Sequence[Hashable],
        entries: Iterable[tuple[Hashable, np.ndarray, np.ndarray]],
        members: Iterable[Hashable],
        n_resamples: int,
        seed: int,
        categories: Sequence[str] | None = None,
    ) -> Bootstrap:
        """From nothing: `entries` yields (entry, values (T, K), counts (T,)[, bests (T, K) or None]); `members`
        are the comparison set; `categories` the tasks' (see `empty`)."""
        made = cls.empty(scope_positions, tasks, n_resamples, seed, categories)
        in_scopes: dict[Hashable, list[bool]] = {}
        for entry, values, counts, *bests in entries:
            made._replicate(entry, values, counts, bests[0] if bests else None)
            in_scopes[entry] = [bool(counts[scope.positions].sum() > 0) for scope in made.scopes.values()]
        made.members = set(members) & set(made.rows)
        order = [e for e in made.rows if e in made.members]
        for s, scope in enumerate(made.scopes.values()):
            ranked = [e for e in order if in_scopes[e][s]]
            if ranked:
                ranks = competition_ranks(np.stack([scope.avg[e] for e in ranked]))
                scope.above = {e: r - 1 for e, r in zip(ranked, ranks)}
        if len(order) < 2:
            return made
        means = made.stack[[made.rows[e] for e in order]]
        scopes = list(made.scopes.values())
        totals = np.array([2 * scope.n_tasks for scope in scopes])[:, None, None]
        points = np.zeros((len(scopes), len(order), n_resamples), dtype=np.int64)  # (S, C, B)
        for i in range(len(order) - 1):
            won = weighted_points(comparisons(means[i], means[i + 1 :]), made.weights)  # (S, rest, B)
            points[:, i] += won.sum(axis=1)
            points[:, i + 1 :] += totals - won
        for s, scope in enumerate(scopes):
            scope.points = dict(zip(order, points[s]))
        return made

    def __contains__(self, entry: Hashable) -> bool:
        return entry in self.rows

    def _row_of(self, entry: Hashable) -> int:
        if entry not in self.rows:
            self.rows[entry] = len(self.rows)
            shape = (self.n_resamples, self.n_tasks)
            if self.stack is None:
                self.stack = np.zeros((8, *shape))
            elif self.rows[entry] >= len(self.stack):
                self.stack = np.concatenate([self.stack, np.zeros((len(self.stack), *shape))])
        return self.rows[entry]

    def _replicate(self, entry: Hashable, values: np.ndarray, counts: np.ndarray, bests: np.ndarray | None = None) -> None:
        replicates = entry_resamples(values, counts, self.n_resamples, self.seed, entry, self.tasks, bests)
        row = self._row_of(entry)  # first: it may make the stack
        self.stack[row] = replicates[0]
        for scope in self.scopes.values():
            scope.avg[entry] = gathered(replicates[0], scope.draws).mean(axis=-1)
            scope.best[entry] = gathered(replicates[1], scope.draws).mean(axis=-1)
            if scope.n_tasks:
                low, high = percentile_interval(np.stack([scope.avg[entry], scope.best[entry]]), axis=1)
                scope.avg_ci[entry] = (float(low[0]), float(high[0]))
                scope.best_ci[entry] = (float(low[1]), float(high[1]))

    def _unrank(self, entry: Hashable) -> None:
        for scope in self.scopes.values():
            if scope.above.pop(entry, None) is None or not scope.above:
                continue
            others = list(scope.above)
            theirs = np.stack([scope.avg[other] for other in others])  # (others, B): one comparison for all
            counts = np.stack([scope.above[other] for other in others]) - (scope.avg[entry] > theirs + TIE_TOLERANCE)
            scope.above.update(zip(others, counts))

    def _rank(self, entry: Hashable, counts: np.ndarray) -> None:
        """Rank a member in every scope it has a counted rollout in."""
        for scope in self.scopes.values():
            if not counts[scope.positions].sum() > 0:
                continue
            mine = scope.avg[entry]
            if not scope.above:
                scope.above[entry] = np.zeros(self.n_resamples, dtype=np.int64)
                continue
            others = list(scope.above)
            theirs = np.stack([scope.avg[other] for other in others])  # (others, B)
            above = np.stack([scope.above[other] for other in others]) + (mine > theirs + TIE_TOLERANCE)
            scope.above.update(zip(others, above))
            scope.above[entry] = (theirs > mine + TIE_TOLERANCE).sum(axis=0, dtype=np.int64)

    def _pairs(self, entry: Hashable) -> tuple[list[Hashable], np.ndarray]:
        """The other members, and the points `entry` wins against each of them: (S, others, B), scopes in order."""
        others = [e for e in self.members if e != entry]
        if not others:
            return others, np.zeros((len(self.scopes), 0, self.n_resamples), dtype=np.int64)
        codes = comparisons(self.stack[self.rows[entry]], self.stack[: len(self.rows)])  # (all rows, B, T)
        return others, weighted_points(codes[[self.rows[e] for e in others]], self.weights)

    def _leave(self, entry: Hashable) -> None:
        """Take a member's pairs out of every other member's points."""
        others, won = self._pairs(entry)
        self.members.discard(entry)
        for scope, mine in zip(self.scopes.values(), won):
            scope.points.pop(entry, None)
            if len(others) == 1:
                scope.points.clear()  # one member alone has no Dominance
                continue
            for other, points in zip(others, mine):
                scope.points[other] = scope.points[other] - (2 * scope.n_tasks - points)

    def _join(self, entry: Hashable) -> None:
        """Add a member's pairs to every other member's points, and its own."""
        others, won = self._pairs(entry)
        self.members.add(entry)
        if not others:
            return
        for scope, mine in zip(self.scopes.values(), won):
            for other, points in zip(others, mine):
                # A member that was alone had no points: it starts from 0.
                scope.points[other] = scope.points.get(other, 0) + (2 * scope.n_tasks - points)
            scope.points[entry] = mine.sum(axis=0)

    def set_entry(
        self, entry: Hashable, values: np.ndarray, counts: np.ndarray, member: bool, bests: np.ndarray | None = None
    ) -> None:
        """One entry's scores are now `values`/`counts` (and `bests`, see `entry_resamples`), in the comparison set or not."""
        if member and entry in self.members:
            before = self.stack[self.rows[entry]].copy()
            self._unrank(entry)
            self._replicate(entry, values, counts, bests)
            self._rank(entry, counts)
            self._repair(entry, before)
            return
        if entry in self.members:
            self._leave(entry)
        self._unrank(entry)
        self._replicate(entry, values, counts, bests)
        if member:
            self._join(entry)
            self._rank(entry, counts)

    def _repair(self, entry: Hashable, before: np.ndarray) -> None:
        """A member stays one with new replicates: its pairs change on the tasks whose replicates changed alone
        (a new rollout on one task: that task's column), so only those columns are compared again."""
        after = self.stack[self.rows[entry]]
        changed = np.flatnonzero((after != before).any(axis=0))
        others = [e for e in self.members if e != entry]
        if not len(changed) or not others:
            return
        # The changed columns first, then the rows: indexing rows first copied every other entry's whole
        # (B, T) replicates, the most of an update's time at 100 entries.
        theirs = self.stack[: len(self.rows), :, changed][[self.rows[e] for e in others]]  # (others, B, changed)
        codes = comparisons(after[:, changed], theirs).astype(np.int16) - comparisons(before[:, changed], theirs)
        gained = weighted_points(codes, self.weights[:, changed, :])  # (S, others, B): what entry won more
        for scope, mine in zip(self.scopes.values(), gained):
            for other, points in zip(others, mine):
                scope.points[other] = scope.points[other] - points
            scope.points[entry] = scope.points[entry] + mine.sum(axis=0)

    def drop_entry(self, entry: Hashable) -> None:
        if entry in self.members:
            self._leave(entry)
        self._unrank(entry)
        if entry not in self.rows:
            return
        # The last row moves into the dropped one's place.
        row, last = self.rows.pop(entry), len(self.rows)
        if row != last:
            moved = next(e for e, r in self.rows.items() if r == last)
            self.stack[row] = self.stack[last]
            self.rows[moved] = row
        for scope in self.scopes.values():
            for by_entry in (scope.avg, scope.best, scope.avg_ci, scope.best_ci):
                by_entry.pop(entry, None)
