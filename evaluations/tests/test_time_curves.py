"""RE-Bench's curves from score logs, against hand-computed cases."""
from __future__ import annotations

import pytest

from evaluations.figures.time_curves import (
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


# Boundaries, each side of each: a score logged at exactly 4 h, runs of exactly 8 h.
EDGE = {"t": [Run(points=((4 * H, 0.7318), (1 * H, 0.6432)), end=8 * H, final=0.75),
              Run(points=((4 * H, 0.7318), (1 * H, 0.6432)), end=8 * H, final=0.75)]}


@pytest.mark.parametrize(
    "budget, k, expected",
    [
        (8 * H, 2, 0.7318),  # cut at exactly 4 h: the 4 h score counts (floating point once cut at 14399.99999 s)
        (8 * H - 1, 2, 0.6432),  # a second short of it: the 1 h score
        (16 * H, 2, 0.75),  # cut at exactly 8 h, the runs' end: their final scores
        (16 * H - 1, 2, 0.7318),
        (8 * H, 1, 0.75),
        (8 * H - 1, 1, 0.7318),
        (16 * H + 1, 2, None),  # past the data
    ],
)
def test_every_boundary_of_a_budget_cut(budget, k, expected):
    got = allocation(EDGE, ["t"], budget).by_k.get(k)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_the_grid_ends_exactly_at_k_times_the_longest_run_and_its_cuts_are_exact():
    from fractions import Fraction

    from evaluations.figures.time_curves import budget_grid

    grid = budget_grid([EDGE])
    assert grid[0] == Fraction(1 * H) and grid[-1] == Fraction(16 * H)  # k = 2 runs of 8 h
    assert all(b.denominator == 1 for b in grid)
    assert allocation(EDGE, ["t"], grid[-1]).by_k[2] == pytest.approx(0.75)
    assert elapsed_curve(EDGE, ["t"], [8 * H, 8 * H + 1]) == [pytest.approx(0.75), None]


def test_the_grids_8_hour_budget_cut_in_two_keeps_the_score_logged_at_4_hours():
    """The issue's case: this grid's 8 h point was 28799.99999999998 s, so k = 2 cut below 4 h (0.6432, not 0.7318)."""
    from evaluations.figures.time_curves import budget_grid

    runs = {"t": [Run(points=((0.5 * H, 0.6432), (4 * H, 0.7318)), end=16 * H, final=0.8)] * 2}
    grid = budget_grid([runs])
    eight_hours = min(grid, key=lambda b: abs(b - 8 * H))
    assert eight_hours == 8 * H
    assert allocation(runs, ["t"], eight_hours).by_k[2] == pytest.approx(0.7318)
