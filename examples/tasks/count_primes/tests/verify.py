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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import candidate  # noqa: E402  (beside this file in tests/)

APP_DIR = os.environ.get("APP_DIR", "/app")
TESTS_DIR = os.environ.get("TESTS_DIR", "/tests")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")

# The anchors published in task.toml ([optimization]); lower is better.
BASELINE = 0.25
REFERENCE = 0.003
STARTER_SECONDS = 0.30
# task.toml's noise_floor: a measured speedup below it is timing noise, and
# counts as none (the starter's time), so doing nothing never scores.
NOISE_FLOOR = 1.5
ROUNDS = 3
SMALL = [0, 1, 2, 3, 4, 5, 10, 11, 100, 1000, 7919, 7920]

# The candidate's harness: the verifier's clock runs from START, printed
# before the candidate's code is imported, to RESULT (candidate.py).
HARNESS = r"""
import gc, importlib.util, json, sys
print("READY", flush=True)
values = json.loads(sys.stdin.readline())
gc.collect()
print("START", flush=True)
spec = importlib.util.spec_from_file_location("candidate", "solve.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("RESULT " + json.dumps([module.count_primes(n) for n in values]), flush=True)
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


def run(path, values):
    """(results, seconds) of count_primes over `values`, `path` run as the candidate."""
    results, seconds = candidate.run(HARNESS, {"solve.py": path}, values, timeout=60)
    if not isinstance(results, list):
        raise candidate.CandidateError("the result is not a list")
    return results, seconds


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
    candidate.guard_grader_files(TESTS_DIR, os.path.join(LOGS_DIR, "verifier"))
    modified = modified_read_only_files()
    if modified:
        return finish(0.0, reason="build_file_modified", files=modified)
    solve = os.path.join(APP_DIR, "solve.py")
    if not os.path.isfile(solve):
        return finish(0.0, reason="no_output_file", correctness=False)
    starter = os.path.join(TESTS_DIR, "starter.py")
    try:
        got, _ = run(solve, SMALL)
    except candidate.CandidateError as error:
        return finish(0.0, **error.fields())
    expected = [primes_below(n) for n in SMALL]
    if got != expected:
        return finish(0.0, reason="incorrect_result", correctness=False, inputs=SMALL, got=got, expected=expected)
    ratios = []
    paths = {"solve": solve, "starter": starter}
    for _ in range(ROUNDS):
        # Each pair times the starter and the solution on an n of its own,
        # in alternating order: a burst of load slows both sides alike, and
        # a candidate that caches between its runs never sees an n twice.
        for order in (("starter", "solve"), ("solve", "starter")):
            n = random.randint(200_000, 260_000)
            try:
                timed = {name: run(paths[name], [n]) for name in order}
            except candidate.CandidateError as error:
                return finish(0.0, **error.fields())
            if timed["solve"][0] != [primes_below(n)]:
                return finish(0.0, reason="incorrect_result", correctness=False, inputs=[n], got=timed["solve"][0])
            ratios.append(timed["solve"][1] / timed["starter"][1])
    ratio = statistics.median(ratios)
    speedup = 1 / ratio if ratio > 0 else float("inf")
    metric = STARTER_SECONDS if speedup < NOISE_FLOOR else STARTER_SECONDS * ratio
    return finish(
        log_stretch(metric, BASELINE, REFERENCE),
        correctness=True,
        metric=round(metric, 6),
        speedup=round(speedup, 3),
        baseline_score=BASELINE,
        reference_score=REFERENCE,
    )


if __name__ == "__main__":
    sys.exit(main())
