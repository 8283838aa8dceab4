"""Ranking rules against hand-made tables (evaluations.figures.ranking)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluations.figures import ranking


@pytest.mark.parametrize(
    "intervals, ranks",
    [
        ([], []),
        ([(0.2, 0.3)], [1]),
        ([(0.5, 0.7), (0.4, 0.6), (0.1, 0.2)], [1, 1, 3]),  # two overlap; both lie wholly above the third
        ([(0.5, 0.7), (0.3, 0.45), (0.1, 0.2)], [1, 2, 3]),  # all separated
        # A chain of overlaps is no longer one block: the first lies wholly above the third.
        ([(0.5, 0.7), (0.3, 0.55), (0.1, 0.35)], [1, 1, 2]),
        ([(0.1, 0.35), (0.5, 0.7), (0.3, 0.55), (0.0, 0.05)], [2, 1, 1, 4]),  # input order is irrelevant
        ([(0.2, 0.3), (0.2, 0.3)], [1, 1]),
        ([(0.3, 0.5), (0.1, 0.3)], [1, 1]),  # touching intervals are not separated
        ([(0.9, 0.95), (0.1, 0.92), (0.5, 0.6)], [1, 1, 2]),  # a wide interval separates from nothing
        # The synthetic board of the issue: 0.415-0.565 and 0.179-0.271 must not share a rank.
        ([(0.415, 0.565), (0.385, 0.526), (0.293, 0.428), (0.179, 0.271)], [1, 1, 1, 4]),
    ],
)
def test_interval_ranks(intervals, ranks):
    assert ranking.interval_ranks(intervals) == ranks


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 0.3)), min_size=1, max_size=10))
def test_interval_ranks_separate_exactly_the_separated(raw):
    intervals = [(lo, lo + width) for lo, width in raw]
    ranks = ranking.interval_ranks(intervals)
    assert min(ranks) == 1
    for (lo1, hi1), r1 in zip(intervals, ranks):
        for (lo2, hi2), r2 in zip(intervals, ranks):
            if lo1 > hi2:  # wholly above: always a better rank
                assert r1 < r2
            if lo1 <= hi2 and lo2 <= hi1 and (lo1, hi1) == (lo2, hi2):
                assert r1 == r2


@pytest.mark.parametrize(
    "values, ranks",
    [
        ([0.5, 0.2, 0.9], [2, 3, 1]),
        ([0.5, 0.5, 0.1], [1, 1, 3]),  # ties share the better rank, the next skips
        ([0.3], [1]),
        ([0.1 + 0.2, 0.3], [1, 1]),  # equal up to rounding is a tie
    ],
)
def test_competition_ranks(values, ranks):
    assert ranking.competition_ranks(np.array(values)).tolist() == ranks


def test_rank_ranges_from_paired_replicates():
    # Three entries, ten replicates each (columns are replicates, paired).
    replicates = np.array(
        [
            [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9],  # always first
            [0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.5, 0.6],  # second or third
            [0.6, 0.5, 0.55, 0.5, 0.55, 0.5, 0.55, 0.5, 0.55, 0.5],
        ]
    )
    assert ranking.rank_ranges(replicates) == [(1, 1), (2, 3), (2, 3)]


def test_rank_ranges_drop_rare_ranks_outside_the_95_percent():
    # Entry 0 is first in 99 of 100 replicates and second once; entry 1 the reverse.
    first = np.full(100, 0.5)
    second = np.full(100, 0.4)
    second[0] = 0.6
    assert ranking.rank_ranges(np.vstack([first, second])) == [(1, 1), (2, 2)]


def test_rank_ranges_of_nothing():
    assert ranking.rank_ranges(np.zeros((0, 5))) == []
