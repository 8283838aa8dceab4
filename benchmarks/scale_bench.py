"""The board at 25 and 100 entries: what a new rollout costs, and pages that do not grow with the board.

    .venv/bin/python benchmarks/scale_bench.py [--requests 20] [--reuse] [--rounds 3]

Builds two synthetic versions on PostgreSQL (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/autolab_bench_scale, created when
missing) with `generate_synthetic`: 25 and 100 entries x 36 tasks x 3
rollouts (no steps: the board reads none). Then, alternating the sizes in
each round (this machine's speed drifts), prints:

- warm p50 / p95 of the leaderboard, heatmap and API leaderboard (target
  <= 150 ms at 100 entries);
- the first leaderboard view after one new rollout of that version (target
  <= 3x warm, and <= 2x the 25-entry figure), and the first view of the
  *other* version after it (per-version invalidation: it stays warm);
- the leaderboard's and heatmap's first page: HTML bytes and elements
  (targets 250 KB and 2,500 elements).

Not measured here yet (issue 27's other parts): search, import against
COPY, Chromium's sort click. Figures and ratios are printed; nothing is
asserted.
"""
from __future__ import annotations

import statistics
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leaderboard_bench import setup_bench  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/autolab_bench_scale"
SIZES = (25, 100)
WARM_TARGET_MS = 150.0
BYTES_TARGET = 250_000
ELEMENTS_TARGET = 2_500


def version_name(size: int) -> str:
    return f"scale-{size}"


def load(size: int, args):
    from django.core.management import call_command

    from tasks.models import BenchmarkVersion

    name = version_name(size)
    version = BenchmarkVersion.objects.filter(name=name).first()
    if version is None or not args.reuse:
        start = time.perf_counter()
        call_command(
            "generate_synthetic", "--entries", str(size), "--tasks", "36", "--rollouts", "3",
            "--steps", "0", "--version", name, "--replace",
        )  # fmt: skip
        print(f"loaded {name} in {time.perf_counter() - start:.1f} s")
        version = BenchmarkVersion.objects.get(name=name)
    return version


def elements(html: str) -> int:
    class Counter(HTMLParser):
        n = 0

        def handle_starttag(self, tag, attrs):
            self.n += 1

    counter = Counter()
    counter.feed(html)
    return counter.n


def timed_ms(client, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return (time.perf_counter() - start) * 1000


def new_rollout(version) -> int:
    """One more finished rollout of `version` (a copy of one there), as a worker's import would add it."""
    from trajectories.models import Rollout

    rollout = Rollout.objects.filter(task__version=version).order_by("pk").first()
    rollout.pk = None
    rollout.trial_name = f"{rollout.trial_name}-scale-{time.time_ns()}"
    rollout.index = 1000 + Rollout.objects.filter(task__version=version).count()
    rollout.save()
    return rollout.pk


def main() -> None:
    args = setup_bench(__doc__, DEFAULT_DB, requests=20, steps=0, more_arguments=lambda p: p.add_argument("--rounds", type=int, default=3))
    from django.db import connection
    from django.test import Client

    from trajectories.models import Rollout

    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    versions = {size: load(size, args) for size in SIZES}
    client = Client()
    pages = {
        "leaderboard": "/?version={}",
        "heatmap": "/heatmap/?version={}",
        "api leaderboard": "/api/v1/leaderboard/?version={}",
    }
    warm: dict[tuple[int, str], list[float]] = {}
    first: dict[int, list[float]] = {size: [] for size in SIZES}
    other_first: dict[int, list[float]] = {size: [] for size in SIZES}
    added: list[int] = []
    for _ in range(args.rounds):
        for size in SIZES:
            name = version_name(size)
            for page, url in pages.items():
                client.get(url.format(name))  # warm
                warm.setdefault((size, page), []).extend(timed_ms(client, url.format(name)) for _ in range(args.requests))
            other = version_name(next(s for s in SIZES if s != size))
            client.get(f"/?version={other}")  # the other version warm too
            added.append(new_rollout(versions[size]))
            first[size].append(timed_ms(client, f"/?version={name}"))
            other_first[size].append(timed_ms(client, f"/?version={other}"))
    Rollout.objects.filter(pk__in=added).delete()

    rows = []
    for size in SIZES:
        for page in pages:
            times = sorted(warm[(size, page)])
            p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
            rows.append((f"{size} entries: {page} warm p50", statistics.median(times), WARM_TARGET_MS, "ms"))
            rows.append((f"{size} entries: {page} warm p95", p95, WARM_TARGET_MS, "ms"))
        lb_warm = statistics.median(warm[(size, "leaderboard")])
        after = statistics.median(first[size])
        rows.append((f"{size} entries: first view after a new rollout", after, 3 * lb_warm, "ms"))
        rows.append((f"{size} entries: the other version's first view after it", statistics.median(other_first[size]), WARM_TARGET_MS, "ms"))
        for page, url in (("leaderboard", "/?version={}"), ("heatmap", "/heatmap/?version={}")):
            html = client.get(url.format(version_name(size))).content.decode()
            rows.append((f"{size} entries: {page} page 1 HTML", len(html.encode()) / 1000, BYTES_TARGET / 1000, "KB"))
            rows.append((f"{size} entries: {page} page 1 elements", elements(html), ELEMENTS_TARGET, ""))
    ratio = statistics.median(first[100]) / statistics.median(first[25])
    rows.append(("first view after a new rollout, 100 / 25 entries", ratio, 2.0, "x"))

    print()
    print(f"{'measure':58} {'value':>10} {'target':>10} {'ratio':>7}")
    for name, value, target, unit in rows:
        print(f"{name:58} {value:>8.1f}{unit:>2} {target:>8.1f}{unit:>2} {value / target:>7.2f}")
    print("\nratio < 1 meets the target.")


if __name__ == "__main__":
    main()
