#!/usr/bin/env bash
# Start the demo's Celery worker in the background and say its pid (scripts/demo.sh).
# A worker left by an earlier run is stopped first. Celery's --detach writes
# the pidfile once to check that it is not stale, removes it, and writes it
# again when the worker starts: the pid is read once, into a variable, and
# only a pidfile that names a live process counts.
set -euo pipefail
CELERY=${CELERY:-.venv/bin/celery}
PIDFILE=${PIDFILE:-data/worker.pid}
LOGFILE=${LOGFILE:-data/worker.log}

read_pid() { cat "$PIDFILE" 2>/dev/null || true; }

old=$(read_pid)
if [ -n "$old" ] && kill -0 "$old" 2>/dev/null; then
  echo "stopping the worker of an earlier run (pid $old)"
  kill "$old" 2>/dev/null || true
  # Its warm shutdown finishes the task at hand and only then removes the pidfile.
  for _ in $(seq 60); do kill -0 "$old" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$old" 2>/dev/null && kill -9 "$old" 2>/dev/null || true
fi
rm -f "$PIDFILE"

"$CELERY" -A autolab_site worker -Q cpu,gpu,boards,celery --concurrency 2 --loglevel INFO \
  --pidfile "$PIDFILE" --logfile "$LOGFILE" --detach
# A cold start (Harbor and litellm to import) can take half a minute.
pid=""
for _ in $(seq 120); do
  pid=$(read_pid)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then break; fi
  pid=""
  sleep 0.5
done
if [ -z "$pid" ]; then
  echo "the Celery worker did not start; see $LOGFILE" >&2
  exit 1
fi
echo "Celery worker started, pid $pid (log: $LOGFILE)"
