"""Paired differences, Holm, rank ranges from paired intervals and runs needed: hand cases."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from evaluations.figures import aggregation as agg
from evaluations.figures import paired
from evaluations.figures.ranking import INTERVAL_PERCENT


def table_of(scores: dict, categories: dict) -> agg.ScoreTable:
    entries = list(dict.fromkeys(e for e, _ in scores))
    tasks = list(dict.fromkeys(t for _, t in scores))
    return agg.ScoreTable(entries=entries, tasks=sorted(tasks), scores=scores, categories=categories)


@pytest.mark.parametrize(
    "p_values, adjusted",
    [
        ([0.01, 0.04, 0.03, 0.5], [0.04, 0.09, 0.09, 0.5]),  # 4 x .01, 3 x .03, max(2 x .04, .09), .5
        ([0.2, None, 0.01], [0.2, None, 0.02]),  # None is not a hypothesis: m = 2
        ([0.6, 0.6], [1.0, 1.0]),  # capped at 1
        ([], []),
    ],
)
def test_holm(p_values, adjusted):
    assert paired.holm(p_values) == pytest.approx(adjusted)


def test_runs_needed_solves_the_normal_approximation():
    z = NormalDist().inv_cdf(0.5 + INTERVAL_PERCENT / 200)
    # Rollouts alone vary: z * sqrt(0.5 / (10 k)) < 0.1 -> k > 0.5 z^2 / (10 x 0.01).
    assert paired.runs_needed(0.1, 0.0, 0.5, 10) == math.ceil(0.5 * z**2 / (10 * 0.01))
    assert paired.runs_needed(-0.1, 0.0, 0.5, 10) == paired.runs_needed(0.1, 0.0, 0.5, 10)
    # The tasks' own spread is too wide for the difference: no number of rollouts separates them.
    assert paired.runs_needed(0.1, 10 * (0.1 / z) ** 2, 0.5, 10) is None
    assert paired.runs_needed(0.0, 0.0, 0.5, 10) is None
    assert paired.runs_needed(0.3, 0.0, 0.0, 4) == 1
    assert paired.runs_needed(0.3, 0.0, 0.5, 1) is None  # one task: no spread across tasks to go by


# Per-task means a: .5 .2 .7 | b: .5 .1 1 .2 (b's t4 is not a's: left out of the pair).
PAIR = {
    ("a", "t1"): [0.5, 0.5], ("a", "t2"): [0.2, 0.2], ("a", "t3"): [0.7, 0.7],
    ("b", "t1"): [0.5, 0.5], ("b", "t2"): [0.1, 0.1], ("b", "t3"): [1.0, 1.0], ("b", "t4"): [0.2, 0.2],
}
CATEGORIES = {"t1": "alpha", "t2": "alpha", "t3": "beta", "t4": "beta"}


def test_the_difference_is_over_the_tasks_both_have():
    table = table_of(PAIR, CATEGORIES)
    overall, alpha, beta = paired.compare(table, "a", "b", n_resamples=2000, seed=3)
    assert overall.n_tasks == 3 and overall.difference == pytest.approx((0 + 0.1 - 0.3) / 3)
    assert alpha.n_tasks == 2 and alpha.difference == pytest.approx(0.05)
    assert beta.n_tasks == 1 and beta.difference == pytest.approx(-0.3)
    # Rollouts alike within a task: beta (one task) has no spread at all, alpha redraws {0, .1}: 0, .05, .1.
    assert beta.ci == pytest.approx((-0.3, -0.3)) and beta.p_ahead == 0.0
    assert not beta.separated and beta.runs_needed is None  # one task: nothing claimed
    assert alpha.ci == pytest.approx((0.0, 0.1)) and alpha.p_ahead == pytest.approx(0.875, abs=0.03)  # 3/4 + 1/4 / 2
    # Overall: alpha's two redrawn, beta's one fixed: (d1 + d2 - 0.3) / 3, d in {0, .1}.
    assert overall.ci == pytest.approx((-0.1, (0.2 - 0.3) / 3))
    assert overall.p_ahead == 0.0 and overall.separated


def test_an_entry_against_itself():
    table = table_of({("a", "t1"): [0.1, 0.9], ("a", "t2"): [0.3, 0.5]}, {"t1": "x", "t2": "y"})
    d, replicates = paired.paired_difference(table, "a", "a", n_resamples=200)
    assert d.difference == 0 and d.ci == (0.0, 0.0) and d.p_ahead == 0.5 and d.p_value == 1.0
    assert not d.separated and d.runs_needed is None


def test_turned_and_holm_over_categories():
    table = table_of(PAIR, CATEGORIES)
    pairs = paired.pairwise(table, ["a", "b"], "alpha", n_resamples=500, seed=1)
    ab, ba = pairs[("a", "b")], pairs[("b", "a")]
    assert ba.difference == -ab.difference and ba.ci == (-ab.ci[1], -ab.ci[0]) and ba.p_ahead == 1 - ab.p_ahead
    compared = paired.compare(table, "a", "b", n_resamples=500, seed=1)
    raw = [d.p_value for d in compared[1:]]
    assert [d.p_holm for d in compared[1:]] == pytest.approx(paired.holm(raw))


def test_rank_ranges_from_paired_intervals():
    """a is surely above c; b is separated from neither: a 1-2, b 1-3, c 2-3."""
    def d(x, y, diff, separated):
        ci = (diff - 0.01, diff + 0.01) if separated else (diff - 1, diff + 1)
        return paired.PairedDifference(x, y, None, 4, diff, ci, 0.5, 0.5, 0.5, None, 0.1)

    pairs = {}
    for key, value in {("a", "b"): d("a", "b", 0.1, False), ("a", "c"): d("a", "c", 0.3, True), ("b", "c"): d("b", "c", 0.2, False)}.items():
        pairs[key] = value
        pairs[key[::-1]] = paired.turned(value)
    assert paired.rank_ranges(["a", "b", "c"], pairs) == {"a": (1, 2), "b": (1, 3), "c": (2, 3)}


def test_field_names_carry_level_and_method():
    table = table_of(PAIR, CATEGORIES)
    fields = paired.compare(table, "a", "b", n_resamples=100)[0].as_dict()
    assert f"avg_difference_ci{INTERVAL_PERCENT}_paired_clustered_bootstrap_low" in fields
    assert "p_first_ahead_paired_clustered_bootstrap" in fields and "p_value_holm_over_categories" in fields


def test_variance_parts():
    # Per-task differences .4 and 0; rollout variances (ddof 1) a: .02 and 0, b: 0 and .02; k = 2.
    scores = {("a", "t1"): [0.5, 0.7], ("a", "t2"): [0.3, 0.3], ("b", "t1"): [0.2, 0.2], ("b", "t2"): [0.2, 0.4]}
    table = table_of(scores, {"t1": "x", "t2": "x"})
    between, within, k = paired.variance_parts(table, "a", "b", np.array([0, 1]))
    # within: mean of (.02 + 0, 0 + .02) = .02; explained per task .02 / 2 = .01; spread var(.4, 0) = .08.
    assert (between, within, k) == pytest.approx((0.08 - 0.01, 0.02, 2.0))
