#!/bin/bash
# Reference solution: a known optimal 19-comparator network for 8 inputs.
APP_DIR=${APP_DIR:-/app}
cat > "$APP_DIR/network.json" <<'JSON'
[
  [0, 2], [1, 3], [4, 6], [5, 7],
  [0, 4], [1, 5], [2, 6], [3, 7],
  [0, 1], [2, 3], [4, 5], [6, 7],
  [2, 4], [3, 5],
  [1, 4], [3, 6],
  [1, 2], [3, 4], [5, 6]
]
JSON
