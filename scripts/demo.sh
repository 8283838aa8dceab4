#!/usr/bin/env bash
# `make demo`: migrate, load demo content, start a Celery worker and the web
# server on 127.0.0.1:8000. Safe to run again: nothing is duplicated, and a
# worker left by an earlier run is stopped first.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
mkdir -p data
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}

$PY manage.py migrate --noinput
# As in production: hashed, precompressed static files with far-future cache headers.
$PY manage.py collectstatic --noinput --verbosity 0
# Podman runs the demo in containers; its tasks build FROM the project's base
# image. Without podman (or without the image) the demo uses bubblewrap.
if command -v podman >/dev/null 2>&1; then
  bash scripts/build-base-image.sh || echo "the base image could not be built: the demo falls back to bubblewrap"
fi
# Workers find podman-compose in the venv.
export PATH="$PWD/.venv/bin:$PATH"
$PY manage.py load_demo

# Stop a worker left by an earlier run, and wait until it is gone: its warm
# shutdown finishes the task at hand and only then removes the pidfile.
if [ -f data/worker.pid ]; then
  old=$(cat data/worker.pid)
  if kill -0 "$old" 2>/dev/null; then
    echo "stopping the worker of an earlier run (pid $old)"
    kill "$old" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$old" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$old" 2>/dev/null && kill -9 "$old" 2>/dev/null || true
  fi
  rm -f data/worker.pid
fi
.venv/bin/celery -A autolab_site worker -Q cpu,gpu,boards,celery --concurrency 2 --loglevel INFO \
  --pidfile data/worker.pid --logfile data/worker.log --detach
# A cold start (Harbor and litellm to import) can take half a minute.
for _ in $(seq 120); do [ -f data/worker.pid ] && break; sleep 0.5; done
if ! { [ -f data/worker.pid ] && kill -0 "$(cat data/worker.pid)" 2>/dev/null; }; then
  echo "the Celery worker did not start; see data/worker.log" >&2
  exit 1
fi
echo "Celery worker started, pid $(cat data/worker.pid) (log: data/worker.log)"

echo
echo "autolab-site is running at http://$HOST:$PORT/"
echo "Staff pages need an account: .venv/bin/python manage.py createsuperuser, then log in at http://$HOST:$PORT/login/"
echo "Stop with Ctrl-C."
trap '[ -f data/worker.pid ] && kill "$(cat data/worker.pid)" 2>/dev/null; exit 0' INT TERM
exec_gunicorn() {
  .venv/bin/gunicorn autolab_site.wsgi --bind "$HOST:$PORT" --workers 2 --access-logfile - --log-level warning
}
exec_gunicorn
