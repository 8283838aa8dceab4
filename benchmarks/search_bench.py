"""How fast step search answers over many real trials (PostgreSQL).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/search_bench.py [--n 200] [--db autolab_search_bench] [--keep | --reuse]

A scratch database (--db, dropped at the end) gets N copies of the real opus
trial (../shared/autolab/trials), about 28,000 steps and 95 MB of terminal
output for N=200, imported on every CPU. Then each query below runs through
trajectories.search.query.search_steps (what the search page calls) and the
rollout page's in-page find; printed: hits, the median (p50) and p95 of
--repeat runs of the search, and the median of the in-page find. Target: the
search page's query under 300 ms at p95. A query whose words no step
holds goes on to the substring stage, which reads only the rollouts whose
words could hold it (none, for the last query). --reuse keeps the scratch
database and, when it already holds the N copies, times its queries again
without importing them (as a change is compared with the code before it).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ingest_bench  # noqa: E402  (the scratch database and trial copies)
from leaderboard_bench import ensure_database  # noqa: E402

QUERIES = [
    ("a word in every trial, many steps", "avr_loss"),
    ("a rare command", "nvidia-smi"),
    ("a phrase", "learning rate"),
    ("words apart", "lora rank"),
    ("found nowhere (substring stage too)", "zqxjv-not-there"),
    ("inside words (substring stage)", "aluate_loc"),
    ("inside words, in every trial (substring stage)", "aluate"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="copies of the trial to import")
    parser.add_argument("--db", default="autolab_search_bench", help="scratch PostgreSQL database name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--repeat", type=int, default=20, help="runs of each query")
    parser.add_argument("--reuse", action="store_true", help="keep the scratch database, and its copies when all are there")
    args = parser.parse_args()
    server_url = os.environ.get("DATABASE_URL", "")
    if not server_url.startswith(("postgres://", "postgresql://")):
        print("set DATABASE_URL to a PostgreSQL server", file=sys.stderr)
        return 2
    if not ingest_bench.TRIAL.is_dir():
        print(f"the real trial is missing: {ingest_bench.TRIAL}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="search-bench-"))
    if args.reuse:
        os.environ["DATABASE_URL"] = ingest_bench._server(server_url, args.db)
        ensure_database(os.environ["DATABASE_URL"])
    else:
        os.environ["DATABASE_URL"] = ingest_bench._create_database(server_url, args.db)
    os.environ.setdefault("AUTOLAB_DATA_DIR", str(work / "data"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
    sys.path.insert(0, str(ingest_bench.ROOT))
    try:
        return run(args.n, work, args.repeat, args.reuse)
    finally:
        from django.db import connections

        connections.close_all()
        if not (args.keep or args.reuse):
            ingest_bench._drop_database(server_url, args.db)
        shutil.rmtree(work, ignore_errors=True)


def run(n: int, work: Path, repeat: int = 20, reuse: bool = False) -> int:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from trajectories.search import query as search
    from trajectories.models import Observation, Rollout, Step
    from trajectories.services import import_path

    call_command("migrate", verbosity=0, interactive=False)
    if reuse and Rollout.objects.count() == n:
        print("imported in:              (reused)")
    else:
        Rollout.objects.all().delete()
        ingest_bench._register_task()
        for index in range(n):
            ingest_bench.copy_trial(ingest_bench.TRIAL, work / "jobs" / f"search__{index:04d}")
        started = time.perf_counter()
        report = import_path(work / "jobs", jobs=None)
        if not report.ok:
            print(f"import failed: {report.as_dict()}", file=sys.stderr)
            return 1
        print(f"imported in:              {time.perf_counter() - started:.1f} s")
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    output_mb = sum(len(c) for c in Observation.objects.values_list("content", flat=True)[:2000]) / 2000
    output_mb *= Observation.objects.count() / 1e6

    print(f"rollouts / steps:         {Rollout.objects.count()} / {Step.objects.count()}  ({output_mb:.0f} MB of output)")
    one = Rollout.objects.order_by("pk").first()
    for label, q in QUERIES:
        hits, page = _timed(lambda: search.search_steps(q), repeat)
        _, in_page = _timed(lambda: search.matching_step_ids(one.pk, q), 5)
        print(
            f"{label:48s} {q!r:18s} {len(hits):4d} hits  search p50 {_ms(page, 50):7.1f} ms  p95 {_ms(page, 95):7.1f} ms"
            f"   in-page find p50 {_ms(in_page, 50):6.1f} ms"
        )
    return 0


def _timed(function, repeat: int):
    """The last result of `repeat` runs of `function`, and their times, sorted."""
    samples, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        samples.append(time.perf_counter() - started)
    return result, sorted(samples)


def _ms(samples: list[float], percentile: int) -> float:
    """The `percentile` of sorted `samples` (nearest rank), in milliseconds."""
    rank = max(1, -(-percentile * len(samples) // 100))
    return samples[rank - 1] * 1000


if __name__ == "__main__":
    sys.exit(main())
