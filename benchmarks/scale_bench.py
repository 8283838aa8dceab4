"""The board at 25, 100 and 300 entries: a cold board, what a new rollout costs, pages that do not grow, search, import.

    .venv/bin/python benchmarks/scale_bench.py [--requests 20] [--rounds 3] [--reuse]
        [--copies 500] [--visits 5] [--import-copies 60] [--jobs 2] [--skip-browser] [--skip-import] [--only-import]
        [--only-list]
        [--cache redis://...|local]
        [--skip-cold] [--only-cold] [--cache redis://...|local]

Issue 49's figures (unless --skip-cold; --only-cold prints them alone, without
the corpus): the site under gunicorn as docker-compose runs it (3 workers x
4 threads) with one boards worker. With nothing cached or stored (a new
generation, the cache flushed, the stored board deleted), 4 simultaneous
first views at each size: the longest wait (target 1 s: the page says the
board is being built) and the seconds until the board is served; the CPU
(web and boards worker) of 4 such views against one at 100 entries (target
1.2x: one build); after a cache flush and a restart, each size's first view
(the stored board) and the web worker's resident memory once it served every
size (target 300 MB); the leaderboard's HTML at 300 entries (250 KB); and
the full build of the 300-entry board from nothing against a plain numpy
computation of the same figures (`numpy_floor`; target 1.5x).

Issue 27's benchmark, in one run on PostgreSQL (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/autolab_bench_scale, created when
missing). It builds two synthetic versions with `generate_synthetic`: 25
and 100 entries x 36 tasks x 3 rollouts (no steps: the board reads none),
each model labelled as long as the longest model name in the shared trials'
configs, provider included ("openai/xai-grok-4-20-reasoning" and a number,
33 characters; the site stores it as "xai-grok-4-20-reasoning": a margin over
real names, which a page's weight must hold for), and imports --copies renamed copies of each real trial of
../shared/autolab/trials (ingest_bench.copy_trial, trajectories.services.import_path
on every CPU) for real steps: one corpus shared by both sizes, which the
rollout page and the searches read. --reuse keeps both when already loaded.

Then, alternating the sizes in each of --rounds rounds (this machine's speed
drifts), through Django's test client, it prints each figure beside its
target and their ratio:

- warm p50 / p95 (--requests each) of the leaderboard, heatmap, API
  leaderboard, a model page (synthetic-model-<size>: at 25 its page holds
  both versions' boards, at 100 only the 100-entry one), the rollouts list
  of the version, the page of a real imported rollout (the opus trial,
  139 steps) and three searches on /search/ (search_bench's rare command,
  its word in every trial and its substring inside words of every trial).
  Targets: 150 ms (issue 27's is at 100 entries), search p95 300 ms;
- the first leaderboard view after one new rollout of that version (target
  <= 3x warm, and <= 2x the 25-entry figure), and the first view of the
  *other* version after it (per-version invalidation: it stays warm). The
  site runs as deployed (docs/scaling.md): a shared cache, --cache (Redis
  database 13 unless CACHE_URL says otherwise, emptied first), where a board
  is served as it was, with its age, while the boards worker updates it
  (a page never builds one: docs/scaling.md, "A board's life"); --cache
  local runs the embedded default's per-process cache (the update figure below);
- the board update after a new rollout (serving.rebuild: what the
  boards worker runs, incremental), the first view of the board it made
  (from the shared cache, its rows rendered: what each web process pays
  once per board), and once the full recompute
  (compute_board: what every new rollout cost before, and the reference);
- the leaderboard's and heatmap's first page: HTML bytes and elements
  (targets 250 KB and 2,500); likewise the ?part=board fragments a sort or
  task-order click fetches (static/js/board_swap.js), whose warm p50/p95
  are timed with the pages above (they read the cached board).

Unless --skip-browser: the site under gunicorn (collected static files, as
pages_bench serves it) and Debian's Chromium through Playwright
(/usr/bin/chromium, or $CHROMIUM): DOM nodes of the leaderboard and heatmap
once the network is idle, at a 1440 x 900 viewport (target 2,500; the nodes
of the leaderboard's plotly charts shown apart: each chart draws when
scrolled to, so a chart below the fold counts none), and the median of
--visits column-sort clicks, timed in the page from the click event to the
next frame where a one-page table sorts in place, or, where the board is
paged, to the frame after the server's sorted part is swapped in without a
reload (static/js/board_swap.js; a page without that script: to the next
page's DOMContentLoaded, its load event beside) (target 100 ms); the
heatmap's task-order click (on the server, swapped in alike) likewise.

Unless --skip-import: steps per second of importing --import-copies copies
of the opus trial through import_path (ingest_bench._bulk_import) on 1
and --jobs processes (60 by default: the search indexes' GIN indexes merge
their pending entries every 25 to 30 trials here, tens of milliseconds each,
which a rate over 20 trials held once or not at all), against PostgreSQL's binary COPY of the same rows,
timed after each trial of the 1-process import, side by side with it
(ingest_bench.floor_tables: every row the import stores but the rollout's
own, the search index's chunks and document too; the step rows' COPY
alone printed beside it; target: import <= 4x COPY's time), both
after one trial imported untimed (its time printed apart: a process's first
trial loads modules and Harbor's validator, which the parallel run's
workers inherit from this process when they fork); and the peak
resident memory (VmHWM) of a fresh process running the `import_trials`
command on the 20,016-step trial (explorer_bench.long_trial: the opus steps
x 144), beside the same on the 139-step trial, the process's own floor
(target: peak <= 2x the trajectory file). Also, with no target, the
1-process rate again with the search documents left out (every step's,
chunk's and the rollout's words empty; the indexes stay): what the rest of
an import costs, and so the search upkeep's share. The rollouts these
imports add are deleted again.

--only-list: the rollouts list alone, at 25 and 300 entries (2,700 and
32,400 rollouts of a version): the warm p50 of its first page in five
orders (task, reward, steps, model, harness), with three filters, and of
its fifth page (followed by its "next" links), and each at 32,400 against
2,700 (issue 49's target: 1.2x).

Figures and ratios are printed (ratio < 1 meets the target); nothing is
asserted.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leaderboard_bench import setup_bench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/autolab_bench_scale"
# A deployment's shared cache (docs/scaling.md), a database of its own: emptied at the start.
DEFAULT_CACHE = "redis://127.0.0.1:6379/13"
SIZES = (25, 100, 300)
WARM_TARGET_MS = 150.0
SEARCH_TARGET_MS = 300.0
BYTES_TARGET = 250_000
ELEMENTS_TARGET = 2_500
SORT_TARGET_MS = 100.0
IMPORT_TARGET_X = 4.0
MEMORY_TARGET_X = 2.0
CORPUS_PREFIX = "scale-real-"
# search_bench's queries, by its labels: a rare word, a word in every trial, a substring inside words.
SEARCH_LABELS = {
    "rare word": "a rare command",
    "common word": "a word in every trial, many steps",
    "substring": "inside words, in every trial (substring stage)",
}
# A click's time, kept in sessionStorage across the navigation it starts:
# the click event (captured before the page's own handlers), and the next frame.
# Where the click swaps the server's sorted part in (static/js/board_swap.js), the frame after
# its "autolab:board-swapped" event.
CLICK_CLOCK = """
document.addEventListener("click", (event) => {
  sessionStorage.setItem("__click", String(performance.timeOrigin + event.timeStamp));
  requestAnimationFrame(() => sessionStorage.setItem("__frame", String(performance.timeOrigin + performance.now())));
}, true);
document.addEventListener("autolab:board-swapped", () => {
  requestAnimationFrame(() => sessionStorage.setItem("__swapped", String(performance.timeOrigin + performance.now())));
});
"""
AFTER_CLICK = """
() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const click = Number(sessionStorage.getItem("__click"));
  return {dcl: performance.timeOrigin + nav.domContentLoadedEventEnd - click, load: performance.timeOrigin + nav.loadEventEnd - click};
}
"""
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]


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


# The longest model name among ../shared/autolab/trials' configs, provider included (stored without it).
REAL_MODEL_NAME = "openai/xai-grok-4-20-reasoning"


def label_models_as_real_ones() -> None:
    """Give every synthetic model a label as long as a real model's (the pages show labels)."""
    from agents.models import AgentModel
    from evaluations.boards import invalidation

    models = list(AgentModel.objects.filter(name__startswith="synthetic-model-"))
    for model in models:
        model.display_name = f"{REAL_MODEL_NAME}-{model.name.rsplit('-', 1)[-1]}"
    AgentModel.objects.bulk_update(models, ["display_name"])
    invalidation.invalidate()


