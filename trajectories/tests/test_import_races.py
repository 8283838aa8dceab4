"""Imports that race or crash, with real processes on PostgreSQL.

Two `import_trials` on the same new folder must both end well (the trials
are "created" by one and "unchanged" or "updated" by the other); a kill -9
of an import's parent must take its pool workers (and their database
connections) with it, and leave no extraction folder the reaper keeps.
The processes commit for real, so these tests do too (transaction=True).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from trajectories import services
from trajectories.models import Rollout

from .trialdata import START, make_task, make_trial

ROOT = Path(django_settings.BASE_DIR)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent imports need PostgreSQL"),
]


def database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def command_env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database_url(), "AUTOLAB_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}


def import_trials(env: dict, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "import_trials", *args], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen,
    )


def make_job(root: Path, n: int, steps: int = 3) -> Path:
    for index in range(n):
        make_trial(root, f"lib__demo_task__r{index:03d}", n_agent_steps=steps, start=START + timedelta(minutes=index))
    return root


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def test_two_imports_of_the_same_new_folder_both_succeed(tmp_path):
    make_task("demo_task")
    job = make_job(tmp_path / "job", 30)
    env = command_env(tmp_path / "data")
    first, second = import_trials(env, str(job), "--jobs", "1"), import_trials(env, str(job), "--jobs", "2")
    outputs = [process.communicate(timeout=300)[0] for process in (first, second)]
    for process, output in zip((first, second), outputs):
        assert "Traceback" not in output and "IntegrityError" not in output, output
        assert process.returncode == 0, output
        assert " 0 failed of 30 trials" in output, output
    created = sum(int(re.search(r"(\d+) created, \d+ updated, \d+ unchanged, 0 failed", output)[1]) for output in outputs)
    assert created == 30, outputs
    assert Rollout.objects.count() == 30
    assert sorted(Rollout.objects.values_list("index", flat=True)) == list(range(30))


def test_pool_workers_die_with_a_killed_parent(tmp_path):
    make_task("demo_task")
    job = make_job(tmp_path / "job", 60, steps=40)
    # The command's connections carry a name of their own (libpq's PGAPPNAME),
    # apart from other processes' connections to the test database.
    app_name = f"import-races-{os.getpid()}"
    parent = import_trials({**command_env(tmp_path / "data"), "PGAPPNAME": app_name}, str(job), "--jobs", "2")
    workers: list[int] = []
    try:
        wait_for(lambda: len(children_of(parent.pid)) >= 2, 60, "the pool's workers")
        workers = children_of(parent.pid)
        wait_for(lambda: Rollout.objects.exists(), 60, "the first imported trial")
        with connection.cursor() as cursor:
            def connections_open() -> int:
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [app_name])
                return cursor.fetchone()[0]
            assert connections_open() >= 2  # the workers' own
            os.kill(parent.pid, signal.SIGKILL)
            parent.wait(timeout=10)
            wait_for(lambda: not any(alive(pid) for pid in workers), 10, f"pool workers {workers} to die with their parent")
            wait_for(lambda: connections_open() == 0, 10, "the workers' database connections to close")
    finally:
        for pid in [parent.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_killed_archive_import_leaves_nothing_the_sweep_keeps(tmp_path, settings):
    make_task("demo_task")
    job = make_job(tmp_path / "job", 40, steps=40)
    archive = tmp_path / "job.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(job, arcname="job")
    data = tmp_path / "data"
    settings.UPLOADS_DIR = data / "uploads"
    parent = import_trials(command_env(data), str(archive), "--jobs", "1")
    wait_for(lambda: Rollout.objects.exists(), 60, "the first imported trial")
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    leftovers = list(settings.UPLOADS_DIR.iterdir())
    assert leftovers, "the import extracted somewhere else than the uploads folder"
    swept = services.sweep_uploads()
    assert not list(settings.UPLOADS_DIR.iterdir())
    assert len(swept) == len(leftovers)
