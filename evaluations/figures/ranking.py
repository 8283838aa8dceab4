"""Ranks of a comparison set: plain rules over intervals and bootstrap replicates.

Two rules, each a pure function with a table of cases in
tests/test_ranking.py; a benchmark with another convention adds its rule
beside them.

- `interval_ranks` (the leaderboard's rank, LMArena's rule): an entry's rank
  is 1 + the number of entries whose 95% interval lies wholly above its own
  (their lower bound above its upper bound). Entries whose intervals overlap
  may share a rank, but an entry whose interval lies wholly above another's
  always ranks better: the rank separates exactly what the intervals
  separate, and nothing is merged through a chain of overlaps. Touching
  intervals do not separate.
- `rank_ranges`: in every paired bootstrap replicate (the same tasks drawn
  for every entry) the entries are ranked by their replicate figure
  (`competition_ranks`); an entry's rank range is the 2.5-97.5 % range of its
  ranks over the replicates.

Two figures closer than TIE_TOLERANCE are a tie: the same rewards averaged in
a different order must not decide a comparison. Dominance and medals
(evaluations.figures.aggregation) use the same tolerance.

INTERVAL_PERCENT is the level of every interval the board shows: Avg@k's,
Best@k's and Dominance's (evaluations.figures.aggregation) and the rank ranges
here. The pages and the API print it from here, never a number of their own.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

TIE_TOLERANCE = 1e-9
INTERVAL_PERCENT = 95
# The two percentiles an interval spans: (2.5, 97.5), exactly (in percent, so no rounding moves them).
INTERVAL_PERCENTILES = ((100 - INTERVAL_PERCENT) / 2, (100 + INTERVAL_PERCENT) / 2)


def interval_ranks(intervals: Sequence[tuple[float, float]]) -> list[int]:
    """1 + the number of intervals lying wholly above each interval."""
    lows = np.array([lo for lo, _ in intervals], dtype=float)
    return [1 + int((lows > hi).sum()) for _, hi in intervals]


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the first axis, higher values first; ties share the better rank.

    (C,) or (C, B) -> the same shape: 1 + the number of entries strictly
    (beyond TIE_TOLERANCE) above, so [.9, .9, .5] ranks 1, 1, 3.
    """
    values = np.asarray(values, dtype=float)
    ranks = np.empty(values.shape, dtype=np.int64)
    for i in range(values.shape[0]):
        ranks[i] = 1 + (values > values[i] + TIE_TOLERANCE).sum(axis=0)
    return ranks


def rank_ranges(replicates: np.ndarray, level: float = INTERVAL_PERCENT / 100) -> list[tuple[int, int]]:
    """(C, B) replicate figures -> each entry's (low, high) rank over the middle `level` of replicates."""
    if len(replicates) == 0:
        return []
    return ranges_of_ranks(competition_ranks(replicates), level)


def ranges_of_ranks(ranks: np.ndarray, level: float = INTERVAL_PERCENT / 100) -> list[tuple[int, int]]:
    """(C, B) ranks in each replicate -> each entry's (low, high) rank over the middle `level` of replicates."""
    if len(ranks) == 0:
        return []
    tail = (1 - level) / 2 * 100
    lows = np.percentile(ranks, tail, axis=1, method="lower")
    highs = np.percentile(ranks, 100 - tail, axis=1, method="higher")
    return [(int(lo), int(hi)) for lo, hi in zip(lows, highs)]
