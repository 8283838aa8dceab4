"""Local benchmark for /app/solve.py: checks it, then prints its calibrated runtime.

Each measurement runs in a fresh Python process, the starter and your code
alternately on the same n, and reports your time scaled so that the starter
counts as STARTER_SECONDS. Read-only: the verifier does the same with its own
copies.
"""
import json
import os
import statistics
import subprocess
import sys

APP_DIR = os.path.dirname(os.path.abspath(__file__))
STARTER_SECONDS = 0.30
N = 230_000
ROUNDS = 3

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
    solve = os.path.join(APP_DIR, "solve.py")
    starter = os.path.join(APP_DIR, "starter.py")
    small = [0, 1, 2, 3, 10, 100, 7919, 7920]
    got = run(solve, small)["results"]
    expected = [primes_below(n) for n in small]
    if got != expected:
        print(f"wrong results for n={small}: got {got}, expected {expected}")
        print("correct: no")
        return 1
    ratios = []
    for _ in range(ROUNDS):
        base = run(starter, [N])
        mine = run(solve, [N])
        if mine["results"][0] != primes_below(N):
            print(f"wrong result for n={N}: {mine['results'][0]}")
            print("correct: no")
            return 1
        ratios.append(mine["seconds"][0] / base["seconds"][0])
    ratio = statistics.median(ratios)
    print("correct: yes")
    print(f"speedup: {1 / ratio:.2f}x")
    print(f"runtime_seconds: {STARTER_SECONDS * ratio:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
