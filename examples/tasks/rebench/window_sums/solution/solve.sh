#!/bin/bash
# Reference solution: a running sum, then one call of the scoring tool.
APP_DIR=${APP_DIR:-/app}
cat > "$APP_DIR/solve.py" <<'PY'
"""Window sums with a running total: O(n) instead of O(n * width)."""


def window_sums(values, width):
    total = sum(values[:width])
    sums = [total]
    for i in range(width, len(values)):
        total += values[i] - values[i - width]
        sums.append(total)
    return sums
PY
python3 "$APP_DIR/score.py"
