"""The rollout page's first-load weight with the trial tabs, beside Harbor's viewer on the same trial.

    .venv/bin/python benchmarks/trial_tabs_bench.py [--visits 3]

A throw-away site (SQLite and an artifact folder in a temporary data
directory, the site under gunicorn with its collected static files, as
`make demo` serves it) gets the real tasks and the shared opus trial
(../shared/autolab/trials), its folder copied to the artifact storage as the
runner does when a trial ends. `harbor view` (the installed harbor package)
serves a jobs folder holding the same trial. In Debian's Chromium, on a first
visit (empty cache, median of --visits fresh contexts), both pages are loaded
until the network is idle, and printed are the bytes on the wire (gzip as
served) and the number of requests:

- our rollout page with the trial's own files (10);
- the same page after 500 more files and a 5 MB trial.log were stored: the
  first load should not change (the tabs fetch their content when opened);
- each tab's fragment, fetched by clicking it;
- Harbor's trial page (its single-page app and the API calls it makes).

Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared")) / "autolab"
OPUS = "opus4.6__2026-04-26__2TyoFTQ"
BIN = Path(sys.executable).parent

WEIGHT = """
() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  return {bytes: nav.transferSize + resources.reduce((n, r) => n + r.transferSize, 0), requests: 1 + resources.length};
}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visits", type=int, default=3)
    args = parser.parse_args()
    opus_dir = SHARED / "trials" / OPUS
    if not opus_dir.is_dir():
        print(f"the shared opus trial is missing: {opus_dir}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="trial-tabs-bench-"))
    os.environ.pop("DATABASE_URL", None)
    os.environ.update({
        "AUTOLAB_DATA_DIR": str(work / "data"), "AUTOLAB_ARTIFACTS_DIR": str(work / "artifacts"),
        "STATIC_ROOT": str(work / "static"), "DJANGO_SETTINGS_MODULE": "autolab_site.settings",
        # The 500 files are stored between visits, beside Playwright's event loop (one thread, no overlap).
        "DJANGO_ALLOW_ASYNC_UNSAFE": "true",
    })
    try:
        return run(args, work, opus_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path, opus_dir: Path) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    from tasks.services import import_tasks
    from trajectories.models import Rollout
    from trajectories.services import import_path, store_trial_files

    call_command("migrate", verbosity=0, interactive=False)
    call_command("collectstatic", "--noinput", verbosity=0)
    import_tasks(SHARED / "tasks", version="1.1")
    assert import_path(opus_dir).ok
    opus = Rollout.objects.get(trial_name__endswith=OPUS.split("__")[-1])
    store_trial_files(opus, opus_dir)
    from django.db import connections

    connections.close_all()
    return serve_and_measure(args, work, opus, opus_dir, store_trial_files)


def add_many_files(opus, folder: Path, store) -> int:
    (folder / "outputs").mkdir(parents=True)
    names = [f"outputs/sample_{n:03d}.png" for n in range(500)]
    for name in names:
        (folder / name).write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(2048))
    (folder / "trial.log").write_bytes(b"".join(b"%08d INFO the agent waits for the benchmark\n" % n for n in range(110_000)))
    return len(store(opus, folder, [*names, "trial.log"]))


def serve_and_measure(args, work: Path, opus, opus_dir: Path, store) -> int:
    from pages_bench import free_port, harbor_jobs_folder, stop_processes, wait_for
    from playwright.sync_api import sync_playwright

    processes = []
    try:
        ours_port, harbor_port = free_port(), free_port()
        processes.append(subprocess.Popen(
            [str(BIN / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{ours_port}", "--workers", "2",
             "--log-level", "warning"], cwd=ROOT, env=os.environ.copy(),
        ))  # fmt: skip
        jobs = harbor_jobs_folder(work / "harbor")
        processes.append(subprocess.Popen(
            [str(BIN / "harbor"), "view", str(jobs), "--port", str(harbor_port), "--no-build", "--jobs"],
            cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ))  # fmt: skip
        ours = f"http://127.0.0.1:{ours_port}/rollouts/{opus.pk}/"
        harbor = f"http://127.0.0.1:{harbor_port}/jobs/{next(jobs.iterdir()).name}/trials/{opus_dir.name}"
        wait_for(ours, 120)
        wait_for(f"http://127.0.0.1:{harbor_port}/api/health")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
            )
            few = median_visit(browser, ours, args.visits)
            n_files = add_many_files(opus, work / "many", store)
            many = median_visit(browser, ours, args.visits)
            tabs = tab_weights(browser, ours)
            theirs = median_visit(browser, harbor, args.visits)
            browser.close()
    finally:
        stop_processes(processes)
    print(f"opus trial ({opus.n_steps} steps), first visit, median of {args.visits} (bytes on the wire, gzip as served)")
    print(f"{'page':52} {'KB':>9} {'requests':>9}")
    line("rollout page, the trial's own files (10)", few)
    line(f"rollout page, {n_files} files and a 5 MB trial.log", many)
    for slug, weight in tabs.items():
        line(f"  {slug} tab, fetched when opened", weight)
    line("Harbor view, same trial (app and its API calls)", theirs)
    print(f"ratio ours / Harbor's first load: {few['bytes'] / theirs['bytes']:.2f} x bytes, "
          f"{few['requests'] / theirs['requests']:.2f} x requests")
    return 0


def line(name: str, weight: dict) -> None:
    print(f"{name:52} {weight['bytes'] / 1000:9.1f} {weight['requests']:9.0f}")


def median_visit(browser, url: str, visits: int) -> dict:
    rows = []
    for _ in range(visits):
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.goto(url, wait_until="networkidle")
        rows.append(page.evaluate(WEIGHT))
        context.close()
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def tab_weights(browser, url: str) -> dict:
    """Bytes of each tab's fragment (and the requests it took), opened one after the other."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    found = {}
    for slug in ("verifier", "artifacts", "config", "log", "exception"):
        with page.expect_response(lambda r, s=slug: f"/tabs/{s}/" in r.url) as response:
            page.click(f"#tab-{slug}")
        page.wait_for_selector(f'#trial-tab-panel [data-tab-body="{slug}"]')
        entries = page.evaluate(
            f"() => performance.getEntriesByType('resource').filter(r => r.name.includes('/tabs/{slug}/')).map(r => r.transferSize)"
        )
        found[slug] = {"bytes": sum(entries) or len(response.value.body()), "requests": len(entries) or 1}
    context.close()
    return found


if __name__ == "__main__":
    sys.exit(main())
