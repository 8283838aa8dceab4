"""The starter implementation, kept read-only for calibration. Do not edit."""


def count_primes(n: int) -> int:
    """How many primes are strictly less than n, by trial division."""
    count = 0
    for k in range(2, n):
        is_prime = True
        d = 2
        while d * d <= k:
            if k % d == 0:
                is_prime = False
                break
            d += 1
        if is_prime:
            count += 1
    return count
