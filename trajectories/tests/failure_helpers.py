"""Rows for the failure-analysis tests, made with the ORM (no importer needed)."""
from __future__ import annotations

from datetime import timedelta
from itertools import count

from django.contrib.auth import get_user_model
from django.utils import timezone

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from trajectories.models import Rollout, Step

_seq = count(1)

INSTRUCTION = "| `/app/solve.c` | **Edit** |\n| `/app/Makefile` | Read-only |\n\n- Do not modify `Makefile`.\n"


def task(name: str = "hash_join", version: str = "1.1", category: str = "system_optimization") -> Task:
    benchmark_version, _ = BenchmarkVersion.objects.get_or_create(name=version)
    found, _ = Task.objects.get_or_create(
        version=benchmark_version,
        name=name,
        defaults={"category": category, "budget_sec": 7200, "instruction": INSTRUCTION, "direction": "lower"},
    )
    return found


def model(name: str = "model-a") -> AgentModel:
    return AgentModel.objects.get_or_create(name=name)[0]


def harness(name: str = "terminus-2", version: str = "2.0.0") -> Harness:
    return Harness.objects.get_or_create(name=name, version=version)[0]


def rollout(*, used_sec: float = 7000, **fields) -> Rollout:
    """A finished rollout of a two-hour task that ran `used_sec` seconds."""
    start = timezone.now() - timedelta(hours=3)
    values = dict(
        trial_name=f"lib__task__{next(_seq):07d}",
        status="finished",
        reward=0.0,
        verifier_fields={"reward": 0.0},
        agent_started_at=start,
        agent_finished_at=start + timedelta(seconds=used_sec),
        n_benchmark_calls=5,
    )
    values.update(fields)
    values.setdefault("task", task())
    values.setdefault("model", model())
    values.setdefault("harness", harness())
    return Rollout.objects.create(**values)


def step(r: Rollout, step_id: int, kinds: str = "", diff: str = "") -> Step:
    return Step.objects.create(
        rollout=r, position=step_id - 1, step_id=step_id, source="agent", kinds=f" {kinds} " if kinds else "", diff=diff,
        elapsed_sec=step_id * 60.0,
    )  # fmt: skip


def user(username: str, *, staff: bool):
    return get_user_model().objects.create_user(username=username, password="pw-" + username, is_staff=staff)
