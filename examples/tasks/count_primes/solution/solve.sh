#!/bin/bash
# Reference solution: a bytearray Sieve of Eratosthenes.
APP_DIR=${APP_DIR:-/app}
cat > "$APP_DIR/solve.py" <<'PY'
"""Sieve of Eratosthenes on a bytearray: crossing out by slice assignment."""


def count_primes(n: int) -> int:
    if n < 3:
        return 0
    sieve = bytearray([1]) * n
    sieve[0] = sieve[1] = 0
    for p in range(2, int(n ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytes(len(range(p * p, n, p)))
    return sum(sieve)
PY
