"""The clustered bootstrap (category -> task -> rollout): hand-computed cases, and Inspect's clustered standard error."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs


def table_of(scores: dict, categories: dict, entries=("a",)) -> agg.ScoreTable:
    tasks = list(dict.fromkeys(t for _, t in scores))
    return agg.ScoreTable(entries=list(entries), tasks=tasks, scores=scores, categories=categories)


def replicates(table: agg.ScoreTable, n: int = 2000, seed: int = 11, entry="a", scope=None) -> np.ndarray:
    return agg.build_bootstrap(table, table.entries, n, seed).scopes[scope].avg[entry]


@pytest.mark.parametrize(
    "positions, categories, strata",
    [
        ([0, 1, 2, 3], None, [[0, 1, 2, 3]]),
        ([0, 1, 2, 3], ["b", "a", "b", "a"], [[1, 3], [0, 2]]),  # categories in sorted order
        ([2, 3], ["b", "a", "b", "a"], [[3], [2]]),  # a scope's own positions only
        ([0, 2], ["b", "a", "b", "a"], [[0, 2]]),  # a category's scope: one stratum
        ([], ["a"], []),
    ],
)
def test_strata_are_the_categories_of_a_scopes_tasks(positions, categories, strata):
    assert [s.tolist() for s in bs.strata_of(positions, categories)] == strata


def test_tasks_are_redrawn_within_their_category_only():
    strata = [np.array([0, 1, 2]), np.array([5, 7])]
    draws = bs.clustered_task_draws(500, strata, np.random.default_rng(3))
    assert draws.shape == (500, 5)
    assert set(draws[:, :3].ravel()) == {0, 1, 2} and set(draws[:, 3:].ravel()) == {5, 7}
    # One stratum is the plain task draw, from the same generator.
    one = bs.clustered_task_draws(50, [strata[0]], np.random.default_rng(3))
    assert (one == bs.drawn_tasks(50, strata[0], np.random.default_rng(3))).all()


# Hand-computed cases: (scores, categories, what every replicate's Avg@k can be, its exact distribution or None).
CASES = {
    # Tasks alike within each category: stratified, every replicate keeps half alpha (0.5) and half beta (1.0):
    # the interval is the point 0.75 (an unstratified draw of 4 tasks could give anything from 0.5 to 1).
    "categories-fixed": (
        {("a", "t1"): [0.5, 0.5], ("a", "t2"): [0.5, 0.5], ("a", "t3"): [1.0, 1.0], ("a", "t4"): [1.0, 1.0]},
        {"t1": "alpha", "t2": "alpha", "t3": "beta", "t4": "beta"},
        {0.75: 1.0},
    ),
    # One task per category, one rollout: nothing to redraw.
    "nothing-to-redraw": (
        {("a", "t1"): [0.2], ("a", "t2"): [0.6]}, {"t1": "alpha", "t2": "beta"}, {0.4: 1.0},
    ),
    # Rollouts alone vary: two draws of {0, 1}: 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4.
    "rollouts-only": ({("a", "t1"): [0.0, 1.0]}, {"t1": "alpha"}, {0.0: 0.25, 0.5: 0.5, 1.0: 0.25}),
    # Tasks alone vary, in alpha: (mean of two draws of {0, 1} + beta's 0) / 2 -> 0, 1/4, 1/2 at 1/4, 1/2, 1/4.
    "tasks-only": (
        {("a", "t1"): [0.0], ("a", "t2"): [1.0], ("a", "t3"): [0.0], ("a", "t4"): [0.0]},
        {"t1": "alpha", "t2": "alpha", "t3": "beta", "t4": "beta"},
        {0.0: 0.25, 0.25: 0.5, 0.5: 0.25},
    ),
    # Both stages: one task per category, alpha's rollouts {0, 1}, beta's 1: (mean of two draws + 1) / 2.
    "both-stages": (
        {("a", "t1"): [0.0, 1.0], ("a", "t2"): [1.0]},
        {"t1": "alpha", "t2": "beta"},
        {0.5: 0.25, 0.75: 0.5, 1.0: 0.25},
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_hand_computed_distributions(name):
    scores, categories, expected = CASES[name]
    got = replicates(table_of(scores, categories), n=4000)
    values, counts = np.unique(np.round(got, 12), return_counts=True)
    assert sorted(values.tolist()) == sorted(expected)
    for value, count in zip(values.tolist(), counts.tolist()):
        p = expected[value]
        assert count / len(got) == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / len(got)) + 1e-12)


def test_a_category_scope_is_the_same_draw_as_before():
    """A category is one stratum: its replicates are those of the plain task draw (the per-category boards unchanged)."""
    scores, categories, _ = CASES["tasks-only"]
    table = table_of(scores, categories)
    boot = agg.build_bootstrap(table, ["a"], 300, 5)
    values, counts = table.arrays()
    per_task = bs.entry_resamples(values[0], counts[0], 300, 5, "a", table.tasks)[0]
    plain = bs.gathered(per_task, bs.drawn_tasks(300, np.array([0, 1]), np.random.default_rng((5, 1)))).mean(axis=-1)
    assert (boot.scopes["alpha"].avg["a"] == plain).all()


def test_seeded_and_reproducible():
    scores, categories, _ = CASES["both-stages"]
    table = table_of(scores, categories)
    assert (replicates(table, seed=1) == replicates(table, seed=1)).all()
    assert not (replicates(table, seed=1) == replicates(table, seed=2)).all()


def inspect_clustered_se(scores: np.ndarray, clusters: np.ndarray) -> float:
    """Inspect's `stderr(cluster=...)`, written out: the standard error of the mean of all scores with
    cluster-robust variance, sqrt(G / (G - 1) * sum over clusters of (sum of residuals)^2) / n."""
    n = len(scores)
    residuals = scores - scores.mean()
    names = np.unique(clusters)
    sums = np.array([residuals[clusters == c].sum() for c in names])
    g = len(names)
    return math.sqrt(g / (g - 1) * (sums**2).sum()) / n


def fixed_dataset(n_tasks: int, k: int, categories: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(20260510)
    difficulty = rng.uniform(0.05, 0.95, n_tasks)
    scores = {("a", f"t{j:02}"): np.clip(rng.normal(difficulty[j], 0.1, k), 0, 1).round(3).tolist() for j in range(n_tasks)}
    return scores, {f"t{j:02}": f"c{j % categories}" for j in range(n_tasks)}


def test_the_task_stage_is_inspects_clustered_standard_error():
    """One rollout a task, one category: the bootstrap's SE is Inspect's clustered SE times sqrt((G - 1) / G)
    (the bootstrap divides by G, Inspect by G - 1), to the bootstrap's own noise."""
    scores, _ = fixed_dataset(30, 1, 1)
    table = table_of(scores, {t: "one" for _, t in scores})
    flat = np.array([s for v in scores.values() for s in v])
    clusters = np.array([t for (_, t), v in scores.items() for _ in v])
    expected = inspect_clustered_se(flat, clusters) * math.sqrt(29 / 30)
    assert np.std(replicates(table, n=20000)) == pytest.approx(expected, rel=0.02)


def test_the_clustered_bootstrap_agrees_with_inspects_clustered_standard_error():
    """Three rollouts a task, four categories of like tasks: the two-stage, stratified bootstrap's SE lies
    within 15% of Inspect's clustered SE with clusters = tasks (the rollout stage adds a little, the
    strata take a little away)."""
    scores, categories = fixed_dataset(40, 3, 4)
    table = table_of(scores, categories)
    flat = np.array([s for v in scores.values() for s in v])
    clusters = np.array([t for (_, t), v in scores.items() for _ in v])
    se = inspect_clustered_se(flat, clusters)
    boot = np.std(replicates(table, n=10000))
    assert agg.all_figures(table, ["a"], 10)[None]["a"].avg == pytest.approx(flat.mean())  # balanced: the same mean
    assert 0.85 < boot / se < 1.15, (boot, se)
