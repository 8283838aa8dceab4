#!/usr/bin/env bash
# `make demo`: migrate, load demo content, start a Celery worker and the web
# server on $HOST:$PORT (127.0.0.1:8000). Safe to run again: nothing is
# duplicated, and a worker left by an earlier run is stopped first. Its last
# line says where to log in as staff; requests go to data/access.log.
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
# The real AutoLab tasks it runs (tasks/real_offline.py) build FROM
# ubuntu:22.04 and python:3.x-slim: the demo maps them to the project's
# stand-ins (Debian, built here; each rollout names its stand-in) through the
# mirror map CI uses, for load_demo's check and for the worker, unless
# AUTOLAB_IMAGE_MIRRORS already says otherwise.
if command -v podman >/dev/null 2>&1; then
  if bash scripts/build-base-image.sh; then
    if bash scripts/build-standin-images.sh >data/standins.log 2>&1; then
      export AUTOLAB_IMAGE_MIRRORS=${AUTOLAB_IMAGE_MIRRORS:-$PWD/scripts/standins/mirrors.txt}
    else
      echo "the stand-in images could not be built (data/standins.log): the demo runs no real AutoLab task"
    fi
  else
    echo "the base image could not be built: the demo falls back to bubblewrap"
  fi
fi
# Workers find podman-compose in the venv.
export PATH="$PWD/.venv/bin:$PATH"
$PY manage.py load_demo

# The boards of what is loaded, built once here so the first page shows them (later
# results reach them through the worker's boards queue: a page never builds one).
$PY manage.py build_boards >/dev/null

bash scripts/start-worker.sh

echo
echo "autolab-site is running at http://$HOST:$PORT/ (requests are logged to data/access.log; stop with Ctrl-C)"
echo "Log in as staff at http://$HOST:$PORT/login/ (no account yet? .venv/bin/python manage.py createsuperuser)"
trap 'pid=$(cat data/worker.pid 2>/dev/null || true); [ -n "$pid" ] && kill "$pid" 2>/dev/null; exit 0' INT TERM
.venv/bin/gunicorn autolab_site.wsgi --bind "$HOST:$PORT" --workers 2 --access-logfile data/access.log --log-level warning