def load_corpus(copies: int, reuse: bool, work: Path) -> None:
    """`copies` renamed copies of each real trial, imported (kept under --reuse when all are there)."""
    from django.db import connection

    from ingest_bench import SHARED, _register_task, copy_trial
    from trajectories.models import Rollout
    from trajectories.services import import_path

    trials = sorted(p for p in (SHARED / "autolab" / "trials").iterdir() if p.is_dir())
    stored = Rollout.objects.filter(trial_name__startswith=CORPUS_PREFIX)
    if reuse and stored.count() == copies * len(trials):
        return
    stored.delete()
    _register_task()
    folder = work / "corpus"
    for index in range(copies):
        for trial in trials:
            copy_trial(trial, folder / f"{CORPUS_PREFIX}{index:05d}__{trial.name}")
    start = time.perf_counter()
    report = import_path(folder, jobs=None)
    assert report.ok, report.as_dict()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    shutil.rmtree(folder)
    print(f"imported {copies} x {len(trials)} real trials in {time.perf_counter() - start:.1f} s")


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


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def new_rollout(version) -> int:
    """One more finished rollout of `version` (a copy of one there), as a worker's import would add it."""
    from trajectories.models import Rollout

    rollout = Rollout.objects.filter(task__version=version).order_by("pk").first()
    rollout.pk = None
    rollout.trial_name = f"{rollout.trial_name}-scale-{time.time_ns()}"
    rollout.index = 1000 + Rollout.objects.filter(task__version=version).count()
    rollout.save()
    return rollout.pk


def page_urls(size: int, real_rollout_pk: int) -> dict[str, str]:
    """The pages timed warm at `size` entries: the board's, then those of the real steps."""
    from urllib.parse import quote

    from search_bench import QUERIES

    name = version_name(size)
    queries = dict(QUERIES)
    urls = {
        "leaderboard": f"/?version={name}",
        "heatmap": f"/heatmap/?version={name}",
        # What a sort or order click fetches (static/js/board_swap.js): from the cached board, never a rebuild.
        "leaderboard sorted part": f"/?version={name}&sort=model&part=board",
        "heatmap ordered part": f"/heatmap/?version={name}&order=task&part=board",
        "api leaderboard": f"/api/v1/leaderboard/?version={name}",
        "model page": f"/models/synthetic-model-{size:02d}/",
        "rollouts list": f"/rollouts/?version={name}",
        "rollout page (real, 139 steps)": f"/rollouts/{real_rollout_pk}/",
    }
    for label, wanted in SEARCH_LABELS.items():
        q = queries[wanted]
        urls[f"search, {label} {q!r}"] = f"/search/?q={quote(q)}"
    return urls


def search_outcome(client, url: str) -> str:
    """The search page's own account of its answer: matches, and whether its time limit cut it short."""
    html = client.get(url).content.decode()
    found = re.search(r"(\d+) match", html)
    cut = "search-notice" in html
    return f"{found.group(1) if found else '?'} matches{', cut short' if cut else ''}"


