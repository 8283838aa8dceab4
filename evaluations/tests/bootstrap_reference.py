"""The board's bootstrap worked out the plain way, for tests to hold the board's own to (not a conftest).

The board keeps each entry's replicates and updates them as rollouts come
(evaluations.figures.bootstrap); these build every entry's at once from the same
per-task generators, then draw the tasks, as the definition reads.
"""
from __future__ import annotations

import numpy as np

from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs


def rollout_resamples(table: agg.ScoreTable, n_resamples: int, seed: int) -> np.ndarray:
    """(2, E, B, T): every entry's replicates (bootstrap.entry_resamples), each from its own seeds."""
    values, counts = table.arrays()
    return np.stack(
        [bs.entry_resamples(values[i], counts[i], n_resamples, seed, e, table.tasks) for i, e in enumerate(table.entries)],
        axis=1,
    )


def bootstrap_tasks(
    rollouts: np.ndarray, positions: np.ndarray, rng: np.random.Generator, categories: list[str] | None = None
) -> np.ndarray:
    """(..., B, T') per-task figures of B resamples of the tasks at `positions`, drawn within each category
    (`categories`, by position; None: one stratum): the same drawn tasks for every entry."""
    n = rollouts.shape[-2]
    strata = [positions] if categories is None else [
        positions[[categories[p] == c for p in positions]] for c in sorted({categories[p] for p in positions})
    ]
    draws = np.concatenate([positions_drawn(n, s, rng) for s in strata], axis=1)
    return bs.gathered(rollouts, draws)


def positions_drawn(n_resamples: int, positions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B, T') `positions` drawn with replacement, written out here rather than taken from the board's code."""
    return positions[rng.integers(0, len(positions), size=(n_resamples, len(positions)))]
