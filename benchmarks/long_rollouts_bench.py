"""Long rollouts stay light: the explorer and the importer on long and real rollouts, in one run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/long_rollouts_bench.py [--visits 3] [--copies 60] [--jobs 2]

A scratch PostgreSQL database (autolab_bench_long on DATABASE_URL's server,
dropped at the end) gets the real tasks and the shared opus trial
(../shared/autolab/trials, 139 steps), and a 20,016-step rollout made of
that trial's steps repeated 144 times (timestamps shifted on). Printed, each
beside its target:

- the 20,000-step rollout's first page: bytes and server time (Django's test
  client, template rendering included; the first request for it, nothing
  of it cached, in a process that has served the home page as a running
  server has, then the median of --requests warm ones). Targets 1 MB, 300 ms.
- the opus rollout's page: bytes of HTML before anything is expanded
  (target 150 KB), and, in Debian's Chromium, the time from navigation until
  its last step is on screen (scrolled to, as a reader pressing End), beside
  Harbor's own viewer (`harbor view`) showing the same trial; median of
  --visits fresh browser contexts. Target: no slower than Harbor's.
- bulk import of --copies copies of the opus trial on --jobs processes:
  steps per second (target 5,000).
- a live tick that appends one step (what the runner's watcher does each
  time trajectory.json grows: trajectories.services.live_import), on the
  139-step trial and on a 2,085-step one: median ms per tick. O(new steps)
  means the two are about equal.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared")) / "autolab"
OPUS = "opus4.6__2026-04-26__2TyoFTQ"
PAGE_BYTES_TARGET = 1_000_000
PAGE_MS_TARGET = 300.0
OPUS_HTML_TARGET = 150_000
BULK_TARGET = 5_000

# Records when an element (or text) first exists in the page, and when,
# once scrolled to, it is inside the viewport.
PROBE = """
(() => {
  const probe = window.__probe = {present: null, onScreen: null};
  const find = () => window.__probeSelector
    ? document.querySelector(window.__probeSelector)
    : [...document.querySelectorAll('body *')].reverse().find(el => (el.textContent || '').includes(window.__probeText));
  // Once the step is in the document, the reader goes to it (as pressing End
  // would); it is on screen when a frame shows it inside the viewport.
  const follow = el => {
    el.scrollIntoView({block: 'end'});
    const r = el.getBoundingClientRect();
    if (r.height > 0 && r.bottom > 0 && r.top < window.innerHeight) probe.onScreen = performance.now();
    else requestAnimationFrame(() => follow(el));
  };
  const test = () => {
    if (probe.present !== null) return;
    const present = window.__probeSelector ? find() : document.body && document.body.innerText.includes(window.__probeText);
    if (!present) return;
    probe.present = performance.now();
    observer.disconnect();
    requestAnimationFrame(() => follow(find()));
  };
  const observer = new MutationObserver(test);
  observer.observe(document, {childList: true, subtree: true, characterData: true});
})();
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visits", type=int, default=3)
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--copies", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--db", default="autolab_bench_long")
    args = parser.parse_args()
    if not (SHARED / "trials" / OPUS).is_dir():
        print(f"the shared opus trial is missing: {SHARED / 'trials' / OPUS}", file=sys.stderr)
        return 2
    server_url = os.environ.get("DATABASE_URL", "")
    if not server_url.startswith(("postgres://", "postgresql://")):
        print("DATABASE_URL must name a PostgreSQL server (the bulk import figure is PostgreSQL's)", file=sys.stderr)
        return 2
    from ingest_bench import _create_database, _drop_database

    scratch = _create_database(server_url, args.db)
    os.environ["DATABASE_URL"] = scratch
    work = Path(tempfile.mkdtemp(prefix="long-rollouts-bench-"))
    os.environ.setdefault("AUTOLAB_DATA_DIR", str(work / "data"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
    try:
        return run(args, work, scratch)
    finally:
        from django.db import connections

        connections.close_all()
        _drop_database(server_url, args.db)
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path, database_url: str) -> int:
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    from explorer_bench import long_trial
    from tasks.services import import_tasks
    from trajectories.models import Rollout
    from trajectories.services import import_path

    setup_test_environment()
    call_command("migrate", verbosity=0, interactive=False)
    import_tasks(SHARED / "tasks", version="1.1")
    opus_dir = SHARED / "trials" / OPUS
    assert import_path(opus_dir).ok
    opus = Rollout.objects.get(trial_name__endswith=OPUS.split("__")[-1], n_steps__lt=1000)
    long_dir = long_trial(opus_dir, 144, work / "long" / f"long-x144__{OPUS}")
    started = time.perf_counter()
    report = import_path(long_dir)
    long_import = time.perf_counter() - started
    assert report.ok, report.as_dict()
    long = Rollout.objects.get(trial_name=long_dir.name)

    pages = server_figures(long, opus, args.requests)
    browser = browser_figures(opus, opus_dir, work, database_url, args.visits)
    bulk = bulk_import(opus_dir, work, args.copies, args.jobs)
    ticks = {n: live_tick_ms(opus_dir, work, n) for n in (139, 2085)}

    print(f"20,000-step rollout: {long.n_steps} steps (imported in {long_import:.1f} s)")
    print(f"{'measure':58} {'value':>10} {'target':>10} {'ratio':>6}")
    row("first page: bytes", pages["long_bytes"] / 1000, "KB", PAGE_BYTES_TARGET / 1000)
    row("first page: server time, first request for it", pages["long_cold_ms"], "ms", PAGE_MS_TARGET)
    row("  (the process's own first request, the home page)", pages["process_start_ms"], "ms", None)
    row(f"first page: server time, warm (median of {args.requests})", pages["long_warm_ms"], "ms", PAGE_MS_TARGET)
    row("last page: server time, warm", pages["long_last_ms"], "ms", PAGE_MS_TARGET)
    print(f"opus rollout ({opus.n_steps} steps):")
    row("HTML before expanding", pages["opus_bytes"] / 1000, "KB", OPUS_HTML_TARGET / 1000)
    row("server time, warm", pages["opus_warm_ms"], "ms", PAGE_MS_TARGET)
    row(f"Chromium: last step on screen (median of {args.visits})", browser["ours"]["on_screen"], "ms", browser["harbor"]["on_screen"])
    row("  Harbor view, same trial: last step on screen", browser["harbor"]["on_screen"], "ms", None)
    row("Chromium: first paint (ours)", browser["ours"]["paint"], "ms", browser["harbor"]["paint"])
    row("  Harbor view: first paint", browser["harbor"]["paint"], "ms", None)
    row("Chromium: DOM nodes (ours)", browser["ours"]["nodes"], "", browser["harbor"]["nodes"])
    row("  Harbor view: DOM nodes", browser["harbor"]["nodes"], "", None)
    row("Chromium: page height (ours)", browser["ours"]["height"], "px", None)
    print(f"bulk import, {args.copies} x opus on {args.jobs} processes (PostgreSQL):")
    row("steps per second", bulk, "/s", BULK_TARGET, higher_is_better=True)
    print("live tick appending one step (the runner's watcher, trajectory.json grown by one):")
    for n, ms in ticks.items():
        row(f"{n}-step rollout: ms per tick (median)", ms, "ms", None)
    print(f"  ratio 2085 / 139 steps: {ticks[2085] / ticks[139]:.2f} (1.0 is O(new steps), 15 is O(all steps))")
    print("ratio < 1 meets the target (steps per second: > 1).")
    return 0


def row(name: str, value: float, unit: str, target: float | None, higher_is_better: bool = False) -> None:
    ratio = "" if not target else f"{value / target:6.2f}"
    target_text = "" if target is None else f"{target:,.0f}{unit}"
    print(f"{name:58} {value:>8,.1f}{unit:<2} {target_text:>10} {ratio:>6}")


def timed(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def server_figures(long, opus, repeat: int) -> dict:
    from django.test import Client
    from django.urls import reverse

    client = Client()
    long_url = reverse("trajectories:rollout_detail", args=[long.pk])
    opus_url = reverse("trajectories:rollout_detail", args=[opus.pk])
    # A running server has loaded its middleware and URLconf before anyone
    # opens this rollout: the first request here is the site's home page.
    started = time.perf_counter()
    assert client.get("/").status_code == 200
    process_start = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    response = client.get(long_url)
    cold = (time.perf_counter() - started) * 1000
    assert response.status_code == 200
    opus_page = client.get(opus_url)
    return {
        "long_bytes": len(response.content),
        "long_cold_ms": cold,
        "process_start_ms": process_start,
        "long_warm_ms": timed(lambda: client.get(long_url), repeat),
        "long_last_ms": timed(lambda: client.get(long_url + "?page=999"), repeat),
        "opus_bytes": len(opus_page.content),
        "opus_warm_ms": timed(lambda: client.get(opus_url), repeat),
    }


def browser_figures(opus, opus_dir: Path, work: Path, database_url: str, visits: int) -> dict:
    from pages_bench import free_port, harbor_jobs_folder, stop_processes, wait_for
    from playwright.sync_api import sync_playwright

    processes = []
    try:
        env = {**os.environ, "DATABASE_URL": database_url, "STATIC_ROOT": str(work / "static"), "AUTOLAB_DATA_DIR": str(work / "data")}
        python = str(ROOT / ".venv" / "bin" / "python")
        subprocess.run([python, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        ours_port, harbor_port = free_port(), free_port()
        processes.append(subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{ours_port}",
             "--workers", "2", "--log-level", "warning"], cwd=ROOT, env=env,
        ))  # fmt: skip
        jobs = harbor_jobs_folder(work / "harbor")
        processes.append(subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "harbor"), "view", str(jobs), "--port", str(harbor_port), "--no-build", "--jobs"],
            cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ))  # fmt: skip
        ours = f"http://127.0.0.1:{ours_port}/rollouts/{opus.pk}/"
        job = next(jobs.iterdir()).name
        harbor = f"http://127.0.0.1:{harbor_port}/jobs/{job}/trials/{opus_dir.name}"
        wait_for(ours, 120)
        wait_for(f"http://127.0.0.1:{harbor_port}/api/health")
        for _ in range(4):
            urllib.request.urlopen(ours, timeout=60).read()
        last = json.loads((opus_dir / "agent" / "trajectory.json").read_text())["steps"][-1]
        last_text = (last.get("message") or "").splitlines()[0][:60]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
            )
            figures = {
                "ours": median_visit(browser, ours, {"selector": f"#step-{last['step_id']}"}, visits),
                "harbor": median_visit(browser, harbor, {"text": last_text}, visits),
            }
            browser.close()
        return figures
    finally:
        stop_processes(processes)