def server_figures(args, versions, real_rollout_pk: int) -> list:
    from django.test import Client

    from evaluations.boards import compute, serving

    from trajectories.models import Rollout

    client = Client()
    urls = {size: page_urls(size, real_rollout_pk) for size in SIZES}
    warm: dict[tuple[int, str], list[float]] = {}
    first: dict[int, list[float]] = {size: [] for size in SIZES}
    other_first: dict[int, list[float]] = {size: [] for size in SIZES}
    update: dict[int, list[float]] = {size: [] for size in SIZES}
    after_update: dict[int, list[float]] = {size: [] for size in SIZES}
    full: dict[int, float] = {}
    added: list[int] = []
    for size in SIZES:  # as the boards worker would have: a page never builds one
        serving.build(versions[size])
    for _ in range(args.rounds):
        for size in SIZES:
            name = version_name(size)
            for page, url in urls[size].items():
                client.get(url)  # warm
                warm.setdefault((size, page), []).extend(timed_ms(client, url) for _ in range(args.requests))
            other = version_name(next(s for s in SIZES if s != size))
            client.get(f"/?version={other}")  # the other version warm too
            added.append(new_rollout(versions[size]))
            first[size].append(timed_ms(client, f"/?version={name}"))
            other_first[size].append(timed_ms(client, f"/?version={other}"))
            # What the boards worker runs after a rollout (with a per-process cache the first view above
            # already did it: another rollout for it to update).
            if not serving.shared_cache():
                added.append(new_rollout(versions[size]))
            start = time.perf_counter()
            serving.rebuild(versions[size].id)
            update[size].append((time.perf_counter() - start) * 1000)
            after_update[size].append(timed_ms(client, f"/?version={name}"))
    Rollout.objects.filter(pk__in=added).delete()
    for size in SIZES:
        start = time.perf_counter()
        compute.compute_board(versions[size])
        full[size] = (time.perf_counter() - start) * 1000

    rows = []
    searches = {page: search_outcome(client, url) for page, url in urls[100].items() if page.startswith("search")}
    for size in SIZES:
        print_size = f"{size} entries:"
        for page in urls[size]:
            times = warm[(size, page)]
            target = SEARCH_TARGET_MS if page.startswith("search") else WARM_TARGET_MS
            label = f"{page} ({searches[page]})" if page in searches else page
            rows.append((f"{print_size} {label} warm p50", statistics.median(times), target, "ms"))
            rows.append((f"{print_size} {label} warm p95", p95(times), target, "ms"))
        lb_warm = statistics.median(warm[(size, "leaderboard")])
        rows.append((f"{print_size} first view after a new rollout (vs 3x warm)", statistics.median(first[size]), 3 * lb_warm, "ms"))
        rows.append((f"{print_size} the other version's first view after it", statistics.median(other_first[size]), WARM_TARGET_MS, "ms"))
        rows.append((f"{print_size} board update after a new rollout (the worker's)", statistics.median(update[size]), 3 * lb_warm, "ms"))
        rows.append((f"{print_size} first view of the updated board", statistics.median(after_update[size]), 3 * lb_warm, "ms"))
        rows.append((f"{print_size} full recompute (before issue 27, and the reference)", full[size], 3 * lb_warm, "ms"))
        for page in ("leaderboard", "heatmap", "leaderboard sorted part", "heatmap ordered part"):
            html = client.get(urls[size][page]).content.decode()
            rows.append((f"{print_size} {page} page 1 HTML", len(html.encode()) / 1000, BYTES_TARGET / 1000, "KB"))
            rows.append((f"{print_size} {page} page 1 elements", elements(html), ELEMENTS_TARGET, ""))
    ratio = statistics.median(first[100]) / statistics.median(first[25])
    rows.append(("first view after a new rollout, 100 / 25 entries", ratio, 2.0, "x"))
    ratio = statistics.median(update[100]) / statistics.median(update[25])
    rows.append(("board update after a new rollout, 100 / 25 entries", ratio, 2.0, "x"))
    return rows


# The rollouts list at 25 and 300 entries x 36 tasks x 3 rollouts (2,700 and 32,400 rollouts of a version).
LIST_SIZES = (25, 300)
LIST_FLAT_TARGET_X = 1.2


def list_urls(size: int) -> dict[str, str]:
    """The rollouts list of the version at `size` entries: its first page in each order, and with filters."""
    name = version_name(size)
    urls = {
        "first page": f"/rollouts/?version={name}",
        "by reward": f"/rollouts/?version={name}&sort=-reward",
        "by steps": f"/rollouts/?version={name}&sort=steps",
        "by model": f"/rollouts/?version={name}&sort=model",
        "by harness": f"/rollouts/?version={name}&sort=harness",
        "score >= 0.5": f"/rollouts/?version={name}&min=0.5",
        "one model": f"/rollouts/?version={name}&model=synthetic-model-01",
        "a cause": f"/rollouts/?version={name}&cause=infrastructure_error",
    }
    return urls


def next_page_url(html: str) -> str | None:
    found = re.search(r'<a href="(\?[^"]*)"[^>]*>next', html)
    return found.group(1).replace("&amp;", "&") if found else None


def list_figures(args) -> list:
    """Warm p50 of the rollouts list at 2,700 and 32,400 rollouts of a version, sizes alternating; their ratio."""
    from django.test import Client

    from trajectories.models import Rollout

    client = Client()
    urls = {size: list_urls(size) for size in LIST_SIZES}
    for size in LIST_SIZES:
        # The fifth page, reached by following "next" (what a reader does; a number past the first pages).
        url = urls[size]["first page"]
        for _ in range(4):
            url = "/rollouts/" + next_page_url(client.get(url).content.decode())
        urls[size]["fifth page"] = url
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(args.rounds):
        for size in LIST_SIZES:
            for page, url in urls[size].items():
                client.get(url)  # warm
                times.setdefault((size, page), []).extend(timed_ms(client, url) for _ in range(args.requests))
    rows = []
    small, large = LIST_SIZES
    counts = {size: Rollout.objects.filter(task__version__name=version_name(size)).count() for size in LIST_SIZES}
    for page in urls[small]:
        for size in LIST_SIZES:
            rows.append((f"rollouts list, {counts[size]:,} rollouts: {page} warm p50", statistics.median(times[(size, page)]), WARM_TARGET_MS, "ms"))
        ratio = statistics.median(times[(large, page)]) / statistics.median(times[(small, page)])
        rows.append((f"  {page}: {counts[large]:,} / {counts[small]:,} rollouts", ratio, LIST_FLAT_TARGET_X, "x"))
    return rows


