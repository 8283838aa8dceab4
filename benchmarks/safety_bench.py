"""Hostile load against a running site: the worst search query, and bomb uploads, beside the leaderboard.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/autolab_bench_safety \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/NN \\
        .venv/bin/python benchmarks/safety_bench.py [--reuse] [--seconds 30]

Loads `generate_synthetic`'s board into the database (DATABASE_URL, default
a scratch PostgreSQL database autolab_bench_safety, created when missing),
then serves the site under gunicorn as production does (3 workers of 4 threads,
gunicorn's 30 s timeout) with a Celery worker (2 processes) on
CELERY_BROKER_URL (Redis), both on a temporary data folder. Printed:

(a) the leaderboard's p50 unloaded, then while 4 clients send the worst
    search query (text without words: a scan no index helps) in a loop for
    --seconds; ratio to the unloaded p50 (target: within 2x), and what the
    searches got (status codes, time, notices);
(b) two zip bombs (10 MB declaring 10 GiB) and one tar of 100,004 tiny files
    uploaded at once by a staff user: the time until each upload's job is
    refused (target: refused before extraction, under 1 s), the peak disk
    used under the data folder and the peak memory of the server's
    processes (gunicorn's and Celery's), and the leaderboard's p50 meanwhile.

Nothing is asserted; the figures are printed with their targets as ratios.
"""
from __future__ import annotations

import io
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from leaderboard_bench import load_synthetic, setup_bench  # noqa: E402
from pages_bench import free_port, wait_for  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/autolab_bench_safety"
VERSION = "bench-safety"
WORST_QUERY = "'''"  # no letters or digits: no word index, no trigram, a scan of every text
SEARCH_CLIENTS = 4
BOMB_DECLARED = 10 * 1024**3
TAR_ENTRIES = 100_004
RATIO_TARGET = 2.0
REFUSED_TARGET_S = 1.0


def more_arguments(parser) -> None:
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the search clients send their query")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker (the Dockerfile's 4; 1: sync workers)")