def median_visit(browser, url: str, probe: dict, visits: int) -> dict:
    rows = [visit(browser, url, probe) for _ in range(visits)]
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def visit(browser, url: str, probe: dict) -> dict:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.add_init_script(
        f"window.__probeSelector = {json.dumps(probe.get('selector'))}; window.__probeText = {json.dumps(probe.get('text'))};"
    )
    page.add_init_script(PROBE)
    page.goto(url, wait_until="commit")
    # Polled from here: wait_for_function would evaluate its predicate in the
    # page, which our Content-Security-Policy (no eval) refuses. The probe
    # keeps its own timestamps, so the polling interval does not count.
    deadline = time.monotonic() + 60
    on_screen = None
    while on_screen is None and time.monotonic() < deadline:
        on_screen = page.evaluate("() => window.__probe ? window.__probe.onScreen : null")
        if on_screen is None:
            time.sleep(0.02)
    assert on_screen is not None, f"{url}: the last step never came on screen"
    # onScreen is taken in the frame before it is painted: the paint entry may come just after.
    paint = None
    deadline = time.monotonic() + 5
    while paint is None and time.monotonic() < deadline:
        paint = page.evaluate(
            "() => (performance.getEntriesByName('first-contentful-paint')[0] || {startTime: null}).startTime"
        )
        if paint is None:
            time.sleep(0.02)
    nodes = page.evaluate("() => document.getElementsByTagName('*').length")
    height = page.evaluate("() => document.documentElement.scrollHeight")
    context.close()
    return {"on_screen": on_screen, "paint": paint or 0.0, "nodes": nodes, "height": height}


