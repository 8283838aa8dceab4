"""The incremental bootstrap equals the full recompute, bit for bit, after any sequence of changes.

A board is updated one entry at a time when a rollout is added, superseded or
regraded (evaluations.bootstrap); the full recompute (`aggregation.all_figures`
without a kept bootstrap) is the reference.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluations import aggregation as agg
from evaluations import bootstrap as bs

ENTRIES = ["a", "b", "c", "d", "e"]
TASKS = ["t1", "t2", "t3", "t4", "t5"]
CATEGORIES = {"t1": "x", "t2": "x", "t3": "y", "t4": "y", "t5": "y"}
# Few distinct scores: ties (which Dominance counts as halves) are common.
SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0])
N_RESAMPLES = 40

operations = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(ENTRIES), st.sampled_from(TASKS), SCORES),
    st.tuples(st.just("supersede"), st.sampled_from(ENTRIES), st.sampled_from(TASKS), st.integers(0, 3)),
    st.tuples(st.just("regrade"), st.sampled_from(ENTRIES), st.sampled_from(TASKS), SCORES),
    st.tuples(st.just("leave"), st.sampled_from(ENTRIES), st.just(None), st.just(None)),  # staff take it out
    st.tuples(st.just("rejoin"), st.sampled_from(ENTRIES), st.just(None), st.just(None)),
)


def table_of(scores: dict, entries: list[str]) -> agg.ScoreTable:
    return agg.ScoreTable(
        entries=entries, tasks=TASKS, scores={k: v for k, v in scores.items() if v}, categories=CATEGORIES
    )


def comparison_of(scores: dict, entries: list[str], out: set[str]) -> set[str]:
    """As the board's: entries with something counted, unless staff took them out."""
    return {e for e in entries if e not in out and any(scores.get((e, t)) for t in TASKS)}


@settings(max_examples=60, deadline=None)
@given(st.lists(operations, min_size=1, max_size=25))
def test_incremental_figures_equal_the_full_recompute(ops):
    scores: dict[tuple[str, str], list[float]] = {}
    out: set[str] = set()
    entries: list[str] = []
    boot = agg.build_bootstrap(table_of(scores, entries), set(), N_RESAMPLES)
    for op, entry, task, value in ops:
        rollouts = scores.setdefault((entry, task), []) if task else None
        if op == "add":
            rollouts.append(value)
        elif op == "supersede" and rollouts:
            rollouts.pop(value % len(rollouts))
        elif op == "regrade" and rollouts:
            rollouts[-1] = value
        elif op == "leave":
            out.add(entry)
        elif op == "rejoin":
            out.discard(entry)
        if entry not in entries and any(scores.get((entry, t)) for t in TASKS):
            entries.append(entry)
        table = table_of(scores, entries)
        comparison = comparison_of(scores, entries, out)
        if entry in entries:
            (_, values, counts), = agg.entry_scores(table, [entry])
            boot.set_entry(entry, values, counts, member=entry in comparison)
        assert agg.all_figures(table, comparison, N_RESAMPLES, boot=boot) == agg.all_figures(table, comparison, N_RESAMPLES)


def test_an_entry_dropped_leaves_the_others_as_if_it_never_was():
    scores = {("a", "t1"): [1.0], ("b", "t1"): [0.5], ("c", "t2"): [0.25, 1.0]}
    boot = agg.build_bootstrap(table_of(scores, ["a", "b", "c"]), {"a", "b", "c"}, N_RESAMPLES)
    boot.drop_entry("c")
    del scores[("c", "t2")]
    table = table_of(scores, ["a", "b"])
    assert agg.all_figures(table, {"a", "b"}, N_RESAMPLES, boot=boot) == agg.all_figures(table, {"a", "b"}, N_RESAMPLES)
    # Down to one member: no Dominance for anyone, as a board of one.
    boot.drop_entry("b")
    table = table_of({("a", "t1"): [1.0]}, ["a"])
    figures = agg.all_figures(table, {"a"}, N_RESAMPLES, boot=boot)
    assert figures == agg.all_figures(table, {"a"}, N_RESAMPLES)
    assert figures[None]["a"].dominance is None


def test_an_entrys_replicates_depend_on_its_own_rollouts_only():
    """A new rollout of one entry leaves another's intervals as they were: its draws are seeded by its name."""
    before = table_of({("a", "t1"): [0.5, 1.0], ("b", "t1"): [0.25]}, ["a", "b"])
    after = table_of({("a", "t1"): [0.5, 1.0], ("b", "t1"): [0.25, 0.5, 1.0, 0.0]}, ["a", "b"])
    first = agg.scope_figures(before, {"a", "b"}, n_resamples=200)["a"]
    second = agg.scope_figures(after, {"a", "b"}, n_resamples=200)["a"]
    assert (first.avg_ci, first.best_ci) == (second.avg_ci, second.best_ci)


def test_dominance_points_are_two_per_win_and_one_per_tie():
    means = np.array([[1.0, 0.5], [0.5, 0.5], [0.0, 0.75]])
    # a: beats b and c on t1 (4), ties b and loses to c on t2 (1) -> 5 of 8; b: 2 + 1; c: 0 + 4.
    assert bs.dominance_points(means).tolist() == [5, 3, 4]
    assert agg.dominance(means).tolist() == [5 / 8, 3 / 8, 4 / 8]
