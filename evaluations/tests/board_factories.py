"""Small ORM fixtures for the leaderboard tests (not a conftest: plain functions)."""
from __future__ import annotations

import itertools
from datetime import timedelta

from django.utils import timezone

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from trajectories.models import Rollout

_names = itertools.count()

# The hand-computed table of evaluations/tests/test_aggregation.py:
# Avg A .35, B .45, C .275; Best A .525, B .55, C .3; Dominance A .4375, B .625, C .4375.
SCORES = {
    ("A", "t1"): [1.0, 0.5, 0.0],
    ("A", "t2"): [0.2, 0.2, 0.2],
    ("A", "t3"): [0.6, 0.6, 0.9],
    ("B", "t1"): [0.5, 0.5, 0.5],
    ("B", "t2"): [0.0, 0.0, 0.3],
    ("B", "t3"): [1.0, 1.0, 1.0],
    ("B", "t4"): [0.4, 0.2, 0.0],
    ("C", "t1"): [0.0, 0.0, 0.0],
    ("C", "t2"): [0.2, 0.1, 0.3],
    ("C", "t3"): [0.7, 0.7, 0.7],
    ("C", "t4"): [0.2, 0.2, 0.2],
}
CATEGORIES = {"t1": "alpha", "t2": "alpha", "t3": "beta", "t4": "beta"}


def make_rollout(task: Task, model: AgentModel, harness: Harness, reward: float | None, **fields) -> Rollout:
    start = timezone.now() - timedelta(hours=2)
    defaults = {
        "trial_name": f"trial-{next(_names)}",
        "status": "finished",
        "agent_started_at": start,
        "agent_finished_at": start + timedelta(hours=1),
        "n_input_tokens": 1000,
        "n_output_tokens": 100,
        "cost_usd": 0.5,
        "n_benchmark_calls": 4,
    }
    defaults.update(fields)
    return Rollout.objects.create(task=task, model=model, harness=harness, reward=reward, **defaults)


def hand_table(version_name: str = "1.1", with_excluded: bool = True) -> dict:
    """The hand table in the database, plus rollouts that must not count."""
    version = BenchmarkVersion.objects.create(name=version_name, clip_rewards=True)
    tasks = {
        name: Task.objects.create(version=version, name=name, category=category, budget_sec=3600)
        for name, category in CATEGORIES.items()
    }
    harness = Harness.objects.create(name="terminus-2", version="2.0.0")
    models = {
        "A": AgentModel.objects.create(name="model-a", display_name="Model A", open_weight=False),
        "B": AgentModel.objects.create(name="model-b", display_name="Model B", open_weight=True),
        "C": AgentModel.objects.create(name="model-c", display_name="Model C", open_weight=False),
    }
    for (entry, task), scores in SCORES.items():
        for index, score in enumerate(scores):
            make_rollout(tasks[task], models[entry], harness, score, index=index)
    if with_excluded:
        # None of these may move a figure.
        make_rollout(tasks["t4"], models["A"], harness, 1.0, infra_error=True, index=3)
        make_rollout(tasks["t1"], models["C"], harness, 1.0, superseded=True, index=4)
        make_rollout(tasks["t2"], models["C"], harness, None, status="running", index=5)
        make_rollout(tasks["t3"], models["C"], harness, 1.0, status="cancelled", index=6)
    return {"version": version, "tasks": tasks, "harness": harness, "models": models}


def build_boards(*versions, harness: int | None = None, open_weight: bool | None = None) -> None:
    """Build the boards a test's pages then serve: every version's (or those given), for these filters.

    A page never builds a board (evaluations.boards.serving): it serves the
    one stored, or says that it is being built. A test that adds rollouts
    and then reads a page builds its board here first, as the boards
    queue's worker would have.
    """
    from tasks.models import BenchmarkVersion

    from evaluations.boards import serving

    for version in versions or BenchmarkVersion.objects.all():
        serving.build(version, harness, open_weight)
