"""RE-Bench's curves from score logs, against hand-computed cases."""
from __future__ import annotations

import pytest

from evaluations.time_curves import (
    Run,
    allocation,
    budget_curve,
    cost_points,
    data_end,
    elapsed_curve,
    score_at,
)

H = 3600.0


def run(early: float, late: float, end: float = 16 * H) -> Run:
    """A run that scores `early` after 1 h and `late` at its end (16 h)."""
    return Run(points=((1 * H, early),), end=end, final=late)


# One task, four 16-hour runs. At 1 h they score 0.2, 0.6, 0.4, 0.5; at their end 0.9, 0.7, 0.5, 0.6.
RUNS = {"t": [run(0.2, 0.9), run(0.6, 0.7), run(0.4, 0.5), run(0.5, 0.6)]}

# Worked by hand. k=1 at L: the mean of the runs cut at L. k=2 at L=2 h: sorted
# [0.2, 0.4, 0.5, 0.6] -> (0.4*1 + 0.5*2 + 0.6*3) / C(4,2) = 3.2/6. k=4: the best of all four.
ALLOCATIONS = [
    # budget, {k: score}, best k
    (1 * H, {1: 0.425, 2: 0.0, 4: 0.0}, 1),  # half-hour and quarter-hour runs have scored nothing yet
    (4 * H, {1: 0.425, 2: 3.2 / 6, 4: 0.6}, 4),  # four 1-hour runs beat one 4-hour run
    (8 * H, {1: 0.425, 2: 3.2 / 6, 4: 0.6}, 4),
    (16 * H, {1: 0.675, 2: 3.2 / 6, 4: 0.6}, 1),  # one 16-hour run (its final scores) beats four 4-hour ones
    (32 * H, {2: 0.9 * 0.5 + 0.7 * 2 / 6 + 0.6 * 1 / 6, 4: 0.6}, 2),  # k=1 would need a 32-hour run: beyond the data
]


@pytest.mark.parametrize("budget, by_k, best_k", ALLOCATIONS)
def test_allocation_table(budget, by_k, best_k):
    got = allocation(RUNS, ["t"], budget)
    assert got.by_k == pytest.approx(by_k)
    assert got.best_k == best_k
    assert got.best == pytest.approx(by_k[best_k])


def test_the_best_allocation_moves_from_four_short_runs_to_one_long_run():
    curve = budget_curve(RUNS, ["t"], [4 * H, 16 * H])
    assert [a.best_k for a in curve] == [4, 1]


def test_no_extrapolation_past_the_longest_run():
    assert data_end(RUNS) == 16 * H
    assert allocation(RUNS, ["t"], 128 * H).best is None  # even k=4 would need 32-hour runs


@pytest.mark.parametrize(
    "cut, expected",
    [
        (0.5 * H, 0.0),  # before the first score
        (1 * H, 0.7),
        (3 * H, 0.7),  # the best so far, not the latest (0.3)
        (10 * H, 0.7),
        (16 * H, 0.7),  # the final 0.4 does not lower it
    ],
)
def test_best_of_the_score_log_so_far(cut, expected):
    log = Run(points=((1 * H, 0.7), (2 * H, 0.3)), end=16 * H, final=0.4)
    assert score_at(log, cut) == pytest.approx(expected)


@pytest.mark.parametrize("cut, expected", [(1 * H, 0.7), (3 * H, 0.3), (16 * H, 0.4)])
def test_final_only_counts_the_last_submission(cut, expected):
    log = Run(points=((1 * H, 0.7), (2 * H, 0.3)), end=16 * H, final=0.4, final_only=True)
    assert score_at(log, cut) == pytest.approx(expected)


def test_a_task_without_runs_counts_zero_and_k_needs_k_runs_everywhere():
    runs = {"a": RUNS["t"], "b": [run(1.0, 1.0)]}
    got = allocation(runs, ["a", "b", "c"], 16 * H)
    assert got.by_k == {1: pytest.approx((0.675 + 1.0 + 0.0) / 3)}  # "b" has one run: no k=2 or 4


def test_elapsed_curve_is_the_mean_best_so_far_and_stops_with_the_data():
    curve = elapsed_curve(RUNS, ["t"], [0.0, 1 * H, 16 * H, 20 * H])
    assert curve == [pytest.approx(0.0), pytest.approx(0.425), pytest.approx(0.675), None]


def test_cost_points_are_the_budget_at_an_hourly_rate():
    curve = budget_curve(RUNS, ["t"], [4 * H, 16 * H])
    assert cost_points(curve, 100.0) == [
        {"cost": pytest.approx(400.0), "score": pytest.approx(0.6), "budget": 4 * H, "k": 4},
        {"cost": pytest.approx(1600.0), "score": pytest.approx(0.675), "budget": 16 * H, "k": 1},
    ]
    assert cost_points(curve, None) == []
