"""Real worker processes for the runner's tests: `celery -A autolab_site worker` on Redis.

A worker is a subprocess that sees this test's database (SQLite file or
PostgreSQL test database), so the tests that use one commit their rows
(`django_db(transaction=True)`).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

ROOT = Path(django_settings.BASE_DIR)
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


def redis_client(url: str | None = None):
    import redis

    return redis.Redis.from_url(url or broker_url())


def purge() -> None:
    redis_client().flushdb()


def process_env(tmp_path: Path, broker: str, settings) -> dict[str, str]:
    """The environment of a worker or command process: this test's database, broker and folders.

    `settings` is pytest-django's fixture: this process uses the same folders.
    """
    data = tmp_path / "data"
    settings.TRIALS_DIR = data / "trials"
    settings.SANDBOX_DIR = data / "sandboxes"
    # The artifact storage is what every process shares.
    shared = tmp_path / "artifacts"
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(shared)}}}
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker,
        "AUTOLAB_DATA_DIR": str(data),
        "AUTOLAB_TRIALS_DIR": str(settings.TRIALS_DIR),
        "AUTOLAB_SANDBOX_DIR": str(settings.SANDBOX_DIR),
        "AUTOLAB_ARTIFACTS_DIR": str(shared),
        "AUTOLAB_RUNNER_HEARTBEAT_SEC": "0.5",
        "OPENAI_API_KEY": "dummy-worker-key",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONUNBUFFERED": "1",
        # podman-compose is beside this Python, in the venv.
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    if connection.settings_dict["ENGINE"].endswith("sqlite3"):
        # The test database is the worker's database: no separate test DB name.
        env["AUTOLAB_TEST_DB"] = connection.settings_dict["NAME"]
    return env


class Worker:
    def __init__(self, env: dict, log: Path, *, concurrency: int = 1, queues: tuple[str, ...] = QUEUES):
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "autolab_site", "worker", "-Q", ",".join(queues),
             "--concurrency", str(concurrency), "--pool", "prefork", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"autolab-test-{os.getpid()}-{time.monotonic_ns()}@%h", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the worker and its pool, as a machine crash would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def wait_ready(self, timeout: float = 120) -> None:
        wait_for(lambda: " ready." in self.log.read_text(errors="replace"), self, timeout, "the worker to start")

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-5000:]

    def check(self) -> None:
        """Fail at once when the worker died or a task crashed."""
        if self.process.poll() is not None:
            pytest.fail(f"the worker exited:\n{self.output()}")
        if "raised unexpected" in self.log.read_text(errors="replace"):
            pytest.fail(f"a task crashed in the worker:\n{self.output()}")


def manage(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def evaluate(env: dict, *args: str, backend: str = "bubblewrap", k: int = 1, started: bool = True) -> str:
    """`manage.py evaluate ...`; with `started`, also wait until a worker's preflight has passed."""
    from evaluations.models import Campaign

    done = manage(env, "evaluate", *args, "--backend", backend, "--k", str(k))
    assert done.returncode == 0, done.stderr
    if started:
        campaign = Campaign.objects.order_by("-pk").first()
        wait_for(lambda: Campaign.objects.get(pk=campaign.pk).status != Campaign.Status.CHECKING, None, 180,
                 f"a worker's preflight of campaign {campaign.pk}")
        campaign.refresh_from_db()
        assert campaign.status != Campaign.Status.FAILED, campaign.status_reason
    return done.stdout


def wait_for(predicate, worker: Worker | None, timeout: float = 120, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if worker is not None:
            worker.check()
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}" + (f"; worker log:\n{worker.output()}" if worker else ""))
