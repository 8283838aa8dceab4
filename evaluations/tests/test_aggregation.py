"""The leaderboard's figures against tables computed by hand."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluations.figures import aggregation as agg

# Three entries x four tasks x three rollouts (board_factories.SCORES). Ties:
# A and B on t1, A and C on t2 and t3, B and C on t4. A has no rollout on t4
# (counts 0).
from evaluations.tests.board_factories import CATEGORIES, SCORES  # noqa: E402


@pytest.fixture
def table() -> agg.ScoreTable:
    return agg.ScoreTable(entries=["A", "B", "C"], tasks=["t1", "t2", "t3", "t4"], scores=SCORES, categories=CATEGORIES)


def test_avg_best_dominance_by_hand(table):
    figures = agg.scope_figures(table, comparison={"A", "B", "C"}, n_resamples=200)
    # Per-task means A: .5 .2 .7 0 | B: .5 .1 1 .2 | C: 0 .2 .7 .2
    assert figures["A"].avg == pytest.approx(1.4 / 4)
    assert figures["B"].avg == pytest.approx(1.8 / 4)
    assert figures["C"].avg == pytest.approx(1.1 / 4)
    # Per-task maxima A: 1 .2 .9 0 | B: .5 .3 1 .4 | C: 0 .3 .7 .2
    assert figures["A"].best == pytest.approx(2.1 / 4)
    assert figures["B"].best == pytest.approx(2.2 / 4)
    assert figures["C"].best == pytest.approx(1.2 / 4)
    # Dominance per task (share of the 2 others beaten, ties 1/2):
    # A: .75 .75 .25 0 | B: .75 0 1 .75 | C: 0 .75 .25 .75
    assert figures["A"].dominance == pytest.approx(1.75 / 4)
    assert figures["B"].dominance == pytest.approx(2.5 / 4)
    assert figures["C"].dominance == pytest.approx(1.75 / 4)
    assert figures["A"].n_tasks == 3 and figures["A"].n_tasks_total == 4 and figures["A"].n_rollouts == 9
    assert figures["B"].n_tasks == 4 and figures["B"].n_rollouts == 12


def test_category_figures_weight_tasks_equally(table):
    scopes = agg.all_figures(table, comparison={"A", "B", "C"}, n_resamples=100)
    assert set(scopes) == {None, "alpha", "beta"}
    alpha = scopes["alpha"]
    assert alpha["A"].avg == pytest.approx(0.35)
    assert alpha["B"].avg == pytest.approx(0.3)
    assert alpha["C"].avg == pytest.approx(0.1)
    assert alpha["A"].dominance == pytest.approx(0.75)
    assert alpha["B"].dominance == pytest.approx(0.375)
    beta = scopes["beta"]
    assert beta["A"].avg == pytest.approx(0.35)  # .7 and a missing task
    assert beta["A"].n_tasks == 1 and beta["A"].n_tasks_total == 2


def test_entries_outside_the_comparison_set_get_no_dominance_or_rank(table):
    figures = agg.scope_figures(table, comparison={"A", "B"}, n_resamples=100)
    assert figures["C"].dominance is None and figures["C"].rank is None
    # A vs B alone: t1 tie, t2 A, t3 B, t4 B -> (.5 + 1 + 0 + 0) / 4
    assert figures["A"].dominance == pytest.approx(0.375)
    assert figures["A"].dominance + figures["B"].dominance == pytest.approx(1.0)
    # Avg and Best do not depend on the comparison set.
    assert figures["C"].avg == pytest.approx(1.1 / 4)


def test_intervals_contain_the_point_estimate_and_are_reproducible(table):
    first = agg.scope_figures(table, comparison={"A", "B", "C"}, n_resamples=300)
    again = agg.scope_figures(table, comparison={"A", "B", "C"}, n_resamples=300)
    for entry in "ABC":
        lo, hi = first[entry].avg_ci
        assert lo <= first[entry].avg <= hi
        assert lo < hi
        dlo, dhi = first[entry].dominance_ci
        assert 0 <= dlo <= dhi <= 1
        blo, bhi = first[entry].best_ci
        assert blo <= first[entry].best <= bhi
        assert first[entry].best_ci == again[entry].best_ci
        assert first[entry].avg_ci == again[entry].avg_ci


def test_single_entry_has_no_dominance():
    table = agg.ScoreTable(entries=["A"], tasks=["t1"], scores={("A", "t1"): [0.5]})
    figures = agg.scope_figures(table, comparison={"A"}, n_resamples=50)
    assert figures["A"].dominance is None
    assert figures["A"].rank == 1
    assert figures["A"].avg_ci == (0.5, 0.5)
    assert figures["A"].best_ci == (0.5, 0.5)


def test_best_interval_comes_from_the_best_of_redrawn_rollouts():
    # One task, rollouts 0 and 1: a redraw of two is best 1 unless both draws are the 0 (1 in 4).
    table = agg.ScoreTable(entries=["A"], tasks=["t1"], scores={("A", "t1"): [0.0, 1.0]})
    figures = agg.scope_figures(table, comparison={"A"}, n_resamples=2000)
    assert figures["A"].best == 1.0
    assert figures["A"].best_ci == (0.0, 1.0)
    assert figures["A"].avg_ci == (0.0, 1.0)


def test_medal_table_with_ties(table):
    medals = agg.medal_table(table, comparison={"A", "B", "C"})
    # t1: A, B gold (C scores 0: none) | t2: A, C gold, B bronze
    # t3: B gold, A, C silver | t4: B, C gold (A 0: none)
    assert medals["A"] == {"gold": 2, "silver": 1, "bronze": 0}
    assert medals["B"] == {"gold": 3, "silver": 0, "bronze": 1}
    assert medals["C"] == {"gold": 2, "silver": 1, "bronze": 0}


@pytest.mark.parametrize(
    "per_task, expected",
    [
        ({"a": 0.9, "b": 0.9, "c": 0.5, "d": 0.4}, {"a": "gold", "b": "gold", "c": "bronze"}),
        ({"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.4}, {"a": "gold", "b": "silver", "c": "silver"}),
        ({"a": 0.0, "b": 0.0}, {}),
        ({"a": 0.3, "b": 0.2, "c": 0.1, "d": 0.05}, {"a": "gold", "b": "silver", "c": "bronze"}),
    ],
)
def test_medals_for_task(per_task, expected):
    entries = list(per_task)
    places = agg.medal_places(np.array([[per_task[e]] for e in entries]))[:, 0]
    assert {e: agg.MEDALS[place] for e, place in zip(entries, places) if place >= 0} == expected


@pytest.mark.parametrize(
    "scores, k, expected",
    [
        ([0.0, 0.5, 1.0], 1, 0.5),
        ([0.0, 0.5, 1.0], 2, 2.5 / 3),  # pairs: .5, 1, 1
        ([0.0, 0.5, 1.0], 3, 1.0),
        ([0.6, 0.6, 0.9], 2, 2.4 / 3),  # pairs: .6, .9, .9
        ([0.1, 0.2, 0.3, 0.4], 2, (0.2 + 0.3 * 2 + 0.4 * 3) / 6),
        ([0.4], 3, 0.4),  # fewer rollouts than k: best available
        ([], 2, 0.0),
    ],
)
def test_expected_best_of_k(scores, k, expected):
    assert agg.expected_best_of_k(scores, k) == pytest.approx(expected)


def test_score_at_k_runs_from_avg_to_best(table):
    curve = agg.score_at_k(table, "A")
    assert curve == pytest.approx([1.4 / 4, (2.5 / 3 + 0.2 + 0.8 + 0) / 4, 2.1 / 4])


def test_expected_best_of_k_matches_enumeration():
    from itertools import combinations

    scores = [0.3, 0.0, 0.7, 0.7, 0.1]
    for k in range(1, 6):
        draws = list(combinations(scores, k))
        assert agg.expected_best_of_k(scores, k) == pytest.approx(sum(max(d) for d in draws) / len(draws))


def test_score_at_cut_is_zero_before_the_first_call_then_best_so_far():
    points = [(10.0, 0.2), (30.0, 0.5), (20.0, 0.4), (40.0, 0.3)]
    grid = np.array([0.0, 9.9, 10.0, 15.0, 25.0, 30.0, 45.0])
    assert agg.score_at_cut(points, grid).tolist() == pytest.approx([0, 0, 0.2, 0.2, 0.4, 0.5, 0.5])
    assert agg.score_at_cut([], grid).tolist() == [0.0] * 7


@pytest.mark.parametrize(
    "points, final, expected",
    [
        # The reward replaces the local best from the rollout's end on.
        ([(0.2, 0.5)], (0.6, 0.9), [0, 0.5, 0.9, 0.9]),
        # What the agent saw of its own runs never shows above its graded result (issue 43).
        ([(0.2, 0.5)], (0.6, 0.3), [0, 0.3, 0.3, 0.3]),
        ([(0.2, 1.0), (0.4, 0.2)], (0.6, 0.0), [0, 0, 0, 0]),
        # No benchmark call at all: 0 until the end, then the reward.
        ([], (0.6, 0.7), [0, 0, 0.7, 0.7]),
        # Ended past the budget (or time unknown, taken as 1): the reward at the budget.
        ([(0.2, 0.5)], (1.4, 0.8), [0, 0.5, 0.5, 0.8]),
    ],
)
def test_score_at_cut_ends_at_the_reward(points, final, expected):
    grid = np.array([0.0, 0.4, 0.8, 1.0])
    assert agg.score_at_cut(points, grid, final).tolist() == pytest.approx(expected)


def test_budget_curve_averages_rollouts_then_tasks_and_ends_at_avg():
    grid = np.array([0.0, 0.5, 1.0])
    curves = {
        "t1": [([(0.25, 0.4)], (1.0, 0.4)), ([(0.75, 0.8)], (1.0, 0.7))],
        "t2": [([(0.1, 1.0)], (0.9, 1.0))],
    }
    # t1: (0, .2, .55); t2: (0, 1, 1); t3: no rollout -> 0; mean over 3 tasks.
    result = agg.budget_curve(curves, ["t1", "t2", "t3"], grid)
    assert result.tolist() == pytest.approx([0.0, 1.2 / 3, 1.55 / 3])


@pytest.mark.parametrize(
    "reward, clip, expected",
    [(None, True, 0.0), (1.7, True, 1.0), (1.7, False, 1.7), (-0.2, True, 0.0), (0.42, True, 0.42), (float("nan"), False, 0.0)],
)
def test_counted_reward(reward, clip, expected):
    from tasks.scoring import clipped, counted_reward

    assert counted_reward(reward, clip) == pytest.approx(expected)
    assert clipped(reward, clip) == (reward is not None and reward == reward and expected != reward)


def test_pareto_frontier():
    points = {"cheap": (1.0, 0.3), "mid": (5.0, 0.6), "worse": (6.0, 0.5), "top": (20.0, 0.7), "same": (5.0, 0.6), "unknown": (None, 0.9)}
    assert agg.pareto_frontier(points) == {"cheap", "mid", "same", "top"}


def test_usage_sums_known_values_only():
    usage = agg.Usage()
    usage.add(cost_usd=2.0, input_tokens=100, output_tokens=10, agent_seconds=1800, benchmark_calls=3)
    usage.add(cost_usd=None, input_tokens=None, output_tokens=None, agent_seconds=1800, benchmark_calls=1)
    data = usage.as_dict()
    assert data["cost_usd"] == 2.0 and data["cost_known_rollouts"] == 1
    assert data["input_tokens"] == 100 and data["output_tokens"] == 10
    assert data["agent_hours"] == 1.0
    assert data["benchmark_calls_per_hour"] == 4.0
    assert agg.Usage().as_dict()["cost_usd"] is None
    # Calls not known (the agent's own account): per hour over the rollouts whose calls are known only.
    usage.add(cost_usd=None, input_tokens=None, output_tokens=None, agent_seconds=3600, benchmark_calls=None)
    assert usage.as_dict()["agent_hours"] == 2.0 and usage.as_dict()["benchmark_calls_per_hour"] == 4.0
    alone = agg.Usage()
    alone.add(cost_usd=None, input_tokens=None, output_tokens=None, agent_seconds=3600, benchmark_calls=None)
    assert alone.as_dict()["benchmark_calls_per_hour"] is None


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=2, max_value=7).flatmap(
        lambda n: st.lists(
            st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 1.0]), min_size=n, max_size=n),
            min_size=1,
            max_size=6,
        )
    )
)
def test_dominance_averages_one_half(per_task_rows):
    means = np.array(per_task_rows).T  # (entries, tasks)
    assert agg.dominance(means).mean() == pytest.approx(0.5)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_dominance_of_a_comparison_set_averages_one_half(data):
    entries = ["e%d" % i for i in range(data.draw(st.integers(2, 5)))]
    tasks = ["t%d" % i for i in range(data.draw(st.integers(1, 4)))]
    scores = {}
    for e in entries:
        for t in tasks:
            rollouts = data.draw(st.lists(st.sampled_from([0.0, 0.3, 0.6, 1.0]), max_size=3))
            if rollouts:
                scores[(e, t)] = rollouts
    table = agg.ScoreTable(entries=entries, tasks=tasks, scores=scores)
    figures = agg.scope_figures(table, comparison=entries, n_resamples=20)
    assert np.mean([figures[e].dominance for e in entries]) == pytest.approx(0.5)


def test_scope_figures_alone_equal_those_of_all_figures(table):
    scopes = agg.all_figures(table, comparison={"A", "B", "C"}, n_resamples=100)
    alone = agg.scope_figures(table, comparison={"A", "B", "C"}, category="beta", n_resamples=100)
    assert alone == scopes["beta"]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda k: st.lists(st.lists(st.floats(0, 1), min_size=k, max_size=k), min_size=1, max_size=5)
    )
)
def test_score_at_k_runs_from_avg_at_1_to_best_at_k(per_task):
    tasks = [f"t{i}" for i in range(len(per_task))]
    table = agg.ScoreTable(entries=["e"], tasks=tasks, scores={("e", t): s for t, s in zip(tasks, per_task)})
    figures = agg.scope_figures(table, comparison=["e"], n_resamples=10)["e"]
    curve = agg.score_at_k(table, "e")
    assert curve[0] == pytest.approx(figures.avg)
    assert curve[-1] == pytest.approx(figures.best)
    assert all(a <= b + 1e-12 for a, b in zip(curve, curve[1:]))


@pytest.mark.parametrize(
    "text, decimals", [("0.350", 3), ("0.2", 1), ("1", 0), ("0.4375", 4), ("4.4e-1", 2), ("", 3), ("n/a", 3),
                      ("0.35000000000000003", 10), ("1e-300", 10), ("1e-40000", 10)]
)
def test_printed_decimals(text, decimals):
    assert agg.printed_decimals(text) == decimals


@pytest.mark.parametrize(
    "published, decimals, ours, expected",
    [
        (0.44, 2, 0.4375, True),  # rounds to .44
        (0.44, 2, 0.4349, False),
        (0.350, 3, 0.3504999, True),
        (0.350, 3, 0.3506, False),
        (1.0, 0, 0.6, True),  # printed as "1": anything that rounds to 1
    ],
)
def test_reproduces(published, decimals, ours, expected):
    assert agg.reproduces(published, decimals, ours) is expected


@pytest.mark.parametrize(
    "rows, k, values, counts",
    [
        ([[1.0, 0.5], [], [0.25]], None, [[1.0, 0.5], [0.0, 0.0], [0.25, 0.0]], [2, 0, 1]),
        ([[0.5]], 3, [[0.5, 0.0, 0.0]], [1]),
        ([[], []], None, [[0.0], [0.0]], [0, 0]),  # k is at least 1
        ([], None, np.zeros((0, 1)), []),
    ],
)
def test_scores_are_padded_with_zero_and_counted(rows, k, values, counts):
    got_values, got_counts = agg.padded(rows, k)
    assert got_values.tolist() == np.asarray(values).tolist() and got_counts.tolist() == counts


def test_the_table_and_each_entry_are_padded_alike():
    """ScoreTable.arrays (every entry at once) and entry_scores (the incremental board's, one entry) agree."""
    table = agg.ScoreTable(
        entries=["a", "b"], tasks=["t1", "t2"], scores={("a", "t1"): [1.0, 0.5, 0.0], ("b", "t2"): [0.25]},
    )
    values, counts = table.arrays()
    for i, (entry, entry_values, entry_counts) in enumerate(agg.entry_scores(table)):
        k = entry_values.shape[1]
        assert entry == table.entries[i] and counts[i].tolist() == entry_counts.tolist()
        assert values[i, :, :k].tolist() == entry_values.tolist() and not values[i, :, k:].any()
