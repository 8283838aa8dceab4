"""Leaderboard pages in a real Chromium, side by side with Harbor's own viewer.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/autolab_bench_pages \\
        .venv/bin/python benchmarks/pages_bench.py [--visits 5] [--reuse]

Loads `generate_synthetic`'s full-size board (17 entries x 36 tasks x 3
rollouts) into the database (DATABASE_URL, default a scratch PostgreSQL
database autolab_bench_pages, created when missing), collects the static
files into a temporary folder and serves the site under gunicorn as `make
demo` and production do (WhiteNoise, hashed and compressed files). In the
same run it starts `harbor view` (the installed harbor package) on a
temporary jobs folder holding the real trials of ../shared/autolab/trials
(copied at run time, with a job config and result written by Harbor's own
models), then loads, in Debian's Chromium through Playwright:

- `/`, `/heatmap/` and a model page of the synthetic board;
- Harbor's jobs page (`/`).

For each page: DOMContentLoaded, the time its content (our table, Harbor's
job row) is on screen, and the bytes on the wire, on a first visit (empty
cache, median of --visits fresh browser contexts) and on a repeat visit;
then each of ours as a ratio to Harbor's and to the targets (DOMContentLoaded
300 ms, 600 KB on a first visit). Server time p50 over HTTP with a warm cache
(target 150 ms) and the recomputation of the board after a new rollout
(target 2 s) complete the figures. Nothing is asserted.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from leaderboard_bench import load_synthetic, recompute_after_new_rollout, setup_bench  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/autolab_bench_pages"
VERSION = "bench-pages"
SHARED_TRIALS = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared")) / "autolab" / "trials"
DCL_TARGET_MS = 300.0
BYTES_TARGET_KB = 600.0
WARM_TARGET_MS = 150.0
RECOMPUTE_TARGET_S = 2.0

# Records, from the page itself, when its content is first on screen.
CONTENT_PROBE = """
(() => {
  const probe = window.__contentProbe = {at: null};
  const test = () => {
    if (probe.at !== null) return;
    const ok = window.__contentSelector
      ? document.querySelector(window.__contentSelector)
      : document.body && document.body.innerText.includes(window.__contentText);
    if (ok) { probe.at = performance.now(); observer.disconnect(); }
  };
  const observer = new MutationObserver(test);
  observer.observe(document, {childList: true, subtree: true, characterData: true});
})();
"""
MEASURE = """
() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  return {
    dcl: nav.domContentLoadedEventEnd,
    load: nav.loadEventEnd,
    content: window.__contentProbe ? window.__contentProbe.at : null,
    bytes: nav.transferSize + resources.reduce((n, r) => n + r.transferSize, 0),
    requests: 1 + resources.length,
  };
}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_processes(processes) -> None:
    """Terminate the servers a benchmark started, killing any that do not end within 10 s."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s")


def harbor_jobs_folder(work: Path) -> Path:
    """A Harbor jobs folder with one job holding copies of the shared real trials."""
    from harbor.models.job.config import JobConfig
    from harbor.models.job.result import JobResult, JobStats
    from harbor.models.trial.config import TrialConfig
    from harbor.models.trial.result import TrialResult

    if not SHARED_TRIALS.is_dir():
        raise SystemExit(f"no real trials at {SHARED_TRIALS}: Harbor's viewer needs a jobs folder to show")
    job = work / "jobs" / "autolab-flux2_klein_lora"
    job.mkdir(parents=True)
    for trial in sorted(p for p in SHARED_TRIALS.iterdir() if p.is_dir()):
        shutil.copytree(trial, job / trial.name)
    trials = [t for t in sorted(job.iterdir()) if (t / "result.json").exists()]
    results = [TrialResult.model_validate_json((t / "result.json").read_text()) for t in trials]
    configs = [TrialConfig.model_validate_json((t / "config.json").read_text()) for t in trials]
    stats = JobStats.from_trial_results(results, n_total_trials=len(results))
    started = min(r.started_at for r in results if r.started_at)
    finished = max(r.finished_at for r in results if r.finished_at)
    result = JobResult(id=uuid.uuid4(), started_at=started, finished_at=finished, n_total_trials=len(results), stats=stats)
    (job / "result.json").write_text(result.model_dump_json(indent=2))
    config = JobConfig(job_name=job.name, jobs_dir=job.parent, agents=[c.agent for c in configs])
    (job / "config.json").write_text(config.model_dump_json(indent=2))
    return job.parent


def visit(browser, url: str, content: dict, context=None) -> dict:
    own = context is None
    context = context or browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.add_init_script(f"window.__contentSelector = {json.dumps(content.get('selector'))};"
                         f" window.__contentText = {json.dumps(content.get('text'))};")
    page.add_init_script(CONTENT_PROBE)
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    page.wait_for_function("window.__contentProbe && window.__contentProbe.at !== null", timeout=30_000)
    figures = page.evaluate(MEASURE)
    page.close()
    if own:
        context.close()
    return figures


def measure_page(browser, url: str, content: dict, visits: int) -> dict:
    firsts = [visit(browser, url, content) for _ in range(visits)]
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    visit(browser, url, content, context)
    repeats = [visit(browser, url, content, context) for _ in range(visits)]
    context.close()

    def median(rows: list[dict], key: str) -> float:
        return statistics.median(r[key] for r in rows if r[key] is not None)

    return {
        "dcl": median(firsts, "dcl"),
        "content": median(firsts, "content"),
        "kb": median(firsts, "bytes") / 1000,
        "requests": median(firsts, "requests"),
        "repeat_dcl": median(repeats, "dcl"),
        "repeat_kb": median(repeats, "bytes") / 1000,
    }


def server_p50_ms(url: str, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    args = setup_bench(
        __doc__, DEFAULT_DB, requests=20, steps=0,
        more_arguments=lambda parser: parser.add_argument("--visits", type=int, default=5, help="visits per page and kind"),
    )  # fmt: skip
    visits = args.visits
    from django.db import connection

    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    version = load_synthetic(VERSION, args)
    from agents.models import AgentModel
    from trajectories.models import Rollout

    model = AgentModel.objects.filter(rollouts__task__version=version).order_by("name").first()
    print(f"{version}: {version.tasks.count()} tasks, {Rollout.objects.filter(task__version=version).count()} rollouts")

    work = Path(tempfile.mkdtemp(prefix="autolab-pages-bench-"))
    processes = []
    try:
        env = {**os.environ, "STATIC_ROOT": str(work / "static"), "AUTOLAB_DATA_DIR": str(work / "data")}
        python = str(ROOT / ".venv" / "bin" / "python")
        subprocess.run([python, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        ours_port, harbor_port = free_port(), free_port()
        processes.append(
            subprocess.Popen(
                [str(ROOT / ".venv" / "bin" / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{ours_port}",
                 "--workers", "2", "--log-level", "warning"],
                cwd=ROOT, env=env,
            )
        )  # fmt: skip
        jobs = harbor_jobs_folder(work)
        processes.append(
            subprocess.Popen(
                [str(ROOT / ".venv" / "bin" / "harbor"), "view", str(jobs), "--port", str(harbor_port), "--no-build", "--jobs"],
                cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        )  # fmt: skip
        ours = f"http://127.0.0.1:{ours_port}"
        harbor = f"http://127.0.0.1:{harbor_port}"
        wait_for(ours + "/api/v1/leaderboard/?version=" + VERSION, 120)
        wait_for(harbor + "/api/health")
        pages = {
            "leaderboard /": (f"{ours}/?version={VERSION}", {"selector": "#leaderboard-table tbody tr"}),
            "heatmap /heatmap/": (f"{ours}/heatmap/?version={VERSION}", {"selector": "#heatmap-table tbody tr"}),
            f"model page /models/{model.name}/": (f"{ours}/models/{model.name}/", {"selector": "#model-entries tbody tr"}),
        }
        # Warm every gunicorn worker's board cache: a first visit is the browser's, not the server's.
        for url, _ in pages.values():
            for _ in range(6):
                urllib.request.urlopen(url, timeout=60).read()
        server = {name: server_p50_ms(url, args.requests) for name, (url, _) in pages.items()}

        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
            )
            peer = measure_page(browser, harbor + "/", {"text": "autolab-flux2_klein_lora"}, visits)
            figures = {name: measure_page(browser, url, content, visits) for name, (url, content) in pages.items()}
            browser.close()
    finally:
        stop_processes(processes)
        shutil.rmtree(work, ignore_errors=True)
    recompute = recompute_after_new_rollout(version)

    print(f"\nChromium {visits} first visits (median, fresh context) and {visits} repeat visits; 1440 x 900")
    header = f"{'page':40} {'DCL ms':>8} {'content ms':>10} {'KB':>8} {'req':>4} {'repeat DCL':>10} {'repeat KB':>9}"
    print(header)
    rows = [("Harbor view: jobs page /", peer)] + list(figures.items())
    for name, f in rows:
        print(f"{name:40} {f['dcl']:>8.0f} {f['content']:>10.0f} {f['kb']:>8.1f} {f['requests']:>4.0f} {f['repeat_dcl']:>10.0f} {f['repeat_kb']:>9.1f}")
    print(f"\n{'measure':58} {'value':>9} {'target':>9} {'ratio':>6} {'vs Harbor':>9}")
    for name, f in figures.items():
        print(f"{name + ': DOMContentLoaded':58} {f['dcl']:>7.0f}ms {DCL_TARGET_MS:>7.0f}ms {f['dcl'] / DCL_TARGET_MS:>6.2f} {f['dcl'] / peer['dcl']:>9.2f}")
        print(f"{name + ': content on screen':58} {f['content']:>7.0f}ms {'':>9} {'':>6} {f['content'] / peer['content']:>9.2f}")
        print(f"{name + ': bytes on the wire, first visit':58} {f['kb']:>7.0f}KB {BYTES_TARGET_KB:>7.0f}KB {f['kb'] / BYTES_TARGET_KB:>6.2f} {f['kb'] / peer['kb']:>9.2f}")
        print(f"{name + ': server p50, warm':58} {server[name]:>7.1f}ms {WARM_TARGET_MS:>7.0f}ms {server[name] / WARM_TARGET_MS:>6.2f}")
    print(f"{'board recomputation after a new rollout':58} {recompute:>8.2f}s {RECOMPUTE_TARGET_S:>8.1f}s {recompute / RECOMPUTE_TARGET_S:>6.2f}")
    print("\nratio < 1 meets the target; 'vs Harbor' < 1 is lighter or faster than Harbor's viewer.")


if __name__ == "__main__":
    main()
