"""A real `celery -A autolab_site worker` on Redis runs, cancels and survives losing rollouts.

The worker is a subprocess that sees this test's database (SQLite file or
PostgreSQL test database), so the tests use committed rows
(`django_db(transaction=True)`). Campaigns are created with the real
`manage.py evaluate` command, which sends the messages.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from evaluations.campaigns import demo_model_and_harness, reap_stale
from evaluations.sandbox.bubblewrap import sandbox_pids
from evaluations.stub_llm import start_stub_server
from tasks.services import import_tasks
from trajectories.models import ACTIVE_STATUSES, Rollout, RolloutStatus, Step

from .runner_helpers import import_examples, utility_entry
from .sandbox_helpers import TASKS, require_sandbox

pytestmark = [pytest.mark.worker, pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]

ROOT = Path(settings.BASE_DIR)
QUEUES = ("cpu", "gpu")


def broker_url() -> str:
    url = os.environ.get("CELERY_BROKER_URL", "")
    return url if url.startswith("redis://") else "redis://127.0.0.1:6379/14"


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def purge() -> None:
    import redis

    client = redis.Redis.from_url(broker_url())
    client.delete(*QUEUES, "unacked", "unacked_index")


@pytest.fixture
def redis_broker():
    import redis

    try:
        redis.Redis.from_url(broker_url(), socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"Redis is not reachable at {broker_url()}")
    purge()
    yield broker_url()
    purge()


@pytest.fixture
def worker_env(tmp_path, redis_broker, settings):
    require_sandbox()
    data = tmp_path / "data"
    settings.TRIALS_DIR = data / "trials"
    settings.SANDBOX_DIR = data / "sandboxes"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": redis_broker,
        "AUTOLAB_DATA_DIR": str(data),
        "AUTOLAB_TRIALS_DIR": str(settings.TRIALS_DIR),
        "AUTOLAB_SANDBOX_DIR": str(settings.SANDBOX_DIR),
        "AUTOLAB_RUNNER_HEARTBEAT_SEC": "0.5",
        "OPENAI_API_KEY": "dummy-worker-key",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONUNBUFFERED": "1",
    }
    if connection.settings_dict["ENGINE"].endswith("sqlite3"):
        # The test database is the worker's database: no separate test DB name.
        env["AUTOLAB_TEST_DB"] = connection.settings_dict["NAME"]
    return env


class Worker:
    def __init__(self, env: dict, log: Path):
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "autolab_site", "worker", "-Q", ",".join(QUEUES),
             "--concurrency", "1", "--pool", "prefork", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"h7test-{os.getpid()}@%h", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        )

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-5000:]

    def check(self) -> None:
        """Fail at once when the worker died or a task crashed."""
        if self.process.poll() is not None:
            pytest.fail(f"the worker exited:\n{self.output()}")
        if "raised unexpected" in self.log.read_text(errors="replace"):
            pytest.fail(f"a task crashed in the worker:\n{self.output()}")


@pytest.fixture
def worker(worker_env, tmp_path):
    started = Worker(worker_env, tmp_path / "worker.log")
    yield started
    started.kill()


def evaluate(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args, "--backend", "bubblewrap", "--k", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def wait_for(predicate, worker: Worker, timeout: float = 120, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        worker.check()
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}; worker log:\n{worker.output()}")


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
            if status not in ACTIVE_STATUSES:
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
    from evaluations.campaigns import request_cancel

    assert request_cancel(Rollout.objects.get(pk=rollout.pk))
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

    report = reap_stale(stale_after=1, enqueue=False)
    assert report.requeued == [rollout.pk]
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.QUEUED and rollout.attempts == 1
    assert "no heartbeat" in rollout.events.last().detail

    # Out of attempts, the next loss is a failed infrastructure rollout.
    settings.RUNNER_MAX_ATTEMPTS = 1
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.RUNNING)
    assert reap_stale(stale_after=1, enqueue=False).failed == [rollout.pk]
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.FAILED and rollout.infra_error
    assert Rollout.objects.count() == 1
