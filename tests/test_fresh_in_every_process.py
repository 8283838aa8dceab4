"""A change any process commits is on every page at the next request, in every web worker.

On the embedded default (SQLite, a per-process LocMemCache) the boards'
generation counter once lived in the cache: a trial imported from the
command line did not reach the running site's leaderboard for 24 h, and two
gunicorn workers answered the same URL with different boards. Here the site
runs under gunicorn with two workers on the embedded default, a trial is
imported by another process, and both workers must show it at once.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TRIAL = ROOT / "trajectories" / "tests" / "trials" / "failures" / "no_improvement"
TASK_TOML = """version = "1.0"
[metadata]
domain = "system_optimization"
[agent]
timeout_sec = 7200
[optimization]
metric = "time_ms"
direction = "lower"
[optimization.baseline]
score = 5.0
[optimization.reference]
score = 1.0
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def embedded_env(data: Path) -> dict[str, str]:
    """The environment of a site with nothing configured: SQLite, filesystem queue, per-process cache."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "AUTOLAB_TEST_DB", "DJANGO_SETTINGS_MODULE")}
    env["AUTOLAB_DATA_DIR"] = str(data)
    return env


def manage(env: dict, *args: str) -> None:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode()


def test_a_trial_imported_by_another_process_is_on_both_workers_boards(tmp_path):
    if shutil.which("gunicorn", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("gunicorn is not installed beside this Python")
    env = embedded_env(tmp_path / "data")
    task = tmp_path / "tasks" / "hash_join"
    task.mkdir(parents=True)
    (task / "task.toml").write_text(TASK_TOML)
    (task / "instruction.md").write_text("Make the hash join fast.\n")
    manage(env, "migrate", "--noinput")
    manage(env, "import_tasks", str(task.parent), "--version", "1.1")
    port = free_port()
    log = tmp_path / "access.log"
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "autolab_site.wsgi", "--workers", "2", "--bind",
         f"127.0.0.1:{port}", "--access-logfile", str(log), "--access-logformat", "%(p)s %(U)s"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    board = f"http://127.0.0.1:{port}/?version=1.1"
    try:
        for _ in range(100):
            try:
                fetch(board)
                break
            except OSError:
                time.sleep(0.2)

        def many(n: int = 24) -> list[str]:
            with ThreadPoolExecutor(8) as pool:
                return list(pool.map(lambda _: fetch(board), range(n)))

        assert not any("test-model" in page for page in many()), "the board starts without the entry"
        served_before = log.read_text().split("\n")
        manage(env, "import_trials", str(TRIAL), "--version", "1.1")  # another process, as a worker's import
        manage(env, "build_boards")  # another process, as the boards worker (a page never builds a board)
        after = many()
    finally:
        os.killpg(server.pid, 9)
        server.wait(timeout=30)
    assert all("test-model" in page for page in after), "every answer after the import shows it"
    pids = {line.split()[0] for line in log.read_text().split("\n")[len(served_before) - 1:] if line.strip()}
    assert len(pids) == 2, f"both workers answered after the import: {pids}"