def bulk_import(opus_dir: Path, work: Path, copies: int, jobs: int) -> float:
    from ingest_bench import copy_trial
    from trajectories.services import import_path

    folder = work / "bulk"
    for index in range(copies):
        copy_trial(opus_dir, folder / f"bulk__{index:04d}")
    started = time.perf_counter()
    report = import_path(folder, jobs=jobs)
    total = time.perf_counter() - started
    assert report.ok, report.as_dict()
    return sum(outcome.n_steps for outcome in report.outcomes) / total


def live_tick_ms(opus_dir: Path, work: Path, n_steps: int, ticks: int = 5) -> float:
    """Median ms of the runner watcher's tick (trajectories.services.live_import) when trajectory.json gained one step.

    The file is rewritten whole for every step, as Harbor's agents write it
    (format_trajectory_json); writing it is not timed.
    """
    from harbor.utils.trajectory_utils import format_trajectory_json

    from evaluations.models import Campaign
    from agents.services import ensure_harness, ensure_model
    from explorer_bench import long_trial
    from ingest_bench import copy_trial
    from tasks.services import match_task
    from trajectories.models import Rollout, RolloutStatus
    from trajectories.services import live_import

    folder = work / "live" / f"live-{n_steps}__{OPUS}"
    if n_steps <= 139:
        copy_trial(opus_dir, folder)
    else:
        long_trial(opus_dir, -(-n_steps // 139), folder)
    (folder / "result.json").unlink()
    config = json.loads((folder / "config.json").read_text())
    task = match_task(config["task"]["path"].rsplit("/", 1)[-1], version="1.1")
    model, harness = ensure_model("bench/live-model"), ensure_harness("terminus-2", "2.0.0")
    campaign = Campaign.objects.create(model=model, harness=harness, version=task.version)
    rollout = Rollout.objects.create(
        task=task, model=model, harness=harness, campaign=campaign, trial_name=config["trial_name"], status=RolloutStatus.RUNNING
    )
    path = folder / "agent" / "trajectory.json"
    full = json.loads(path.read_text())
    steps = full["steps"][:n_steps]
    live = live_import(folder, rollout.pk)
    path.write_text(format_trajectory_json(dict(full, steps=steps[: n_steps - ticks])))
    assert live.tick().ok
    samples = []
    for count in range(n_steps - ticks + 1, n_steps + 1):
        path.write_text(format_trajectory_json(dict(full, steps=steps[:count])))
        started = time.perf_counter()
        outcome = live.tick()
        samples.append((time.perf_counter() - started) * 1000)
        assert outcome.ok and outcome.n_steps == count, outcome
    assert live.full_imports == 1, "a tick fell back to a full import"
    return statistics.median(samples)


if __name__ == "__main__":
    sys.exit(main())