def browser_figures(args, work: Path) -> list:
    """DOM nodes and sort-click times of the leaderboard and heatmap in Chromium, the site under gunicorn."""
    from pages_bench import free_port, stop_processes, wait_for
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "STATIC_ROOT": str(work / "static")}
    bin_dir = Path(sys.executable).parent
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    processes = [subprocess.Popen(
        [str(bin_dir / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--log-level", "warning"], cwd=ROOT, env=env,
    )]  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    rows = []
    try:
        wait_for(f"{base}/api/v1/leaderboard/?version={version_name(SIZES[0])}", 120)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=BROWSER_ARGS
            )
            for size in SIZES:
                name = version_name(size)
                for page_name, url, table in (
                    ("leaderboard", f"{base}/?version={name}", "#leaderboard-table"),
                    ("heatmap", f"{base}/heatmap/?version={name}", "#heatmap-table"),
                ):
                    found = measure_board_page(browser, url, table, args.visits)
                    rows.append((f"{size} entries: {page_name} DOM nodes (Chromium)", found["nodes"], ELEMENTS_TARGET, ""))
                    if found["chart_nodes"]:
                        rows.append((f"  of which in its charts (plotly)", found["chart_nodes"], None, ""))
                    if found["in_place"]:
                        rows.append((f"{size} entries: {page_name} sort click, to the next frame (sorted in place)", found["dcl"], SORT_TARGET_MS, "ms"))
                    elif found["swapped"]:
                        rows.append((f"{size} entries: {page_name} sort click, to the frame after the server's part is swapped in", found["dcl"], SORT_TARGET_MS, "ms"))
                    else:
                        rows.append((f"{size} entries: {page_name} sort click, to the next page's DOMContentLoaded", found["dcl"], SORT_TARGET_MS, "ms"))
                        rows.append((f"  to its load event (scripts, charts)", found["load"], None, "ms"))
            browser.close()
    finally:
        stop_processes(processes)
    return rows


def with_part(url: str) -> str:
    """`url` with ?part=board, as static/js/board_swap.js fetches it (its fragment left out)."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = [(key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True) if key != "part"]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode([*query, ("part", "board")]), ""))


def warm_over_http(url: str, times: int = 6, workers: int = 2) -> None:
    """Every gunicorn worker's board cache warm for `url`: a click measures the browser and a warm server.

    The requests go `workers` at a time: one at a time, an idle worker took
    them all, and a click that reached the other paid its first board read
    (about 90 ms at 100 entries: clicks of 108-110 ms among 60-90).
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        for _ in range(times):
            list(pool.map(lambda _: urllib.request.urlopen(url, timeout=120).read(), range(workers)))


def measure_board_page(browser, url: str, table: str, visits: int) -> dict:
    """DOM nodes of the board page at `url`, and the median of `visits` column-sort clicks on it.

    The click's time is taken in the page (CLICK_CLOCK): from the click event
    to the next frame where the table sorts in place; where a paged board
    swaps in the server's sorted part (static/js/board_swap.js: fetch,
    parse, replace), to the frame after the swap; else (a page without that
    script) to the next page's DOMContentLoaded (the sorted table is there)
    and load event (its scripts and charts too).
    Playwright's own overhead (its checks before clicking) is not counted.
    """
    warm_over_http(url)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.add_init_script(CLICK_CLOCK)
    page.goto(url, wait_until="networkidle")
    nodes = page.evaluate("() => document.getElementsByTagName('*').length")
    charts = page.evaluate("() => document.querySelectorAll('.chart *').length")
    links = page.locator(f"{table} thead th a")
    for i in (1, 2):
        sorted_url = url.split("?")[0] + links.nth(i).get_attribute("href")
        warm_over_http(sorted_url)
        warm_over_http(with_part(sorted_url))  # what the click fetches where the board swaps parts in
    in_place = page.evaluate(f"() => {table!r} === '#leaderboard-table' && !document.querySelector({table!r}).dataset.paged")
    swapped = page.evaluate(f"() => Boolean(document.querySelector({table!r}).closest('[data-swap]'))")
    samples = []
    for visit in range(visits):
        page.goto(url, wait_until="load")
        page.evaluate("() => sessionStorage.clear()")
        link = page.locator(f"{table} thead th a").nth(1 + visit % 2)
        if in_place:
            link.click()
            _poll(page, "sessionStorage.getItem('__frame')")
            frame = page.evaluate("() => Number(sessionStorage.getItem('__frame')) - Number(sessionStorage.getItem('__click'))")
            samples.append({"dcl": frame, "load": frame})
        elif swapped:
            link.click()
            _poll(page, "sessionStorage.getItem('__swapped')")
            swap = page.evaluate("() => Number(sessionStorage.getItem('__swapped')) - Number(sessionStorage.getItem('__click'))")
            samples.append({"dcl": swap, "load": swap})
        else:
            with page.expect_navigation(wait_until="load"):
                link.click()
            samples.append(page.evaluate(AFTER_CLICK))
    context.close()
    return {
        "nodes": nodes,
        "chart_nodes": charts,
        "in_place": in_place,
        "swapped": swapped,
        "dcl": statistics.median(s["dcl"] for s in samples),
        "load": statistics.median(s["load"] for s in samples),
    }


def _poll(page, expression: str, seconds: float = 30) -> None:
    """Wait until `expression` is not null in the page (wait_for_function would eval, which the site's CSP refuses)."""
    deadline = time.monotonic() + seconds
    while page.evaluate(f"() => {expression}") is None:
        if time.monotonic() > deadline:
            raise TimeoutError(expression)
        time.sleep(0.01)


def import_figures(args, work: Path) -> list:
    """Import rate on 1 and --jobs processes against a binary COPY of the same rows; peak memory on 20,016 steps."""
    import threading

    from ingest_bench import TRIAL, _bulk_import, _register_task, _rows_floor, copy_trial, floor_tables
    from trajectories.models import Rollout
    from trajectories.services import import_path

    _register_task()  # --only-import on a new database has no corpus that registered it
    bulk = Rollout.objects.filter(trial_name__startswith="bulk__")
    Rollout.objects.filter(trial_name="warm__opus").delete()
    # One trial first, untimed in the rates: the process loads what an import uses once (modules,
    # Harbor's validator), as the 2-process run's workers, forked from this process, have already.
    # Its rows are the floor's: COPYed after each trial of the 1-process import (ingest_bench._bulk_import).
    bulk.delete()
    copy_trial(TRIAL, work / "import-warm" / "warm__opus")
    started = time.perf_counter()
    assert import_path(work / "import-warm", jobs=1).ok
    first_trial_ms = (time.perf_counter() - started) * 1000
    warm = Rollout.objects.get(trial_name="warm__opus")
    rates, side_by_side = {}, None
    for jobs in sorted({1, args.jobs}):
        bulk.delete()
        if jobs > 1 and threading.active_count() > 1:
            print(f"note: {threading.active_count()} threads in this process: the bulk import runs on one process")
        folder = work / f"import-{jobs}"
        for index in range(args.import_copies):
            copy_trial(TRIAL, folder / f"bulk__{index:04d}")
        with floor_tables(warm.pk) as floor_data:
            measured = _bulk_import(folder, import_path, jobs, floor_data=floor_data)  # sampled on 1 process only
        assert measured is not None
        rates[jobs] = measured.steps / measured.total
        if jobs == 1:
            median_trial = statistics.median(measured.times)
        side_by_side = measured.floor if measured.floor is not None else side_by_side
    floors = _rows_floor(warm.pk)  # None off PostgreSQL: no COPY to compare with
    bulk.delete()
    without_search = import_without_search_documents(work, args.import_copies)
    warm.delete()
    n_steps = warm.n_steps
    rows = []
    if floors is not None:
        rows.append((f"binary COPY of the same rows, steps/s (opus, {n_steps} steps), after each trial of the 1-process import", n_steps / side_by_side, None, "/s"))
        rows.append(("  the same, 10 in a row after the imports (the floor before 2026-12-06's second change)", n_steps / floors.rows, None, "/s"))
        rows.append(("  the step rows alone (steps, calls, observations; no search index rows), steps/s", n_steps / floors.step_rows, None, "/s"))
    rows.append(("  the first trial a process imports, untimed in the rates below", first_trial_ms, None, "ms"))
    for jobs, rate in rates.items():
        processes = f"{jobs} process{'es' if jobs > 1 else ''}"
        rows.append((f"import on {processes}, steps/s ({args.import_copies} x opus)", rate, None, "/s"))
        if floors is not None:
            rows.append((f"import on {processes}: COPY rate / import rate", n_steps / side_by_side / rate, IMPORT_TARGET_X, "x"))
            if jobs == 1:
                # The rate above is every trial's time, merges and the first trial's own read included.
                rows.append(("  the median trial's time / COPY's (no target: the rate above is the target's)", median_trial / side_by_side, None, "x"))
    rows.append(("  the same on 1 process with the search documents left out, steps/s", without_search, None, "/s"))
    if floors is not None:
        # That import stores no search index row: its floor is the step rows'.
        rows.append(("  the same: step rows' COPY rate / import rate (no target: the rest of an import)", n_steps / floors.step_rows / without_search, None, "x"))
    rows.append(("  the search documents' share of 1 process's import time", 100 * (1 - rates[1] / without_search), None, "%"))

    peaks = peak_memory(work)
    mb = 1e6
    rows.append((f"import_trials peak RSS, {peaks['steps']:,}-step trial", peaks["long"] / mb, None, "MB"))
    rows.append(("  its trajectory.json", peaks["file"] / mb, None, "MB"))
    rows.append(("  import_trials peak RSS, the 139-step trial (the process's floor)", peaks["small"] / mb, None, "MB"))
    rows.append(("import_trials peak RSS / trajectory file", peaks["long"] / peaks["file"], MEMORY_TARGET_X, "x"))
    rows.append(("  the same, above the 139-step trial's peak", (peaks["long"] - peaks["small"]) / peaks["file"], MEMORY_TARGET_X, "x"))
    return rows


def peak_memory(work: Path) -> dict:
    """Max RSS of `manage.py import_trials` (a fresh process, one job) on the 20,016-step trial and on the 139-step one."""
    import json

    from explorer_bench import long_trial
    from ingest_bench import TRIAL, copy_trial
    from trajectories.models import Rollout

    stamp = time.time_ns()
    long_dir = long_trial(TRIAL, 144, work / "long" / f"scale-long-{stamp}__{TRIAL.name}")
    small_dir = work / "small" / f"scale-small-{stamp}__{TRIAL.name}"
    copy_trial(TRIAL, small_dir)
    trajectory = long_dir / "agent" / "trajectory.json"
    try:
        return {
            "steps": len(json.loads(trajectory.read_text())["steps"]),
            "file": trajectory.stat().st_size,
            "long": import_peak_rss(long_dir),
            "small": import_peak_rss(small_dir),
        }
    finally:
        Rollout.objects.filter(trial_name__in=[long_dir.name, small_dir.name]).delete()


# import_trials run by its public entry point in a fresh process, which then
# reports its own high-water mark of resident memory. (wait4's ru_maxrss would
# not do: a forked child starts from its parent's, this benchmark's, peak.)
PEAK_IMPORT = """
import os, sys
import django
django.setup()
from django.core.management import call_command
call_command("import_trials", sys.argv[1], "--jobs", "1", stdout=open(os.devnull, "w"))
print(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1])
"""


def import_without_search_documents(work: Path, copies: int) -> float:
    """Steps/s of the 1-process import with every search document empty (ingest_bench.NoDocuments),
    the rows and indexes otherwise as they are."""
    from ingest_bench import TRIAL, NoDocuments
    from long_rollouts_bench import bulk_import
    from trajectories.models import Rollout
    from trajectories.storing import ingest

    real = ingest.TrajectoryDocuments
    ingest.TrajectoryDocuments = NoDocuments
    try:
        return bulk_import(TRIAL, work / "import-no-search", copies, 1)
    finally:
        ingest.TrajectoryDocuments = real
        Rollout.objects.filter(trial_name__startswith="bulk__").delete()


def import_peak_rss(folder: Path) -> int:
    """Bytes of the largest resident set a process running `import_trials folder --jobs 1` reached."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_IMPORT, str(folder)], cwd=ROOT, env=os.environ.copy(),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.split()[-1]) * 1024  # VmHWM is in kB


# --- issue 49: a cold board ---------------------------------------------------------------------------

COLD_WAIT_TARGET_S = 1.0
COLD_CPU_TARGET_X = 1.2
RSS_TARGET_MB = 300.0
FLOOR_TARGET_X = 1.5
COLD_VIEWS = 4
CPU_SIZE = 100  # the size the CPU of concurrent cold views is compared at (the issue's)
WARM_SIZE = 5  # a small version whose cold views warm the web workers first


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after the command's name (field 3 onwards)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()


def children_of(pid: int) -> list[int]:
    """Every descendant of a process (Linux's /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(_stat(int(entry.name))[1])
            except (OSError, ValueError):
                pass
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        kids = [child for child, of in parents.items() if of == parent]
        found += kids
        todo += kids
    return found


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for process in [pid, *children_of(pid)]:
        try:
            fields = _stat(process)
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def worker_rss_mb(pid: int) -> float:
    """The largest resident set among a gunicorn master's workers, in MB."""
    sizes = []
    for child in children_of(pid):
        status = Path(f"/proc/{child}/status").read_text()
        sizes.append(int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) * 1024)
    return max(sizes) / 1e6


def get_status(url: str) -> tuple[int, float]:
    """(HTTP status, seconds) of one GET."""
    import urllib.error

    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=300) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        error.read()
        status = error.code
    return status, time.perf_counter() - start


