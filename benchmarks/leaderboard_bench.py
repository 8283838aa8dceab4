"""Leaderboard speed at full size: 17 entries x 36 tasks x 3 rollouts.

    .venv/bin/python benchmarks/leaderboard_bench.py [--requests 30] [--reuse]

Runs against PostgreSQL in a scratch database (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/autolab_bench_board, created when
missing), loads synthetic data with `generate_synthetic` (~150 steps per
rollout), then prints:

- leaderboard and heatmap server time, p50 over repeated requests with a warm
  cache (Django test Client; target under 150 ms);
- the time of a full recomputation after a new rollout arrives (target under
  2 s), and of the first page request after it.

Figures and their ratio to the target are printed; nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/autolab_bench_board"
VERSION = "bench-board"
WARM_TARGET_MS = 150.0
RECOMPUTE_TARGET_S = 2.0


def ensure_database(url: str) -> None:
    """CREATE DATABASE for a PostgreSQL URL when it does not exist yet."""
    import dj_database_url
    import psycopg

    if not url.startswith(("postgres://", "postgresql://")):
        return
    settings = dj_database_url.parse(url)
    admin = dict(
        dbname="postgres",
        user=settings["USER"] or "postgres",
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
    )
    if settings["PASSWORD"]:
        admin["password"] = settings["PASSWORD"]
    with psycopg.connect(**admin, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [settings["NAME"]]).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{settings["NAME"]}"')
            print(f"created database {settings['NAME']}")


def load_synthetic(version_name: str, args):
    """Migrate, then load `generate_synthetic` data (36 tasks) unless --reuse finds it."""
    from django.core.management import call_command

    from tasks.models import BenchmarkVersion

    call_command("migrate", verbosity=0)
    version = BenchmarkVersion.objects.filter(name=version_name).first()
    if version is None or not args.reuse:
        start = time.perf_counter()
        call_command(
            "generate_synthetic",
            "--entries", str(args.entries), "--tasks", "36", "--rollouts", str(args.rollouts),
            "--steps", str(args.steps), "--version", version_name, "--replace",
        )  # fmt: skip
        print(f"loaded synthetic data in {time.perf_counter() - start:.1f} s")
        version = BenchmarkVersion.objects.get(name=version_name)
    return version


def p50_ms(client, url: str, n: int) -> float:
    response = client.get(url)  # warm the cache
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    return statistics.median(times)


def setup_bench(
    description: str, default_db: str, *, requests: int, steps: int, more_arguments=None, configure=None
) -> argparse.Namespace:
    """Parse the synthetic-data benchmarks' shared options (and a benchmark's own, added by
    `more_arguments(parser)`), then set Django up on DATABASE_URL (default: `default_db`,
    created when missing); `configure(args)`, before, may set what else the settings read."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("--requests", type=int, default=requests, help="timed requests per page")
    parser.add_argument("--reuse", action="store_true", help="keep the synthetic data if it is already loaded")
    parser.add_argument("--entries", type=int, default=17)
    parser.add_argument("--rollouts", type=int, default=3)
    parser.add_argument("--steps", type=int, default=steps)
    if more_arguments is not None:
        more_arguments(parser)
    args = parser.parse_args()
    if configure is not None:
        configure(args)

    os.environ.setdefault("DATABASE_URL", default_db)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
    ensure_database(os.environ["DATABASE_URL"])

    import django
    from django.test.utils import setup_test_environment

    django.setup()
    setup_test_environment()  # the test Client's host (testserver) allowed, as in tests
    return args


def recompute_after_new_rollout(version) -> float:
    """Seconds to recompute the board once a new rollout arrives (the signal bumps the
    generation, the next read recomputes); the rollout is deleted again afterwards."""
    from evaluations.boards import serving
    from trajectories.models import Rollout

    template = Rollout.objects.filter(task__version=version).first()
    template.pk = None
    template.trial_name = f"{template.trial_name}-bench-{time.time_ns()}"
    template.index = 99
    template.save()
    start = time.perf_counter()
    serving.board(version)
    seconds = time.perf_counter() - start
    Rollout.objects.filter(pk=template.pk).delete()
    return seconds


def main() -> None:
    args = setup_bench(__doc__, DEFAULT_DB, requests=30, steps=150)
    from django.db import connection
    from django.test import Client

    from evaluations.boards import serving
    from trajectories.models import Rollout

    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    version = load_synthetic(VERSION, args)
    n_rollouts = Rollout.objects.filter(task__version=version).count()
    print(f"{version}: {version.tasks.count()} tasks, {n_rollouts} rollouts")

    client = Client()
    results = []
    for name, url in (
        ("leaderboard", f"/?version={VERSION}"),
        ("heatmap", f"/heatmap/?version={VERSION}"),
        ("api leaderboard", f"/api/v1/leaderboard/?version={VERSION}"),
    ):
        ms = p50_ms(client, url, args.requests)
        results.append((f"{name} p50 warm", ms, WARM_TARGET_MS, "ms"))

    results.append(("full recomputation after a new rollout", recompute_after_new_rollout(version), RECOMPUTE_TARGET_S, "s"))
    start = time.perf_counter()
    client.get(f"/?version={VERSION}")
    results.append(("first leaderboard request after a change", time.perf_counter() - start, RECOMPUTE_TARGET_S, "s"))

    print()
    print(f"{'measure':45} {'value':>10} {'target':>10} {'ratio':>7}")
    for name, value, target, unit in results:
        print(f"{name:45} {value:>8.2f}{unit:>2} {target:>8.2f}{unit:>2} {value / target:>7.2f}")
    print("\nratio < 1 meets the target.")


if __name__ == "__main__":
    main()
