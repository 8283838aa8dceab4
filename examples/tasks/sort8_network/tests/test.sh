#!/bin/bash
# Verifier for sort8_network. Paths default to the task container's layout;
# APP_DIR, TESTS_DIR and LOGS_DIR override them for runs on a host.
APP_DIR=${APP_DIR:-/app}
TESTS_DIR=${TESTS_DIR:-/tests}
LOGS_DIR=${LOGS_DIR:-/logs}
mkdir -p "$LOGS_DIR/verifier"
export APP_DIR TESTS_DIR LOGS_DIR
python3 "$TESTS_DIR/verify.py"
status=$?
# Whatever happened, leave a reward behind.
if [ ! -s "$LOGS_DIR/verifier/reward.json" ]; then
  # verify.py failed before it wrote one: say so, or the zero reads as a clean run that did not improve.
  echo "{\"reward\": 0.0, \"reason\": \"verifier_failed\", \"error\": \"verify.py exited with status $status and wrote no reward\"}" > "$LOGS_DIR/verifier/reward.json"
fi
exit $status
