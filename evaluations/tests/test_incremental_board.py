"""The incremental bootstrap equals the full recompute, bit for bit, after any sequence of changes.

A board is updated one entry at a time when a rollout is added, superseded or
regraded (evaluations.figures.bootstrap); the full recompute (`aggregation.all_figures`
without a kept bootstrap) is the reference.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs

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


# --- the board from the database --------------------------------------------

import dataclasses  # noqa: E402
import random  # noqa: E402

import pytest  # noqa: E402

from agents.models import AgentModel, Harness  # noqa: E402
from evaluations.boards import compute  # noqa: E402
from evaluations.models import Entry  # noqa: E402
from trajectories.models import Rollout  # noqa: E402

from evaluations.tests.board_factories import hand_table, make_rollout  # noqa: E402
from evaluations.tests.bootstrap_reference import rollout_resamples  # noqa: E402

REWARDS = [0.0, 0.2, 0.5, 0.5, 1.0, 1.25, None]  # 1.25 is clipped by the version; None counts 0


def same(incremental, full) -> None:
    """Two boards equal in every figure (the time they were computed aside)."""
    assert dataclasses.replace(incremental, computed_at=0.0) == dataclasses.replace(full, computed_at=0.0)


def change_something(rng: random.Random, world: dict, harnesses: list, models: list) -> str:
    """One random change a live campaign or staff make to a version's rollouts."""
    rollouts = list(Rollout.objects.filter(task__version=world["version"]).order_by("pk"))
    op = rng.choice(["add", "add", "supersede", "regrade", "delete", "infra", "rerun"])
    if op == "add" or not rollouts:
        make_rollout(
            rng.choice(list(world["tasks"].values())), rng.choice(models), rng.choice(harnesses), rng.choice(REWARDS),
            index=rng.randrange(100), curve=[{"t": 600, "best_score": rng.random()}],
        )
        return "add"
    rollout = rng.choice(rollouts)
    if op == "supersede":
        rollout.superseded = not rollout.superseded
    elif op == "regrade":
        rollout.reward = rng.choice(REWARDS)
    elif op == "infra":
        rollout.infra_error = not rollout.infra_error
    elif op == "rerun":
        rollout.status = "running" if rollout.status == "finished" else "finished"
    if op == "delete":
        rollout.delete()
    else:
        rollout.save()
    return op


@pytest.mark.django_db
@pytest.mark.parametrize("seed", range(6))
def test_the_updated_board_equals_the_full_recompute_after_random_changes(seed):
    rng = random.Random(seed)
    world = hand_table()
    version = world["version"]
    other = Harness.objects.create(name="openhands", version="1.0")
    newcomer = AgentModel.objects.create(name="model-n", display_name="Model N", open_weight=True)
    models = [*world["models"].values(), newcomer]
    harnesses = [world["harness"], other]
    compute.updated_board(version)
    compute.updated_board(version, harness=world["harness"].id)
    for step in range(25):
        change_something(rng, world, harnesses, models)
        if step == 12:  # staff take an entry out of the comparison: every entry's Dominance moves
            Entry.objects.create(model=world["models"]["B"], harness=world["harness"], version=version, in_comparison=False)
        same(compute.updated_board(version), compute.compute_board(version))
        if step % 5 == 0:
            same(
                compute.updated_board(version, harness=world["harness"].id),
                compute.compute_board(version, harness=world["harness"].id),
            )


@pytest.mark.django_db
def test_a_new_rollout_reads_its_entry_alone():
    world = hand_table()
    version, tasks, harness, models = world["version"], world["tasks"], world["harness"], world["models"]
    _, kept = compute._updated(version, None, None)
    assert kept.n_read == Rollout.objects.count()
    make_rollout(tasks["t1"], models["A"], harness, 0.75, index=9)
    data, kept = compute._updated(version, None, None)
    assert kept.n_read == Rollout.objects.filter(model=models["A"]).count()
    same(data, compute.compute_board(version))
    # Nothing changed: nothing read.
    assert compute._updated(version, None, None)[1].n_read == 0


def test_a_new_rollout_changes_its_tasks_replicates_alone():
    """Each task's draws have their own generator: a fourth rollout on t1 leaves the entry's t2 replicates as they were."""
    before = table_of({("a", "t1"): [0.5, 1.0, 0.0], ("a", "t2"): [0.25, 0.75]}, ["a"])
    after = table_of({("a", "t1"): [0.5, 1.0, 0.0, 1.0], ("a", "t2"): [0.25, 0.75]}, ["a"])
    first, second = rollout_resamples(before, 100, 7), rollout_resamples(after, 100, 7)
    assert (first[:, :, :, 1] == second[:, :, :, 1]).all()
    assert not (first[:, :, :, 0] == second[:, :, :, 0]).all()
