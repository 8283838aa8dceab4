"""The runner's production path in real containers: a real Celery worker runs a campaign on podman and on docker.

The example tasks x oracle, nop and the scripted stub driving terminus-2,
k = 1, as `manage.py evaluate` sends them; then a worker killed mid-trial,
whose container the reaper removes and whose rollout runs again, once.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from evaluations.demo import demo_model_and_harness
from evaluations.models import Campaign
from evaluations.running.reaper import reap
from evaluations.running.stub_llm import start_stub_server
from tasks.services import import_tasks
from trajectories import statuses
from trajectories.models import Rollout, RolloutStatus, Step

from evaluations.tests.container_helpers import containers_of
from evaluations.tests.runner_helpers import import_examples, utility_entry
from evaluations.tests.sandbox_helpers import TINY_TASK
from evaluations.tests.worker_helpers import Worker, evaluate, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.containers, pytest.mark.django_db(transaction=True)]

EXAMPLE_TASKS = ("count_primes", "ring_classifier", "sort8_network")


def test_example_campaign_in_containers_through_a_worker(worker_env, tmp_path, settings, engine):
    server = start_stub_server(port=0)
    worker = Worker(worker_env, tmp_path / "worker.log", concurrency=2)
    try:
        settings.STUB_LLM_PORT = server.port
        import_examples()
        utility_entry("oracle")
        utility_entry("nop")
        demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub (not a model)")
        for model, harness in (("oracle", "oracle"), ("nop", "nop"), ("scripted-stub", "terminus-2")):
            evaluate(worker_env, "--model", model, "--harness", harness, "--version", "examples", backend=engine)
        assert Rollout.objects.count() == 9
        stub = Rollout.objects.filter(model__name="scripted-stub")
        live_steps = 0
        deadline = time.monotonic() + 900
        while Rollout.objects.filter(status__in=statuses.ACTIVE).exists():
            if Step.objects.filter(rollout__in=stub.filter(status__in=statuses.ACTIVE)).exists():
                live_steps = max(live_steps, Step.objects.filter(rollout__in=stub).count())
            assert time.monotonic() < deadline, worker.output()
            worker.check()
            time.sleep(0.5)
    finally:
        worker.kill()
        server.shutdown()

    rewards = {(r.model.name, r.task.name): r for r in Rollout.objects.select_related("model", "task")}
    for (model, task), rollout in rewards.items():
        assert rollout.status == RolloutStatus.FINISHED, (model, task, list(rollout.events.values_list("detail")))
        assert rollout.attempts == 1 and rollout.worker, list(rollout.events.values_list("detail", flat=True))
    for task in EXAMPLE_TASKS:
        assert rewards[("oracle", task)].reward > 0, task
        assert rewards[("nop", task)].reward == 0.0, task
    assert rewards[("oracle", "sort8_network")].reward == pytest.approx(1.0)
    assert live_steps > 0, "the stub's steps streamed in while it ran"
    assert all(rewards[("scripted-stub", task)].n_steps > 0 for task in EXAMPLE_TASKS)
    assert set(Campaign.objects.values_list("status", flat=True)) == {Campaign.Status.FINISHED}
    assert containers_left(engine) == []
    assert list(Path(worker_env["AUTOLAB_SANDBOX_DIR"]).iterdir()) == []


def containers_left(engine: str) -> list[str]:
    """Every container of every rollout's trial: its agent's and its verifier's."""
    return [name for rollout in Rollout.objects.all() for name in containers_of(rollout.trial_name, engine)]


def slow_task(tmp_path: Path, seconds: int) -> Path:
    """The tiny task, whose reference solution takes `seconds` first: something to kill a worker under."""
    task = tmp_path / "slow_tasks" / "slow_sum"
    shutil.copytree(TINY_TASK, task)
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text().replace("#!/bin/bash\n", f"#!/bin/bash\nsleep {seconds}\n", 1))
    return task


def test_a_worker_killed_mid_trial_leaves_no_container_and_its_rollout_runs_once_more(worker_env, tmp_path, engine):
    report = import_tasks(slow_task(tmp_path, 20).parent, version="slow")
    assert report.ok, report.summary()
    utility_entry("oracle")
    first = Worker(worker_env, tmp_path / "worker-1.log")
    try:
        evaluate(worker_env, "--model", "oracle", "--harness", "oracle", "--version", "slow", backend=engine)
        rollout = Rollout.objects.get()
        session = f"{rollout.trial_name}__env"
        wait_for(lambda: Rollout.objects.get(pk=rollout.pk).status == RolloutStatus.RUNNING
                 and containers_of(session, engine),
                 first, 300, "the rollout to run in its container")
    finally:
        first.kill()
    # conmon (podman) or dockerd keeps the container alive without its worker: that is what the reaper is for.
    assert containers_of(session, engine)
    time.sleep(1.5)
    report = reap(stale_after=1, enqueue=True)
    assert report.requeued == [rollout.pk]
    assert containers_of(session, engine) == []

    second = Worker(worker_env, tmp_path / "worker-2.log")
    try:
        wait_for(lambda: Rollout.objects.get(pk=rollout.pk).status not in statuses.ACTIVE, second, 300,
                 "the re-queued rollout to finish")
    finally:
        second.kill()
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.FINISHED and rollout.reward == 1.0
    assert rollout.attempts == 2 and Rollout.objects.count() == 1
    details = list(rollout.events.values_list("detail", flat=True))
    assert sum(detail.startswith("attempt ") for detail in details) == 2
    assert any(detail.startswith("re-queued: no heartbeat") for detail in details)
    assert containers_left(engine) == []
