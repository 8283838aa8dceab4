"""Failure analysis speed at full size: 17 entries x 36 tasks x 3 rollouts.

    .venv/bin/python benchmarks/failures_bench.py [--requests 20] [--reuse] [--steps 60]

Runs against PostgreSQL in a scratch database (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/autolab_bench_failures, created when
missing), loads synthetic data with `generate_synthetic`, then prints:

- `classify_failures` over every rollout (rollouts per second; target: the
  whole benchmark in under 30 s, so a rule change is cheap to re-run);
- the failures page and the CSV export, p50 server time (target under 300 ms).

Figures and their ratio to the target are printed; nothing is asserted.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/autolab_bench_failures"
VERSION = "bench-failures"
CLASSIFY_TARGET_S = 30.0
PAGE_TARGET_MS = 300.0


def main() -> None:
    from leaderboard_bench import load_synthetic, p50_ms, setup_bench

    args = setup_bench(__doc__, DEFAULT_DB, requests=20, steps=60)
    from django.db import connection
    from django.test import Client

    from trajectories.failures import service as failure_service
    from trajectories.models import Rollout

    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    version = load_synthetic(VERSION, args)
    rollouts = Rollout.objects.filter(task__version=version)
    n = rollouts.count()

    start = time.perf_counter()
    counts = failure_service.reclassify(rollouts)
    classify_s = time.perf_counter() - start
    failed = sum(v for k, v in counts.items() if k not in ("scored", "running", "cancelled"))
    print(f"{n} rollouts, {failed} classified as failures: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))

    client = Client()
    results = [
        ("classify_failures, all rollouts", classify_s, CLASSIFY_TARGET_S, "s"),
        ("failures page p50", p50_ms(client, f"/failures/?version={VERSION}", args.requests), PAGE_TARGET_MS, "ms"),
        ("failures page, one cause p50", p50_ms(client, f"/failures/?version={VERSION}&cause=no_improvement", args.requests), PAGE_TARGET_MS, "ms"),
        ("CSV export p50", p50_ms(client, f"/failures/export.csv?version={VERSION}", max(3, args.requests // 4)), PAGE_TARGET_MS * 3, "ms"),
    ]  # fmt: skip
    print(f"classify rate: {n / classify_s:.0f} rollouts/s")
    for name, value, target, unit in results:
        print(f"{name:34s} {value:9.1f} {unit}   target {target:g} {unit}   ratio {value / target:.2f}")


if __name__ == "__main__":
    main()
