"""How fast the rollout page serves the shared opus trial, beside Harbor's viewer.

Prints, for the real shared opus rollout (139 steps, 637 KB trajectory):
the rollout page's server time (median of N requests through Django's test
client, template rendering included) and the bytes it sends before the
reader expands anything; then the time Harbor 0.25's own FastAPI viewer
takes to serve the same trial's raw trajectory JSON, and the ratio.

    .venv/bin/python benchmarks/explorer_bench.py [--repeat 15]

With --long K it also serves a long rollout: the same trial's steps
repeated K times (1,390 steps for K=10, timestamps shifted on so the run
goes on), as a twelve-hour AutoLab run may have. The page holds one page of
steps (trajectories.explorer.STEPS_PER_PAGE) whatever the length; printed
are its first and last pages, a step permalink's redirect, and the compare
page of the two rollouts (one window of elapsed time,
trajectories.explorer.COMPARE_WINDOW_STEPS steps a side at most).

It builds a throw-away test database (SQLite unless DATABASE_URL says
otherwise; set AUTOLAB_TEST_DB to keep it apart from others' runs) and a
temporary Harbor jobs folder holding a copy of the trial; neither outlives
the run. The targets are under 300 ms and under 1 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")

SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared")) / "autolab"
TARGET_MS = 300
TARGET_BYTES = 1_000_000


def timed(fn, repeat: int) -> tuple[float, object]:
    """Median wall time in ms over `repeat` calls after one warm-up call."""
    result = fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), result


def bench_site(trial_dir: Path, repeat: int, long_dir: Path | None = None) -> dict:
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from django.urls import reverse

    from tasks.services import import_tasks
    from trajectories.models import Rollout
    from trajectories.services import import_path

    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    setup_test_environment()
    # Keep one connection across requests, as a deployment with persistent
    # connections does (and so the query count below sees every query).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        import_tasks(SHARED / "tasks", version="1.1")
        report = import_path(trial_dir)
        if not report.ok:
            raise SystemExit(f"import failed: {report.as_dict()}")
        rollout = Rollout.objects.get(trial_name__endswith=trial_dir.name.split("__")[-1], n_steps__lt=1000)
        client = Client()
        url = reverse("trajectories:rollout_detail", args=[rollout.pk])
        page_ms, response = timed(lambda: client.get(url), repeat)
        assert response.status_code == 200, response.status_code
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        n_queries = len(queries.captured_queries)
        only_ms, only_response = timed(lambda: client.get(url + "?only=benchmark,edit"), repeat)
        result = {
            "steps": rollout.n_steps,
            "page_ms": page_ms,
            "page_bytes": len(response.content),
            "queries": n_queries,
            "only_ms": only_ms,
            "only_bytes": len(only_response.content),
        }
        if long_dir is not None:
            report = import_path(long_dir)
            if not report.ok:
                raise SystemExit(f"import failed: {report.as_dict()}")
            long = Rollout.objects.get(trial_name=long_dir.name)
            url = reverse("trajectories:rollout_detail", args=[long.pk])
            first_ms, first = timed(lambda: client.get(url), repeat)
            last_ms, last = timed(lambda: client.get(url + "?page=999"), repeat)
            step_ms, redirect = timed(lambda: client.get(url + f"?step={long.n_steps - 3}"), repeat)
            assert redirect.status_code == 302, redirect.status_code
            compare_url = reverse("trajectories:compare") + f"?a={rollout.pk}&b={long.pk}"
            compare_ms, compare = timed(lambda: client.get(compare_url), repeat)
            assert compare.status_code == 200, compare.status_code
            result["long"] = {
                "steps": long.n_steps,
                "first_ms": first_ms,
                "first_bytes": len(first.content),
                "last_ms": last_ms,
                "last_bytes": len(last.content),
                "step_ms": step_ms,
                "compare_ms": compare_ms,
                "compare_bytes": len(compare.content),
            }
        return result
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def long_trial(trial_dir: Path, times: int, target: Path) -> Path:
    """A copy of `trial_dir` named `target.name` whose trajectory repeats its steps `times` times."""
    from datetime import datetime

    from ingest_bench import copy_trial

    copy_trial(trial_dir, target)
    path = target / "agent" / "trajectory.json"
    trajectory = json.loads(path.read_text())
    steps = trajectory["steps"]
    stamps = [datetime.fromisoformat(step["timestamp"]) for step in steps if step.get("timestamp")]
    span = (max(stamps) - min(stamps)) if stamps else None
    repeated = []
    for round_ in range(times):
        for step in steps:
            copy = json.loads(json.dumps(step))
            copy["step_id"] = len(repeated) + 1
            if span is not None and copy.get("timestamp"):
                copy["timestamp"] = (datetime.fromisoformat(copy["timestamp"]) + span * round_).isoformat()
            repeated.append(copy)
    trajectory["steps"] = repeated
    path.write_text(json.dumps(trajectory))
    return target


def bench_harbor(trial_dir: Path, repeat: int) -> dict:
    from fastapi.testclient import TestClient
    from harbor.viewer.server import create_app

    with tempfile.TemporaryDirectory(prefix="harbor-viewer-") as folder:
        job = Path(folder) / "bench-job"
        shutil.copytree(trial_dir, job / trial_dir.name)
        with TestClient(create_app(Path(folder), mode="jobs")) as client:
            url = f"/api/jobs/bench-job/trials/{trial_dir.name}/trajectory"
            ms, response = timed(lambda: client.get(url), repeat)
            assert response.status_code == 200, response.text[:200]
            return {"ms": ms, "bytes": len(response.content)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--trial", default="opus4.6__2026-04-26__2TyoFTQ")
    parser.add_argument("--long", type=int, default=10, help="also serve a rollout of the trial's steps repeated this many times (0: no)")
    args = parser.parse_args()
    trial_dir = SHARED / "trials" / args.trial
    if not trial_dir.is_dir():
        raise SystemExit(f"shared trial not found at {trial_dir} (../shared is absent)")

    with tempfile.TemporaryDirectory(prefix="explorer-bench-") as folder:
        long_dir = long_trial(trial_dir, args.long, Path(folder) / f"long-x{args.long}__{args.trial}") if args.long > 1 else None
        site = bench_site(trial_dir, args.repeat, long_dir)
    harbor = bench_harbor(trial_dir, args.repeat)
    print(f"trial {args.trial}: {site['steps']} steps, median of {args.repeat} requests")
    print(
        f"rollout page        {site['page_ms']:8.1f} ms  {site['page_bytes'] / 1000:8.1f} KB"
        f"  {site['queries']} queries  (targets < {TARGET_MS} ms, < {TARGET_BYTES / 1e6:.0f} MB)"
    )
    print(f"  ?only=benchmark,edit {site['only_ms']:5.1f} ms  {site['only_bytes'] / 1000:8.1f} KB")
    print(f"harbor viewer JSON  {harbor['ms']:8.1f} ms  {harbor['bytes'] / 1000:8.1f} KB  (raw trajectory only, no HTML)")
    print(f"ratio page / harbor {site['page_ms'] / harbor['ms']:8.2f} x time  {site['page_bytes'] / harbor['bytes']:6.2f} x bytes")
    ok = site["page_ms"] < TARGET_MS and site["page_bytes"] < TARGET_BYTES
    long = site.get("long")
    if long:
        from trajectories.explorer import STEPS_PER_PAGE

        print(f"long rollout, {long['steps']} steps (x{args.long}), pages of {STEPS_PER_PAGE}:")
        print(f"  first page          {long['first_ms']:8.1f} ms  {long['first_bytes'] / 1000:8.1f} KB")
        print(f"  last page           {long['last_ms']:8.1f} ms  {long['last_bytes'] / 1000:8.1f} KB")
        print(f"  ?step=N (redirect)  {long['step_ms']:8.1f} ms")
        print(f"  compare with the trial {long['compare_ms']:5.1f} ms  {long['compare_bytes'] / 1000:8.1f} KB")
        ok = ok and all(long[f"{which}_ms"] < TARGET_MS and long[f"{which}_bytes"] < TARGET_BYTES for which in ("first", "last", "compare"))
    print("within targets" if ok else "OUTSIDE TARGETS")


if __name__ == "__main__":
    main()
