"""Real worker processes for the runner's tests: `celery -A autolab_site worker` on Redis.

A worker is a subprocess that sees this test's database (SQLite file or
PostgreSQL test database), so the tests that use one commit their rows
(`django_db(transaction=True)`).

Each test session has a name space of its own on the broker (`BrokerNamespace`:
a key prefix, kombu's `global_keyprefix`, which its queues, bindings, unacked
messages and broadcast channels carry), so sessions that share a Redis
database (every session on a host, or CI's one URL) never read, take or
delete each other's messages; a session deletes only its own keys, never the
database. Every worker a session started is killed when it ends, and when
the session's process dies (`PR_SET_PDEATHSIG`).
"""
from __future__ import annotations

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache.backends.redis import RedisCache
from django.db import connection

ROOT = Path(django_settings.BASE_DIR)
QUEUES = ("cpu", "gpu")


def broker_url() -> str:
    url = os.environ.get("CELERY_BROKER_URL", "")
    return url if url.startswith("redis://") else "redis://127.0.0.1:6379/14"


# The variable the settings read kombu's global_keyprefix from (autolab_site/settings.py).
PREFIX_VARIABLE = "AUTOLAB_BROKER_KEY_PREFIX"


NAMESPACE = "autolab-test"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return pid > 0


@dataclass(frozen=True)
class BrokerNamespace:
    """A name space on a Redis broker: every key (and broadcast channel) its processes use starts with `prefix`."""

    url: str
    prefix: str

    @classmethod
    def new(cls, url: str | None = None) -> BrokerNamespace:
        """A name space no other session has: host, process and a random part."""
        return cls(url or broker_url(), f"{NAMESPACE}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}:")

    @classmethod
    def sweep(cls, url: str | None = None) -> int:
        """Delete the keys of this host's sessions whose process is gone (killed before it could clean)."""
        client = redis_client(url or broker_url())
        host = socket.gethostname()
        dead = [key for key in client.scan_iter(match=glob_escape(f"{NAMESPACE}:{host}:") + "*", count=1000)
                if not alive(int(key.decode(errors="replace").split(":")[2] or 0))]
        if dead:
            client.delete(*dead)
        return len(dead)

    @classmethod
    def of(cls, env: dict[str, str]) -> BrokerNamespace:
        """The name space a process environment (`process_env`) points at."""
        return cls(env["CELERY_BROKER_URL"], env[PREFIX_VARIABLE])

    def client(self):
        return redis_client(self.url)

    def key(self, name: str) -> str:
        """The Redis key of kombu's `name` (a queue's list, say) in this name space."""
        return self.prefix + name

    def waiting(self, queue: str) -> list[bytes]:
        """The raw messages waiting in `queue` (its list; kombu's global prefix does not cover LRANGE)."""
        return self.client().lrange(self.key(queue), 0, -1)

    def keys(self) -> list[bytes]:
        return list(self.client().scan_iter(match=glob_escape(self.prefix) + "*", count=1000))

    def clean(self) -> int:
        """Delete this name space's keys, and only them (never FLUSHDB: another session may share the database)."""
        keys = self.keys()
        if keys:
            self.client().delete(*keys)
        return len(keys)

    def env(self) -> dict[str, str]:
        """What a worker or command process needs to use this name space."""
        return {"CELERY_BROKER_URL": self.url, PREFIX_VARIABLE: self.prefix}

    def transport_options(self) -> dict:
        """kombu's, to use this name space (what the settings make of AUTOLAB_BROKER_KEY_PREFIX)."""
        return {"global_keyprefix": self.prefix}

    def reachable(self) -> bool:
        import redis

        try:
            return bool(redis.Redis.from_url(self.url, socket_connect_timeout=1).ping())
        except redis.exceptions.ConnectionError:
            return False

    def enter(self) -> None:
        """This process, and every process it starts, uses this name space: its own Celery app's messages
        (where the suite's broker is Redis, as in CI) and every worker and command's (`process_env`)."""
        os.environ[PREFIX_VARIABLE] = self.prefix
        use_broker(None)

    def leave(self) -> None:
        self.clean()
        os.environ.pop(PREFIX_VARIABLE, None)


class NamespacedRedisCache(RedisCache):
    """Django's Redis cache whose clear() deletes its own keys (its KEY_PREFIX), not the whole database."""

    def clear(self) -> None:
        client = self._cache.get_client(None, write=True)
        keys = list(client.scan_iter(match=glob_escape(self.key_prefix) + "*"))
        if keys:
            client.delete(*keys)


def glob_escape(text: str) -> str:
    """`text` as a literal in a Redis MATCH pattern."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)


def use_broker(url: str | None, namespace: BrokerNamespace | None = None) -> None:
    """Point this process's Celery app's sending at another broker (None: back to the configured one), in
    `namespace`, else in this session's (`BrokerNamespace.enter`).

    Sending reads broker_write_url: setting broker_url would do nothing where CELERY_BROKER_URL is in the
    environment (as in CI), since Celery's settings prefer that variable."""
    from kombu import pools

    from autolab_site.celery import app

    prefix = namespace.prefix if namespace else os.environ.get(PREFIX_VARIABLE, "")
    app.conf.broker_write_url = url
    app.conf.broker_transport_options = {
        **django_settings.CELERY_BROKER_TRANSPORT_OPTIONS, **({"global_keyprefix": prefix} if prefix else {}),
    }
    # Connections and producers are pooled per broker: start afresh.
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def redis_client(url: str | None = None):
    import redis

    return redis.Redis.from_url(url or broker_url())


def process_env(tmp_path: Path, broker: BrokerNamespace, settings) -> dict[str, str]:
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
        **broker.env(),
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


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the process that started it (the test session) dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the session's teardown and atexit still kill it
        pass


class Worker:
    # Every worker this process started that may still run: killed at the session's end (and at exit).
    started: list[Worker] = []

    def __init__(self, env: dict, log: Path, *, concurrency: int = 1, queues: tuple[str, ...] = QUEUES):
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "autolab_site", "worker", "-Q", ",".join(queues),
             "--concurrency", str(concurrency), "--pool", "prefork", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"autolab-test-{os.getpid()}-{time.monotonic_ns()}@%h", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=die_with_parent,
        )
        Worker.started.append(self)

    def kill(self) -> None:
        """SIGKILL the worker and its pool (its process group), as a machine crash would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        else:
            # The worker's main process is gone; its pool's processes may not be.
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self in Worker.started:
            Worker.started.remove(self)

    @classmethod
    def kill_all(cls) -> int:
        """Kill every worker this process started and has not killed: no session leaves one behind."""
        left = list(cls.started)
        for worker in left:
            worker.kill()
        return len(left)

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


atexit.register(Worker.kill_all)


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
