"""The leaderboard's bootstrap, kept one entry at a time. No database, no HTTP.

The intervals (evaluations.aggregation says what they are) come from B
replicates: in each, every task's rollouts are redrawn with replacement,
per entry, and the tasks themselves are redrawn, the same draw for every
entry (paired). Two choices make a board updatable when one entry changes
instead of recomputed:

- An entry's rollout draws come from a generator seeded by the board's seed
  and the entry's name alone, so they depend on nothing else on the board: a
  new rollout of one entry leaves every other entry's replicates as they were.
  The task draws depend on the seed and the scope's tasks alone.
- Dominance is counted in whole points: per replicate and task, 2 for a win
  against another entry, 1 for a tie. An entry's points are a sum over the
  other entries, so replacing one entry subtracts its old pairs and adds its
  new ones, exactly (integers), and the incremental board equals the full
  recompute bit for bit (tests/test_incremental_board.py holds it so).
"""
from __future__ import annotations

import zlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .ranking import TIE_TOLERANCE


def entry_rng(seed: int, entry: Hashable) -> np.random.Generator:
    """The generator of one entry's rollout draws: the board's seed and the entry's own name, nothing else."""
    return np.random.default_rng((seed, 0, zlib.crc32(repr(entry).encode())))


def entry_resamples(values: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(2, B, T): per replicate, the mean [0] and the best [1] of each task's rollouts drawn with replacement.

    `values` (T, K) holds one entry's scores padded with anything, `counts`
    (T,) how many are real. Only the entry's own K columns are drawn from,
    so its draws do not depend on how many rollouts other entries have.
    """
    n_tasks = len(counts)
    k = max(int(counts.max(initial=0)), 1)
    values = values[:, :k]
    n = counts[None, :, None]  # (1, T, 1)
    picks = (rng.random((n_resamples, n_tasks, k)) * n).astype(np.int64)
    picked = values[np.arange(n_tasks)[None, :, None], picks]  # (B, T, K)
    present = np.arange(k) < n
    result = np.zeros((2, n_resamples, n_tasks))
    sums = np.where(present, picked, 0.0).sum(axis=-1)
    result[0] = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    result[1] = np.where(counts > 0, np.where(present, picked, -np.inf).max(axis=-1), 0.0)
    return result


def drawn_tasks(n_resamples: int, positions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B, T') task positions drawn with replacement from `positions`, one row per replicate."""
    return positions[rng.integers(0, len(positions), size=(n_resamples, len(positions)))]


def gathered(replicates: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """(..., B, T) per-task replicates -> (..., B, T') at each replicate's drawn tasks."""
    return replicates[..., np.arange(draws.shape[0])[:, None], draws]


def pair_points(mine: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Points of `mine` (..., T) against each of `others` (n, ..., T): (n, ...), 2 per task won, 1 per tie."""
    diff = mine - others
    return 2 * (diff > TIE_TOLERANCE).sum(axis=-1) + (np.abs(diff) <= TIE_TOLERANCE).sum(axis=-1)


def dominance_points(means: np.ndarray) -> np.ndarray:
    """(C, ..., T) per-task means of a comparison set -> (C, ...) points each wins against the others.

    Each pair shares exactly 2 points per task, so only one side of each
    pair is compared.
    """
    n, n_tasks = means.shape[0], means.shape[-1]
    points = np.zeros(means.shape[:-1], dtype=np.int64)
    for i in range(n - 1):
        mine = pair_points(means[i], means[i + 1 :])  # (n - i - 1, ...)
        points[i] += mine.sum(axis=0)
        points[i + 1 :] += 2 * n_tasks - mine
    return points


def dominance_share(points: np.ndarray, n_members: int, n_tasks: int) -> np.ndarray:
    """Points -> Dominance: the share of (other entry, task) pairs won, a tie counting one half."""
    return points / (2 * (n_members - 1) * n_tasks)


@dataclass
class Scope:
    """One scope's (all tasks, or one category's) task draws and what each entry makes of them."""

    draws: np.ndarray  # (B, T') positions in the board's tasks
    avg: dict[Hashable, np.ndarray] = field(default_factory=dict)  # entry -> (B,) Avg@k replicates
    best: dict[Hashable, np.ndarray] = field(default_factory=dict)  # entry -> (B,) Best@k replicates
    points: dict[Hashable, np.ndarray] = field(default_factory=dict)  # member -> (B,) Dominance points

    @property
    def n_tasks(self) -> int:
        return self.draws.shape[1]


@dataclass
class Bootstrap:
    """Every entry's replicates on one board, and the Dominance points of the comparison set's members.

    `set_entry` replaces one entry (its scores changed, it joined or left the
    comparison set, it is new); `drop_entry` removes one. Built from nothing
    by `Bootstrap.build`, which is the reference the updates must equal.
    """

    n_resamples: int
    seed: int
    scopes: dict[str | None, Scope]
    means: dict[Hashable, np.ndarray] = field(default_factory=dict)  # entry -> (B, T) per-task Avg@k replicates
    members: set[Hashable] = field(default_factory=set)

    @classmethod
    def empty(
        cls, scope_positions: dict[str | None, Sequence[int]], n_resamples: int, seed: int
    ) -> Bootstrap:
        """No entries yet; `scope_positions` gives each scope's task positions (None: all tasks)."""
        scopes = {}
        for name, positions in scope_positions.items():
            # One draw of tasks for every scope, as its own generator: adding an entry never changes it.
            rng = np.random.default_rng((seed, 1))
            positions = np.asarray(positions, dtype=np.int64)
            draws = drawn_tasks(n_resamples, positions, rng) if len(positions) else np.zeros((n_resamples, 0), np.int64)
            scopes[name] = Scope(draws=draws)
        return cls(n_resamples=n_resamples, seed=seed, scopes=scopes)

    @classmethod
    def build(
        cls,
        scope_positions: dict[str | None, Sequence[int]],
        entries: Iterable[tuple[Hashable, np.ndarray, np.ndarray]],
        members: Iterable[Hashable],
        n_resamples: int,
        seed: int,
    ) -> Bootstrap:
        """From nothing: `entries` yields (entry, values (T, K), counts (T,)); `members` are the comparison set."""
        made = cls.empty(scope_positions, n_resamples, seed)
        for entry, values, counts in entries:
            made._replicate(entry, values, counts)
        made.members = set(members) & set(made.means)
        order = [e for e in made.means if e in made.members]
        for scope in made.scopes.values():
            if len(order) < 2:
                continue
            points = dominance_points(np.stack([gathered(made.means[e], scope.draws) for e in order]))
            scope.points = dict(zip(order, points))
        return made

    def _replicate(self, entry: Hashable, values: np.ndarray, counts: np.ndarray) -> None:
        replicates = entry_resamples(values, counts, self.n_resamples, entry_rng(self.seed, entry))
        self.means[entry] = replicates[0]
        for scope in self.scopes.values():
            scope.avg[entry] = gathered(replicates[0], scope.draws).mean(axis=-1)
            scope.best[entry] = gathered(replicates[1], scope.draws).mean(axis=-1)

    def _leave(self, entry: Hashable) -> None:
        """Take a member's pairs out of every other member's points."""
        others = [e for e in self.members if e != entry]
        self.members.discard(entry)
        for scope in self.scopes.values():
            scope.points.pop(entry, None)
            if not others:
                continue
            mine = pair_points(gathered(self.means[entry], scope.draws), self._stacked(others, scope))
            for other, won in zip(others, mine):
                scope.points[other] = scope.points.get(other, 0) - (2 * scope.n_tasks - won)
            if len(others) == 1:
                scope.points.clear()  # one member alone has no Dominance

    def _join(self, entry: Hashable) -> None:
        """Add a member's pairs to every other member's points, and its own."""
        others = [e for e in self.members if e != entry]
        self.members.add(entry)
        if not others:
            return
        for scope in self.scopes.values():
            mine = pair_points(gathered(self.means[entry], scope.draws), self._stacked(others, scope))
            for other, won in zip(others, mine):
                # A member that was alone had no points: it starts from 0.
                scope.points[other] = scope.points.get(other, 0) + (2 * scope.n_tasks - won)
            scope.points[entry] = mine.sum(axis=0)

    def _stacked(self, entries: list[Hashable], scope: Scope) -> np.ndarray:
        return gathered(np.stack([self.means[e] for e in entries]), scope.draws)

    def set_entry(self, entry: Hashable, values: np.ndarray, counts: np.ndarray, member: bool) -> None:
        """One entry's scores are now `values`/`counts`, in the comparison set or not."""
        if entry in self.members:
            self._leave(entry)
        self._replicate(entry, values, counts)
        if member:
            self._join(entry)

    def drop_entry(self, entry: Hashable) -> None:
        if entry in self.members:
            self._leave(entry)
        self.means.pop(entry, None)
        for scope in self.scopes.values():
            scope.avg.pop(entry, None)
            scope.best.pop(entry, None)
