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
$PY manage.py load_demo

if [ -f data/worker.pid ] && kill -0 "$(cat data/worker.pid)" 2>/dev/null; then
  kill "$(cat data/worker.pid)" 2>/dev/null || true
  sleep 1
fi
.venv/bin/celery -A autolab_site worker -Q cpu,gpu,celery --concurrency 2 --loglevel INFO \
  --pidfile data/worker.pid --logfile data/worker.log --detach
echo "Celery worker started (log: data/worker.log)"

echo
echo "autolab-site is running at http://$HOST:$PORT/"
echo "Stop with Ctrl-C."
trap '[ -f data/worker.pid ] && kill "$(cat data/worker.pid)" 2>/dev/null; exit 0' INT TERM
exec_gunicorn() {
  .venv/bin/gunicorn autolab_site.wsgi --bind "$HOST:$PORT" --workers 2 --access-logfile - --log-level warning
}
exec_gunicorn
