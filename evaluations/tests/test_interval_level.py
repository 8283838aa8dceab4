"""The intervals' level is 95%: pinned on data whose percentiles are known, through every place that uses it."""
from __future__ import annotations

import numpy as np

from evaluations import aggregation as agg
from evaluations import ranking

from .board_factories import CATEGORIES, SCORES


def test_intervals_take_the_2_5_and_97_5_percentiles():
    # The p-th percentile of 0, 1, ..., 1000 is 10 p: 25 and 975, where a 90% interval would give 50 and 950.
    samples = np.arange(1001.0)
    assert agg.percentile_interval(samples).tolist() == [25.0, 975.0]
    # Along an axis, as the board asks for one interval per entry.
    both = np.vstack([samples, 2 * samples])
    assert agg.percentile_interval(both, axis=1).T.tolist() == [[25.0, 975.0], [50.0, 1950.0]]


def test_board_intervals_are_those_percentiles_of_the_paired_replicates():
    """Avg@k's interval is the 2.5th and 97.5th percentiles of the entry's bootstrap Avg@k (Best@k's likewise)."""
    table = agg.ScoreTable(entries=["A", "B", "C"], tasks=["t1", "t2", "t3", "t4"], scores=SCORES, categories=CATEGORIES)
    n, seed = 400, 7
    figures = agg.scope_figures(table, comparison={"A", "B", "C"}, n_resamples=n, seed=seed)
    rollouts = agg.rollout_resamples(table, n, seed)
    positions = np.arange(len(table.tasks))
    means, bests = agg.bootstrap_tasks(rollouts, positions, np.random.default_rng((seed, 1)))
    for i, entry in enumerate(table.entries):
        assert figures[entry].avg_ci == tuple(np.percentile(means[i].mean(axis=-1), [2.5, 97.5]))
        assert figures[entry].best_ci == tuple(np.percentile(bests[i].mean(axis=-1), [2.5, 97.5]))


def test_rank_ranges_cover_95_percent_of_the_replicates():
    # Entry 0 is second in 4% of 1000 replicates: inside the top 2.5% tail's reach (95% keeps it), outside 90%'s.
    first = np.full(1000, 0.5)
    second = np.full(1000, 0.4)
    second[:40] = 0.6
    assert ranking.rank_ranges(np.vstack([first, second])) == [(1, 2), (1, 2)]