def make_cold(version) -> None:
    """No board of `version` anywhere: a new generation everywhere (the boards worker's kept state is of the
    old one: it builds from nothing), the shared cache flushed, the stored board gone."""
    from django.core.cache import cache

    from evaluations.boards import invalidation
    from evaluations.models import StoredBoard

    invalidation.invalidate()
    cache.clear()
    StoredBoard.objects.filter(version=version).delete()


def cold_views(base: str, name: str, views: int, seconds: float = 600) -> tuple[list[float], float]:
    """`views` simultaneous first views of a cold board: each one's wait, and the seconds until the page
    serves the board (polled every 0.5 s)."""
    from concurrent.futures import ThreadPoolExecutor

    url = f"{base}/?version={name}"
    start = time.perf_counter()
    with ThreadPoolExecutor(views) as pool:
        answers = list(pool.map(lambda _: get_status(url), range(views)))
    assert all(status in (200, 202) for status, _ in answers), answers  # the board, or "being built"
    deadline = time.monotonic() + seconds
    while get_status(url)[0] != 200:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the board of {name} was not built within {seconds:.0f} s")
        time.sleep(0.5)
    return [wait for _, wait in answers], time.perf_counter() - start


def warm_workers(base: str, times: int = 24) -> None:
    """Every gunicorn worker past its first requests (modules, URLs, templates), on pages that read no board."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: get_status(f"{base}/?version=no-such-version") and get_status(f"{base}/api/"), range(times)))


def start_site(env: dict, port: int):
    """gunicorn as docker-compose runs it (3 workers x 4 threads) and a boards worker (concurrency 1)."""
    bin_dir = Path(sys.executable).parent
    web = subprocess.Popen(
        [str(bin_dir / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "3",
         "--threads", "4", "--log-level", "warning"], cwd=ROOT, env=env,
    )  # fmt: skip
    boards = subprocess.Popen(
        [str(bin_dir / "celery"), "-A", "autolab_site", "worker", "-Q", "boards", "--concurrency", "1",
         "--loglevel", "WARNING", "--hostname", f"scale-boards-{port}@%h"], cwd=ROOT, env=env,
    )  # fmt: skip
    return web, boards


def cold_figures(args, versions, work: Path) -> list:
    """Cold first views (nothing cached or stored) at every size under gunicorn with a boards worker; the CPU
    of COLD_VIEWS simultaneous ones against one; the first views of a restarted site after a cache flush
    (the stored boards), and its web workers' memory once they served every size."""
    from pages_bench import free_port, stop_processes, wait_for

    from evaluations.boards import serving

    env = {**os.environ, "STATIC_ROOT": str(work / "static")}
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
    from autolab_site.celery import app

    app.control.purge()  # no build an earlier run left on the broker
    rows = []
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    processes = start_site(env, port)
    web, boards = processes
    try:
        wait_for(f"{base}/api/", 120)
        warm_workers(base)
        deadline = time.monotonic() + 120
        while not app.control.ping(timeout=1.0):  # the boards worker takes messages
            if time.monotonic() > deadline:
                raise SystemExit("the boards worker did not start")
        # A fresh web worker's first board page compiles its templates and opens its broker connection
        # (about a second): measured once, then every worker warmed on a small version's cold views.
        warm = load(WARM_SIZE, args)
        make_cold(warm)
        first_ever, _ = cold_views(base, version_name(WARM_SIZE), COLD_VIEWS)
        for _ in range(2):
            make_cold(warm)
            cold_views(base, version_name(WARM_SIZE), 2 * COLD_VIEWS)
        waits, built = {}, {}
        for size in SIZES:
            make_cold(versions[size])
            waits[size], built[size] = cold_views(base, version_name(size), COLD_VIEWS)
        cpu = {}
        for views in (1, COLD_VIEWS):
            make_cold(versions[CPU_SIZE])
            before = process_tree_cpu(web.pid) + process_tree_cpu(boards.pid)
            cold_views(base, version_name(CPU_SIZE), views)
            cpu[views] = process_tree_cpu(web.pid) + process_tree_cpu(boards.pid) - before
        rows.append((f"{WARM_SIZE} entries: a fresh web worker's first board page, cold (templates, broker connection)", max(first_ever), None, "s"))
        for size in SIZES:
            rows.append((f"{size} entries: cold first view, the longest of {COLD_VIEWS} at once (being built)", max(waits[size]), COLD_WAIT_TARGET_S, "s"))
            rows.append((f"  until the page serves the board (the boards worker's build)", built[size], None, "s"))
        rows.append((f"{CPU_SIZE} entries: CPU of {COLD_VIEWS} simultaneous cold views (web + boards worker)", cpu[COLD_VIEWS], None, "s"))
        rows.append((f"  of one cold view", cpu[1], None, "s"))
        rows.append((f"{CPU_SIZE} entries: CPU of {COLD_VIEWS} cold views / one", cpu[COLD_VIEWS] / cpu[1], COLD_CPU_TARGET_X, "x"))
    finally:
        stop_processes([web])
    # A restarted site after a cache flush: each size's first view reads the stored board.
    from django.core.cache import cache

    cache.clear()
    serving.forget_recent_boards()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--threads", "4", "--log-level", "warning"], cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        wait_for(f"{base}/api/", 120)
        warm_workers(base)
        status, wait = get_status(f"{base}/?version={version_name(WARM_SIZE)}")
        rows.append((f"{WARM_SIZE} entries: the restarted web worker's first board page (templates, broker connection)", wait, None, "s"))
        for size in SIZES:
            status, wait = get_status(f"{base}/?version={version_name(size)}")
            assert status == 200, (size, status)
            rows.append((f"{size} entries: first view after a cache flush and a restart (the stored board)", wait, COLD_WAIT_TARGET_S, "s"))
            for page in ("/heatmap/", "/api/v1/leaderboard/", f"/models/synthetic-model-{size:02d}/"):
                get_status(f"{base}{page}?version={version_name(size)}" if "models" not in page else f"{base}{page}")
        rows.append(("web worker RSS after serving every size (1 gunicorn worker)", worker_rss_mb(web.pid), RSS_TARGET_MB, "MB"))
        html = urllib.request.urlopen(f"{base}/?version={version_name(SIZES[-1])}", timeout=120).read()
        rows.append((f"{SIZES[-1]} entries: leaderboard page 1 HTML", len(html) / 1000, BYTES_TARGET / 1000, "KB"))
    finally:
        stop_processes([web, boards])
    return rows