def main() -> None:
    args = setup_bench(__doc__, DEFAULT_DB, requests=40, steps=40, more_arguments=more_arguments)
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        sys.exit("set CELERY_BROKER_URL to a Redis database (redis://127.0.0.1:6379/NN)")
    load_synthetic(VERSION, args)
    work = Path(tempfile.mkdtemp(prefix="safety-bench-"))
    data = work / "data"
    data.mkdir()
    from django.conf import settings

    # The server signs sessions with this process's key: the staff session made here is valid there.
    env = {**os.environ, "AUTOLAB_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1", "DEBUG": "false",
           "SECRET_KEY": settings.SECRET_KEY}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "autolab_site.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "3", "--threads", str(args.threads), "--timeout", "30"],
        cwd=ROOT, env=env, stdout=open(work / "web.log", "w"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "autolab_site", "worker", "-Q", "cpu", "--concurrency", "2",
         "--pool", "prefork", "--without-gossip", "--without-mingle", "-n", f"safety-bench-{os.getpid()}@%h",
         "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stdout=open(work / "worker.log", "w"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(f"{base}/")
        print("building the hostile archives ...", flush=True)
        bomb = zip_bomb(work / "bomb.zip")
        many = many_files_tar(work / "many.tar")
        print(f"zip bomb: {bomb.stat().st_size / 1e6:.1f} MB declaring {BOMB_DECLARED / 1024**3:.0f} GiB; "
              f"tar: {TAR_ENTRIES} entries, {many.stat().st_size / 1e6:.0f} MB")
        run_figures(base, args, data, [web.pid, worker.pid], bomb, many)
    finally:
        for process in (web, worker):
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


def run_figures(base: str, args, data: Path, server_pids: list[int], bomb: Path, many: Path) -> None:
    import requests

    session = staff_session(base)
    board = f"{base}/?version={VERSION}"
    for _ in range(6):  # warm every gunicorn worker's board cache
        requests.get(board, timeout=60)
    unloaded = p50(board, args.requests)
    print(f"\nleaderboard p50, unloaded: {unloaded:7.1f} ms")

    # (a) 4 clients send the worst search query in a loop, each a process of
    # its own (threads here would share this process's GIL with the timing).
    context = multiprocessing.get_context("fork")
    found = context.Queue()
    from django.db import connections

    connections.close_all()

    def under_load(query: str) -> tuple[float, list[tuple[int, float, str]]]:
        clients = [context.Process(target=search_client, args=(base, query, time.time() + args.seconds, found))
                   for _ in range(SEARCH_CLIENTS)]
        for client in clients:
            client.start()
        time.sleep(1)
        p50_loaded = p50_for(board, args.seconds - 2)
        answers: list[tuple[int, float, str]] = []
        for _ in clients:
            answers += found.get()
        for client in clients:
            client.join()
        return p50_loaded, answers

    # A control first: the same 4 clients sending a search that scans nothing
    # (shorter than the minimum): what any cheap page in a loop costs the
    # leaderboard on this machine, with 3 workers.
    control, _ = under_load("%")
    loaded, searches = under_load(WORST_QUERY)
    codes = sorted({code for code, _, _ in searches})
    notices = {}
    for _, _, notice in searches:
        notices[notice or "(none)"] = notices.get(notice or "(none)", 0) + 1
    print(f"(a) leaderboard p50, {SEARCH_CLIENTS} clients searching {WORST_QUERY!r} for {args.seconds:.0f} s: "
          f"{loaded:7.1f} ms  ratio {loaded / unloaded:5.2f}x  (target <= {RATIO_TARGET:.0f}x: "
          f"{'met' if loaded / unloaded <= RATIO_TARGET else 'NOT met'})")
    print(f"    searches: {len(searches)} answered, status {codes}, p50 {statistics.median(t for _, t, _ in searches) * 1000:.0f} ms, "
          f"max {max(t for _, t, _ in searches) * 1000:.0f} ms; notices {notices}")
    print(f"    control, {SEARCH_CLIENTS} clients sending '%' (no scan) for {args.seconds:.0f} s: "
          f"{control:7.1f} ms  ratio {control / unloaded:5.2f}x")

    # (b) two zip bombs and one 100k-entry tar at once, each sent by a process
    # of its own from a multipart body written beforehand (streamed, as a
    # browser sends it).
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', session.get(f"{base}/rollouts/upload/", timeout=60).text)[1]
    cookies = {name: value for name, value in session.cookies.items()}
    bodies = [(label, multipart_body(path, name, token, data.parent / f"body-{name}"))
              for label, path, name in [("zip bomb 1", bomb, "bomb1.zip"), ("zip bomb 2", bomb, "bomb2.zip"),
                                        (f"tar of {TAR_ENTRIES} files", many, "many.tar")]]
    sampler = Sampler(data, server_pids)
    sampler.start()
    before = sampler.disk_now()
    done = context.Queue()
    senders = [context.Process(target=upload, args=(base, cookies, label, body, done)) for label, body in bodies]
    for sender in senders:
        sender.start()
    board_times = []
    while any(sender.is_alive() for sender in senders) and done.qsize() < len(senders) or len(board_times) < 20:
        start = time.perf_counter()
        requests.get(board, timeout=60)
        board_times.append((time.perf_counter() - start) * 1000)
    results = dict(done.get() for _ in senders)
    for sender in senders:
        sender.join()
    sampler.stop()
    print(f"(b) uploads at once (target: refused before extraction, under {REFUSED_TARGET_S:.0f} s):")
    for label, result in results.items():
        print(f"    {label:20s} upload sent (HTTP {result['http']}) in {result['posted']:5.2f} s; {result['status']} "
              f"{result['after_post']:5.2f} s after it (ratio {result['after_post'] / REFUSED_TARGET_S:4.2f}x), "
              f"{result['ended']:5.2f} s after the upload began: {result['error'][:90]}")
    print(f"    peak disk under the data folder: {(sampler.peak_disk - before) / 1e6:7.1f} MB above its "
          f"{before / 1e6:.1f} MB at the start (the stored uploads themselves: "
          f"{(2 * bomb.stat().st_size + many.stat().st_size) / 1e6:.0f} MB; Django's temporary copies in /tmp not counted)")
    print(f"    peak memory of the server's processes: {sampler.peak_rss / 1e6:7.1f} MB "
          f"(at the start {sampler.first_rss / 1e6:.1f} MB)")
    during = statistics.median(board_times)
    print(f"    leaderboard p50 meanwhile: {during:7.1f} ms  ratio {during / unloaded:5.2f}x to unloaded "
          f"({len(board_times)} requests)")


BOUNDARY = "----safety-bench-boundary-7f3a"


def multipart_body(path: Path, name: str, token: str, target: Path) -> tuple[Path, str]:
    """The upload form's multipart body for `path`, written to `target`; (body, content type)."""
    with open(target, "wb") as out:
        out.write(f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n{token}\r\n'.encode())
        out.write(f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="version"\r\n\r\n\r\n'.encode())
        out.write(f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="archive"; filename="{name}"\r\n'
                  "Content-Type: application/octet-stream\r\n\r\n".encode())
        with open(path, "rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
        out.write(f"\r\n--{BOUNDARY}--\r\n".encode())
    return target, f"multipart/form-data; boundary={BOUNDARY}"


def upload(base: str, cookies: dict, label: str, body: tuple[Path, str], done) -> None:
    """POST one prepared upload, then follow its job's page until it ends; (label, figures) on `done`."""
    import requests

    session = requests.Session()
    for name, value in cookies.items():
        session.cookies.set(name, value)
    path, content_type = body
    start = time.perf_counter()
    with open(path, "rb") as handle:
        response = session.post(
            f"{base}/rollouts/upload/", data=handle, allow_redirects=False, timeout=120,
            headers={"Content-Type": content_type, "Content-Length": str(path.stat().st_size),
                     "Referer": f"{base}/rollouts/upload/"},
        )
    posted = time.perf_counter() - start
    job_url = base + response.headers.get("Location", "")
    status, text = "?", ""
    while time.perf_counter() - start < 120:
        text = session.get(job_url, timeout=60).text
        if 'class="badge bad">failed' in text or 'class="badge good">done' in text:
            status = "refused" if 'class="badge bad">failed' in text else "imported"
            break
        time.sleep(0.05)
    ended = time.perf_counter() - start
    error = re.search(r'<li class="error">([^<]*)<', text)
    done.put((label, {"posted": posted, "after_post": ended - posted, "ended": ended, "status": status,
                      "error": error[1] if error else "", "http": response.status_code}))


def search_client(base: str, query: str, until: float, found) -> None:
    import requests

    searches = []
    while time.time() < until:
        start = time.perf_counter()
        try:
            response = requests.get(f"{base}/search/", params={"q": query}, timeout=60)
            code, text = response.status_code, response.text
        except requests.RequestException as exc:
            code, text = 0, str(exc)
        notice = re.search(r'class="notice search-notice"[^>]*>([^<]*)<', text)
        searches.append((code, time.perf_counter() - start, notice[1][:40] if notice else ""))
    found.put(searches)


def staff_session(base: str):
    """A requests session logged in as a staff user (a Django session made directly)."""
    import requests
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    user, _ = User.objects.get_or_create(username="safety-bench", defaults={"is_staff": True})
    user.is_staff = True
    user.set_unusable_password()
    user.save()
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    session = requests.Session()
    session.cookies.set(settings.SESSION_COOKIE_NAME, store.session_key)
    session.get(f"{base}/rollouts/upload/", timeout=60)  # sets the CSRF cookie
    return session


def p50(url: str, n: int) -> float:
    import requests

    times = []
    for _ in range(n):
        start = time.perf_counter()
        requests.get(url, timeout=60)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def p50_for(url: str, seconds: float) -> float:
    import requests

    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        requests.get(url, timeout=60)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def zip_bomb(path: Path) -> Path:
    """About 10 MB of deflated zeros declaring 10 GiB, in one member (made once per run, ~1 min)."""
    chunk = b"\0" * (64 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zipped:
        with zipped.open("job/trial/agent/trajectory.json", "w", force_zip64=True) as member:
            for _ in range(BOMB_DECLARED // len(chunk)):
                member.write(chunk)
    return path


def many_files_tar(path: Path) -> Path:
    with tarfile.open(path, "w") as tar:
        for n in range(TAR_ENTRIES):
            info = tarfile.TarInfo(f"job/trial-{n // 100:04d}/file-{n}.txt")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return path


class Sampler(threading.Thread):
    """Every 50 ms: disk used under the data folder, and the summed RSS of the server's process trees."""

    def __init__(self, data: Path, roots: list[int]):
        super().__init__(daemon=True)
        self.data, self.roots = data, roots
        self.peak_disk = 0
        self.peak_rss = 0
        self.first_rss = self.rss_now()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak_disk = max(self.peak_disk, self.disk_now())
            self.peak_rss = max(self.peak_rss, self.rss_now())
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def disk_now(self) -> int:
        total = 0
        for folder, _, files in os.walk(self.data):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
                except OSError:
                    pass
        return total

    def rss_now(self) -> int:
        parents: dict[int, int] = {}
        rss: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            parents[int(entry.name)] = int(fields.get("PPid", "0").strip() or 0)
            rss[int(entry.name)] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
        tree = set(self.roots)
        grew = True
        while grew:
            grew = False
            for pid, parent in parents.items():
                if parent in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        return sum(rss.get(pid, 0) for pid in tree)


if __name__ == "__main__":
    main()
