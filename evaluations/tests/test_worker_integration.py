"""A real `celery -A autolab_site worker` on Redis runs, cancels and survives losing rollouts (bubblewrap).

Campaigns are created with the real `manage.py evaluate` command, which
sends the messages.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.conf import settings

from evaluations.demo import demo_model_and_harness
from evaluations.running.reaper import reap
from evaluations.running.stub_llm import start_stub_server
from evaluations.sandbox.bubblewrap import sandbox_pids
from tasks.services import import_tasks
from trajectories import statuses
from trajectories.models import Rollout, RolloutStatus, Step

from evaluations.tests.runner_helpers import import_examples, utility_entry
from evaluations.tests.sandbox_helpers import TASKS, require_sandbox
from evaluations.tests.worker_helpers import evaluate, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def needs_bubblewrap():
    require_sandbox()


def import_runner_tasks():
    report = import_tasks(TASKS, version="runner-tests")
    assert report.ok, report.summary()


def test_worker_runs_terminus_and_streams_steps(worker, worker_env):
    server = start_stub_server(port=0)
    try:
        settings.STUB_LLM_PORT = server.port
        import_examples()
        demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub (not a model)")
        evaluate(worker_env, "--model", "scripted-stub", "--harness", "terminus-2", "--version", "examples",
                 "--tasks", "sort8_network")
        rollout = Rollout.objects.get()
        live_steps = 0
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            status = Rollout.objects.filter(pk=rollout.pk).values_list("status", flat=True).get()
            if status not in statuses.ACTIVE:
                break
            live_steps = max(live_steps, Step.objects.filter(rollout_id=rollout.pk).count())
            worker.check()
            time.sleep(0.2)
        rollout.refresh_from_db()
        assert rollout.status == RolloutStatus.FINISHED, worker.output()
        assert live_steps > 0
        assert rollout.reward == pytest.approx(1.0)
        assert rollout.n_benchmark_calls == 2 and rollout.n_edits >= 1
        assert [point["metric"] for point in rollout.curve] == [28.0, 19.0]
        assert rollout.celery_task_id and rollout.attempts == 1
        assert rollout.heartbeat_at is not None
    finally:
        server.shutdown()


def run_sleepy_oracle(worker, worker_env):
    """Start the oracle on the slow "sleepy" task; (its rollout, its sandbox marker) once it runs."""
    import_runner_tasks()
    utility_entry("oracle")
    evaluate(worker_env, "--model", "oracle", "--harness", "oracle", "--version", "runner-tests", "--tasks", "sleepy")
    rollout = Rollout.objects.get()
    marker = f"{rollout.trial_name}__env"
    wait_for(lambda: Rollout.objects.get(pk=rollout.pk).status == RolloutStatus.RUNNING and sandbox_pids(marker),
             worker, what="the rollout to run")
    return rollout, marker


def test_cancelling_a_running_rollout_stops_its_sandbox(worker, worker_env):
    rollout, marker = run_sleepy_oracle(worker, worker_env)
    from evaluations.running.campaigns import cancel_rollout

    assert cancel_rollout(Rollout.objects.get(pk=rollout.pk))
    wait_for(lambda: Rollout.objects.get(pk=rollout.pk).status == RolloutStatus.CANCELLED, worker, 60,
             "the cancel to land")
    wait_for(lambda: not sandbox_pids(marker), worker, 10, "the sandbox processes to go")
    assert not (Path(worker_env["AUTOLAB_SANDBOX_DIR"]) / marker).exists()
    assert Rollout.objects.count() == 1


def test_killing_the_worker_mid_trial_requeues_the_same_rollout(worker, worker_env, settings):
    rollout, marker = run_sleepy_oracle(worker, worker_env)
    worker.kill()
    # The sandbox dies with the worker (its holder has --die-with-parent).
    deadline = time.monotonic() + 10
    while sandbox_pids(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sandbox_pids(marker)
    time.sleep(1.5)

    report = reap(stale_after=1, enqueue=False)
    assert report.requeued == [rollout.pk]
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.QUEUED and rollout.attempts == 1
    assert "no heartbeat" in rollout.events.last().detail

    # Out of attempts, the next loss is a failed infrastructure rollout.
    settings.RUNNER_MAX_ATTEMPTS = 1
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.RUNNING)
    assert reap(stale_after=1, enqueue=False).failed == [rollout.pk]
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.FAILED and rollout.infra_error
    assert Rollout.objects.count() == 1


def test_the_scripted_stub_launches_with_a_preflight_no_stub_server_running(worker_env, tmp_path, settings):
    """The preflight called the stub's endpoint before any worker served it: the launch page could not launch it."""
    from evaluations.tests.test_runner_sync import free_port
    from evaluations.tests.worker_helpers import Worker

    port = free_port()
    settings.STUB_LLM_PORT = port
    worker = Worker({**worker_env, "AUTOLAB_STUB_LLM_PORT": str(port)}, tmp_path / "stub-worker.log")
    try:
        import_examples()
        demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub (not a model)")
        evaluate(worker_env, "--model", "scripted-stub", "--harness", "terminus-2", "--version", "examples",
                 "--tasks", "sort8_network")  # waits for the preflight, which must pass
        rollout = Rollout.objects.get()
        wait_for(lambda: Rollout.objects.get(pk=rollout.pk).status not in statuses.ACTIVE, worker, 240,
                 "the stub's rollout to end")
        rollout.refresh_from_db()
        assert rollout.status == RolloutStatus.FINISHED and rollout.reward == pytest.approx(1.0), worker.output()
    finally:
        worker.kill()