def scores_array(version):
    """The version's counted scores as (entries, tasks, rollouts) with their counts, and its scopes' task
    positions (all tasks, then each category): what the numpy floor computes from."""
    import numpy as np

    from tasks.models import Task
    from trajectories.models import Rollout

    tasks = list(Task.objects.filter(version=version).order_by("category", "name"))
    position = {t.id: i for i, t in enumerate(tasks)}
    cells: dict[tuple, list[float]] = {}
    for model, harness, task, reward in Rollout.objects.filter(task__version=version, reward__isnull=False).values_list(
        "model_id", "harness_id", "task_id", "reward"
    ):
        cells.setdefault((model, harness), {}).setdefault(position[task], []).append(min(max(reward, 0.0), 1.0))
    entries = sorted(cells)
    width = max(len(v) for per in cells.values() for v in per.values())
    values = np.zeros((len(entries), len(tasks), width))
    counts = np.zeros((len(entries), len(tasks)), dtype=np.int64)
    for e, key in enumerate(entries):
        for t, got in cells[key].items():
            values[e, t, : len(got)] = got
            counts[e, t] = len(got)
    categories = sorted({t.category for t in tasks})
    scopes = [np.arange(len(tasks))] + [np.array([i for i, t in enumerate(tasks) if t.category == c]) for c in categories]
    return values, counts, scopes


