"""Verifier for count_primes: integrity, correctness, calibrated runtime, reward.

Writes LOGS_DIR/verifier/reward.json like AutoLab's verifiers: the reward
plus correctness, metric and, for a zero score, the reason
("build_file_modified", "no_output_file", ...).
"""
import hashlib
import json
import math
import os
import random
import statistics
import subprocess
import sys

APP_DIR = os.environ.get("APP_DIR", "/app")
TESTS_DIR = os.environ.get("TESTS_DIR", "/tests")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")

# The anchors published in task.toml ([optimization]); lower is better.
BASELINE = 0.25
REFERENCE = 0.003
STARTER_SECONDS = 0.30
ROUNDS = 3
SMALL = [0, 1, 2, 3, 4, 5, 10, 11, 100, 1000, 7919, 7920]

HARNESS = r"""
import gc, importlib.util, json, sys
from time import perf_counter
path, values = sys.argv[1], [int(v) for v in sys.argv[2:]]
spec = importlib.util.spec_from_file_location("candidate", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
results, seconds = [], []
for n in values:
    gc.collect()
    start = perf_counter()
    results.append(module.count_primes(n))
    seconds.append(perf_counter() - start)
print("RESULT " + json.dumps({"results": results, "seconds": seconds}))
"""


def log_stretch(value, baseline, reference):
    """0.5 * ln(baseline/value) / ln(baseline/reference), clipped to [0, 1]."""
    if value <= 0:
        return 0.0
    reward = 0.5 * math.log(baseline / value) / math.log(baseline / reference)
    return min(1.0, max(0.0, reward))


def finish(reward, **details):
    """Write reward.json the way AutoLab's verifiers do: the reward beside
    every other field, numeric or not (`"reason": "build_file_modified"`).
    Harbor 0.25's own verifier rejects non-numeric fields; the site's runner
    plugs in a tolerant one that keeps them."""
    out = os.path.join(LOGS_DIR, "verifier")
    os.makedirs(out, exist_ok=True)
    fields = {"reward": round(reward, 6)}
    for key, value in details.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        fields[key] = value
    with open(os.path.join(out, "reward.json"), "w") as handle:
        json.dump(fields, handle)
    print(json.dumps(fields))
    return 0


def modified_read_only_files():
    """Read-only files whose SHA-256 differs from the values pinned in tests/."""
    modified = []
    with open(os.path.join(TESTS_DIR, "read_only.sha256")) as handle:
        for line in handle:
            if not line.strip():
                continue
            digest, name = line.split(None, 1)
            path = os.path.join(APP_DIR, name.strip())
            try:
                with open(path, "rb") as source:
                    actual = hashlib.sha256(source.read()).hexdigest()
            except OSError:
                actual = ""
            if actual != digest:
                modified.append(name.strip())
    return modified


def run(path, values, timeout=60):
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, path, *map(str, values)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(done.stderr.strip()[-2000:] or "no result printed")
    return json.loads(lines[-1][len("RESULT "):])


def primes_below(n):
    if n < 3:
        return 0
    sieve = bytearray([1]) * n
    sieve[0] = sieve[1] = 0
    for p in range(2, int(n ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytes(len(range(p * p, n, p)))
    return sum(sieve)


def main():
    modified = modified_read_only_files()
    if modified:
        return finish(0.0, reason="build_file_modified", files=modified)
    solve = os.path.join(APP_DIR, "solve.py")
    if not os.path.isfile(solve):
        return finish(0.0, reason="no_output_file", correctness=False)
    try:
        got = run(solve, SMALL)["results"]
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
        return finish(0.0, reason="solution_error", correctness=False, error=str(error)[-500:])
    expected = [primes_below(n) for n in SMALL]
    if got != expected:
        return finish(0.0, reason="incorrect_result", correctness=False, inputs=SMALL, got=got, expected=expected)

    ratios = []
    for _ in range(ROUNDS):
        n = random.randint(200_000, 260_000)
        # Starter and solution timed twice each in ABBA order, the faster of each
        # pair kept: a burst of load on a shared host then slows both sides
        # alike instead of making an unchanged solution look faster.
        try:
            base_1 = run(os.path.join(TESTS_DIR, "starter.py"), [n])
            mine = run(solve, [n])
            mine_2 = run(solve, [n])
            base_2 = run(os.path.join(TESTS_DIR, "starter.py"), [n])
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
            return finish(0.0, reason="solution_error", correctness=False, error=str(error)[-500:])
        if mine["results"][0] != primes_below(n) or mine_2["results"][0] != primes_below(n):
            return finish(0.0, reason="incorrect_result", correctness=False, inputs=[n], got=mine["results"])
        best_mine = min(mine["seconds"][0], mine_2["seconds"][0])
        best_base = min(base_1["seconds"][0], base_2["seconds"][0])
        ratios.append(best_mine / best_base)
    ratio = statistics.median(ratios)
    metric = STARTER_SECONDS * ratio
    return finish(
        log_stretch(metric, BASELINE, REFERENCE),
        correctness=True,
        metric=round(metric, 6),
        speedup=round(1 / ratio, 3) if ratio > 0 else 0.0,
        baseline_score=BASELINE,
        reference_score=REFERENCE,
    )


if __name__ == "__main__":
    sys.exit(main())
