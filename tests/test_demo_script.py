"""`make demo`'s shell: a worker's pid said once and right, requests logged to a file, the login last (issue 46)."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Celery's --detach, as it behaves: the daemon writes the pidfile, removes it (the stale check), writes it again.
FAKE_CELERY = """#!/usr/bin/env bash
while [ $# -gt 0 ]; do case "$1" in --pidfile) pidfile=$2; shift;; esac; shift; done
sleep 60 </dev/null >/dev/null 2>&1 &
daemon=$!
echo "$daemon" > "$(dirname "$pidfile")/daemon.pid"
( echo "$daemon" > "$pidfile"; sleep 0.3; rm -f "$pidfile"; sleep 1; echo "$daemon" > "$pidfile" ) </dev/null >/dev/null 2>&1 &
"""


def test_the_worker_start_says_its_pid_once_and_no_missing_pidfile(tmp_path):
    celery = tmp_path / "celery"
    celery.write_text(FAKE_CELERY)
    celery.chmod(0o755)
    env = {**os.environ, "CELERY": str(celery), "PIDFILE": str(tmp_path / "worker.pid"), "LOGFILE": str(tmp_path / "w.log")}
    try:
        done = subprocess.run(["bash", "scripts/start-worker.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        daemon = (tmp_path / "daemon.pid").read_text().strip()
    finally:
        if (tmp_path / "daemon.pid").exists():
            os.kill(int((tmp_path / "daemon.pid").read_text()), signal.SIGTERM)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip() == f"Celery worker started, pid {daemon} (log: {tmp_path / 'w.log'})"


def test_the_demo_logs_requests_to_a_file_and_ends_with_where_to_log_in():
    lines = [line.strip() for line in (ROOT / "scripts" / "demo.sh").read_text().splitlines()]
    gunicorn = next(line for line in lines if line.startswith(".venv/bin/gunicorn"))
    assert "--access-logfile data/access.log" in gunicorn
    last_echo = [line for line in lines[: lines.index(gunicorn)] if line.startswith("echo")][-1]
    assert "Log in as staff at http://$HOST:$PORT/login/" in last_echo