def task_points(scores, tolerance: float = 1e-9):
    """Per task (and replicate), the Dominance points each entry wins against all the others: 2 a win, 1 a
    tie (within `tolerance`, of the next value up), its tie with itself left out. `scores` (E, ...): each
    column is sorted once, instead of comparing every pair."""
    import numpy as np

    n_entries = scores.shape[0]
    flat = scores.reshape(n_entries, -1)
    order = np.argsort(flat, axis=0, kind="stable")
    ranked = np.take_along_axis(flat, order, axis=0)
    rows = np.arange(n_entries)[:, None]
    new_run = np.ones(ranked.shape, dtype=bool)
    new_run[1:] = ranked[1:] - ranked[:-1] > tolerance
    run_start = np.maximum.accumulate(np.where(new_run, rows, 0), axis=0)
    ends_run = np.ones(ranked.shape, dtype=bool)
    ends_run[:-1] = new_run[1:]
    run_end = np.minimum.accumulate(np.where(ends_run, rows, n_entries - 1)[::-1], axis=0)[::-1]
    points = np.empty(flat.shape, dtype=np.int64)
    np.put_along_axis(points, order, 2 * run_start + (run_end - run_start), axis=0)
    return points.reshape(scores.shape)


def numpy_floor(values, counts, scopes, n_resamples: int = 1000, seed: int = 0, tolerance: float = 1e-9) -> dict:
    """The board's point figures and bootstrap in plain numpy, every entry at once: per scope Avg@k, Best@k,
    Dominance (per task against every other entry, ties one half), ranks; B paired resamples of the tasks
    and of each cell's rollouts; 95% intervals of Avg@k, Best@k and Dominance, and rank ranges. What the
    board computes, without its bookkeeping (no kept state, no per-entry generators, no objects)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_entries, n_tasks, width = values.shape
    safe = np.maximum(counts, 1)
    in_count = np.arange(width) < counts[..., None]
    means = np.where(in_count, values, 0.0).sum(-1) / safe
    bests = np.where(counts > 0, np.where(in_count, values, -np.inf).max(-1), 0.0)
    # Each cell's rollouts redrawn: (E, B, T) means and bests, an entry at a time (bounded memory).
    rep_means = np.zeros((n_entries, n_resamples, n_tasks))
    rep_bests = np.zeros((n_entries, n_resamples, n_tasks))
    for e in range(n_entries):
        picks = (rng.random((n_resamples, n_tasks, width)) * safe[e][None, :, None]).astype(np.int64)
        drawn = np.take_along_axis(np.broadcast_to(values[e][None], picks.shape), picks, axis=-1)
        real = in_count[e][None]
        rep_means[e] = np.where(real, drawn, 0.0).sum(-1) / safe[e]
        rep_bests[e] = np.where(counts[e][None] > 0, np.where(real, drawn, -np.inf).max(-1), 0.0)
    points = task_points(means, tolerance)  # (E, T)
    rep_points = task_points(rep_means, tolerance)  # (E, B, T)
    figures = {}
    for scope in scopes:
        draws = scope[rng.integers(0, len(scope), size=(n_resamples, len(scope)))]
        weights = np.zeros((n_resamples, n_tasks))
        np.add.at(weights, (np.arange(n_resamples)[:, None], draws), 1.0)
        avg, best = means[:, scope].mean(1), bests[:, scope].mean(1)
        rep_avg = (rep_means * weights).sum(-1) / len(scope)  # (E, B)
        rep_best = (rep_bests * weights).sum(-1) / len(scope)
        dominance = points[:, scope].sum(1) / (2 * (n_entries - 1) * len(scope))
        rep_dominance = (rep_points * weights).sum(-1) / (2 * (n_entries - 1) * len(scope))
        ordered = np.sort(rep_avg, axis=0)  # per replicate, how many entries lie above each
        above = np.stack([n_entries - np.searchsorted(ordered[:, b], rep_avg[:, b] + tolerance, side="right")
                          for b in range(n_resamples)], axis=1)
        ranks = 1 + (avg[None, :] > avg[:, None] + tolerance).sum(1)
        figures[len(figures)] = {
            "avg": avg, "best": best, "dominance": dominance, "rank": ranks,
            "avg_ci": np.percentile(rep_avg, [2.5, 97.5], axis=1), "best_ci": np.percentile(rep_best, [2.5, 97.5], axis=1),
            "dominance_ci": np.percentile(rep_dominance, [2.5, 97.5], axis=1),
            "rank_range": np.percentile(1 + above, [2.5, 97.5], axis=1),
        }
    return figures


def floor_figures(versions) -> list:
    """The full build of the largest board from nothing against the numpy floor of the same figures."""
    from evaluations.boards import compute

    size = SIZES[-1]
    version = versions[size]
    values, counts, scopes = scores_array(version)
    start = time.perf_counter()
    numpy_floor(values, counts, scopes, compute.N_RESAMPLES)
    floor = time.perf_counter() - start
    start = time.perf_counter()
    compute.compute_board(version)
    full = time.perf_counter() - start
    return [
        (f"{size} entries: full build from nothing (compute_board, its reads included)", full, None, "s"),
        (f"  the numpy floor of its figures ({compute.N_RESAMPLES:,} paired resamples, no reads)", floor, None, "s"),
        (f"{size} entries: full build / numpy floor", full / floor, FLOOR_TARGET_X, "x"),
    ]


def print_rows(rows: list) -> None:
    print(f"{'measure':82} {'value':>12} {'target':>12} {'ratio':>7}")
    for name, value, target, unit in rows:
        target_text = "" if target is None else f"{target:>10,.1f}{unit:>2}"
        ratio = "" if not target else f"{value / target:>7.2f}"
        print(f"{name:82} {value:>10,.1f}{unit:>2} {target_text:>12} {ratio:>7}")


def main() -> None:
    def more_arguments(parser):
        parser.add_argument("--rounds", type=int, default=3, help="rounds of the server figures, sizes alternating")
        parser.add_argument("--copies", type=int, default=500, help="copies of each real trial in the corpus")
        parser.add_argument("--visits", type=int, default=5, help="sort clicks per page in Chromium")
        parser.add_argument("--import-copies", type=int, default=60, help="copies of the opus trial the import rate is measured on")
        parser.add_argument("--jobs", type=int, default=2, help="processes of the parallel import")
        parser.add_argument("--skip-browser", action="store_true", help="no Chromium figures")
        parser.add_argument("--skip-import", action="store_true", help="no import rate or peak memory")
        parser.add_argument("--only-import", action="store_true", help="the import rate and peak memory alone (no corpus, no pages)")
        parser.add_argument("--only-list", action="store_true", help="the rollouts list at 2,700 and 32,400 rollouts alone (no corpus)")
        parser.add_argument("--only-cold", action="store_true", help="issue 49's figures alone: cold boards, memory, the numpy floor (no corpus)")
        parser.add_argument("--skip-cold", action="store_true", help="no cold-board figures (gunicorn and a boards worker)")
        parser.add_argument(
            "--cache", default=os.environ.get("CACHE_URL") or DEFAULT_CACHE,
            help=f"the shared cache (default $CACHE_URL, else {DEFAULT_CACHE}, emptied first); 'local': each process's own",
        )

    def configure(args):
        if args.cache == "local":
            os.environ.pop("CACHE_URL", None)
        else:
            os.environ["CACHE_URL"] = args.cache

    args = setup_bench(__doc__, DEFAULT_DB, requests=20, steps=0, more_arguments=more_arguments, configure=configure)
    from django.core.management import call_command
    from django.db import connection

    from ingest_bench import TRIAL
    from trajectories.models import Rollout, Step

    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    from django.core.cache import cache

    from evaluations.boards import serving

    cache.clear()  # nothing a board of an earlier run left
    print(f"cache: {os.environ['CACHE_URL'] if serving.shared_cache() else 'per process (LocMemCache)'}")
    if connection.vendor != "postgresql":
        print("note: not PostgreSQL; issue 27's figures are PostgreSQL's (no COPY floor here)")
    call_command("migrate", verbosity=0)
    work = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    try:
        if args.only_import:
            rows = import_figures(args, work)
            print()
            print_rows(rows)
            return
        if args.only_list:
            for size in LIST_SIZES:
                load(size, args)
            label_models_as_real_ones()
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")  # the planner's statistics of the rows just loaded, as autovacuum keeps them
            rows = list_figures(args)
            print()
            print_rows(rows)
            return
        versions = {size: load(size, args) for size in SIZES}
        label_models_as_real_ones()
        if args.only_cold:
            rows = cold_figures(args, versions, work) + floor_figures(versions)
            print()
            print_rows(rows)
            return
        load_corpus(args.copies, args.reuse, work)
        real = Rollout.objects.filter(trial_name__startswith=CORPUS_PREFIX, trial_name__endswith=TRIAL.name).order_by("pk").first()
        print(f"{Rollout.objects.count():,} rollouts, {Step.objects.count():,} steps")
        rows = server_figures(args, versions, real.pk)
        if not args.skip_cold:
            rows += cold_figures(args, versions, work) + floor_figures(versions)
        if not args.skip_import:
            rows += import_figures(args, work)
        if not args.skip_browser:
            rows += browser_figures(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print_rows(rows)
    print("\nratio < 1 meets the target.")


if __name__ == "__main__":
    main()
