"""How fast Harbor trials import, against Harbor's own parse of the same file.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/ingest_bench.py [--n 20] [--db autolab_bench]

The PostgreSQL server named by DATABASE_URL gets a scratch database (--db,
dropped at the end); without DATABASE_URL a temporary SQLite file is used.
The real opus trial (../shared/autolab/trials) is copied N times under
distinct trial names and imported in bulk. Printed: time per trial, steps per
second, Harbor's bare `Trajectory.model_validate_json` time for the same
trajectory file (in a fresh process, where it is fastest), and the ratio of
the two. Beside them, PostgreSQL's part alone: COPYing the trial's rows,
ready made as PostgreSQL's binary COPY data, into the real tables; no
importer that stores these rows can take less. The rows are every row
the import stores but the rollout's own: the steps, tool calls and
observations, and the search index's rows (the chunks' and the rollout's
documents, behind GIN indexes), which the step rows' COPY alone, printed
beside it, leaves out (it was the floor until 2026-12-06). The COPY the
ratios use is timed once after each trial of the one-process import (the
median; its time left out of the import's): this machine's speed drifts
within minutes, and a floor timed apart, before or after, drifted with it
(8.9 to 14.4 ms in one hour). Targets: ratio <= 5, >= 1,000 steps/s. The
same N trials are then imported again on --jobs processes
(trajectories.storing.bulk; default one per CPU), as `import_trials` does on
PostgreSQL: wall time per trial and its ratio are printed beside the
one-process figures, labelled with the number of processes, and the
ratio of the time per trial to that COPY of its rows (target <= 4), on one
process and on --jobs. Last, the real trial's steps repeated --long-times
times (144: the 20,016-step trial, 86.7 MB) are imported in a process of
its own, and its peak memory (growth of its resident set's high-water mark
during the import, and the whole process's) is printed beside the file's size, as a
ratio (target <= 2).

The time per trial is broken down into reading the folder (JSON parse and
ATIF conversion), trajectory analysis, and storing. Storing includes search
indexing: the importer splits each step's texts into its search document
(trajectories.search.document, timed alone), stores the rollout's, and
PostgreSQL keeps its GIN index (migration 0006). Its whole cost is measured
by importing the same N trials again with empty documents and without the
index (the difference of the two medians), shown inside the total and
beside it as "without search indexing", never hidden.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared"))
TRIAL = SHARED / "autolab" / "trials" / "opus4.6__2026-04-26__2TyoFTQ"
TASKS = SHARED / "autolab" / "tasks"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="number of copies of the trial to import")
    parser.add_argument("--db", default="autolab_bench", help="scratch PostgreSQL database name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for the parallel bulk import")
    parser.add_argument(
        "--long-times", type=int, default=144,
        help="the long trial repeats the real trial's steps this many times (144: 20,016 steps); 0 skips its memory figure",
    )
    parser.add_argument(
        "--without-search-indexes",
        action="store_true",
        help="drop the PostgreSQL full-text indexes and search documents first, to see what they cost at import",
    )
    args = parser.parse_args()
    if not TRIAL.is_dir():
        print(f"the real trial is missing: {TRIAL}", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    server_url = os.environ.get("DATABASE_URL", "")
    scratch = None
    if server_url.startswith(("postgres://", "postgresql://")):
        scratch = _create_database(server_url, args.db)
        os.environ["DATABASE_URL"] = scratch
        backend = f"PostgreSQL ({args.db})"
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{work / 'bench.sqlite3'}"
        backend = "SQLite (temporary file)"
    os.environ.setdefault("AUTOLAB_DATA_DIR", str(work / "data"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
    sys.path.insert(0, str(ROOT))
    try:
        return run(
            args.n, work, backend, drop_search_indexes=args.without_search_indexes, jobs=args.jobs, long_times=args.long_times,
        )
    finally:
        from django.db import connections

        connections.close_all()
        if scratch and not args.keep:
            _drop_database(server_url, args.db)
        shutil.rmtree(work, ignore_errors=True)


def run(n: int, work: Path, backend: str, *, drop_search_indexes: bool = False, jobs: int = 1, long_times: int = 0) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    if drop_search_indexes:
        backend += ", without full-text indexes"
        _drop_search_indexes()
    _register_task()

    from django.db import connection

    from tasks.services import match_task, task_spec

    from trajectories.analysis.rollout import analyse_rollout
    from trajectories.search.document import trajectory_documents
    from trajectories.storing.ingest import step_texts
    from trajectories.models import Rollout, Step
    from trajectories.services import import_path, import_trial_dir
    from trajectories.reading.trial_folder import read_trial_folder

    harbor_before = _harbor_parse_time(TRIAL / "agent" / "trajectory.json")
    copies = work / "jobs"
    for index in range(n + 1):
        copy_trial(TRIAL, copies / ("warmup" if index == n else "job") / f"bench__{index:04d}")

    # Warm up imports, Harbor's models and the database connection.
    warm = import_trial_dir(copies / "warmup" / f"bench__{n:04d}")
    if not warm.ok:
        print(f"warm-up import failed: {warm.error}", file=sys.stderr)
        return 1

    with floor_tables(warm.rollout_id) as floor_data:
        measured = _bulk_import(copies / "job", import_path, floor_data=floor_data)
    if measured is None:
        return 1
    times, total, steps, cpu = measured.times, measured.total, measured.steps, measured.cpu
    side_by_side = measured.floor  # the COPY after each trial, beside the import

    started = time.perf_counter()
    again = import_path(copies / "job")
    unchanged_total = time.perf_counter() - started
    assert again.counts["unchanged"] == n, again.counts

    live_append = _live_append_time(copies / "live", import_trial_dir)

    parallel = None
    if jobs > 1 and connection.vendor == "postgresql":
        for index in range(n):
            copy_trial(TRIAL, copies / "parallel" / f"parallel__{index:04d}")
        measured = _bulk_import(copies / "parallel", import_path, jobs=jobs)
        if measured is None:
            return 1
        parallel = measured.total / n

    # Memory on a long trial, in a process of its own (before the plain
    # import below swaps the search documents out of the importer).
    long_memory = _long_trial_memory(work, long_times) if long_times else None

    raw = (TRIAL / "agent" / "trajectory.json").read_bytes()
    # The floor: Harbor's parse in a fresh process (this one's heap, grown by
    # the imports, slows any allocation-heavy code), taken before and after
    # the imports and at its lowest.
    harbor = min(harbor_before, _harbor_parse_time(TRIAL / "agent" / "trajectory.json"))
    reading = _median_time(lambda: read_trial_folder(TRIAL), repeat=max(n, 10))
    folder = read_trial_folder(TRIAL)
    spec = task_spec(match_task(folder.task_name))
    analysing = _median_time(
        lambda: analyse_rollout(folder.trajectory.steps, spec, folder.agent_started_at), repeat=max(n, 10)
    )

    per_trial = statistics.median(times)
    stored = f"{Rollout.objects.count()} rollouts, {Step.objects.count()} steps"
    floors = _rows_floor(Rollout.objects.filter(trial_name__startswith="bench__").order_by("pk").first().pk)
    # The floor the import is compared with: its samples taken between the trials (None off PostgreSQL).
    rows_floor = side_by_side
    documents = _median_time(lambda: trajectory_documents(step_texts(folder.trajectory.steps)), repeat=max(n, 10))
    storing = per_trial - reading - analysing
    indexing = 0.0
    plain_total = total
    if not drop_search_indexes:
        # The same bulk import again, with no document and no index.
        _drop_search_indexes()
        for index in range(n):
            copy_trial(TRIAL, copies / "plain" / f"plain__{index:04d}")
        measured = _bulk_import(copies / "plain", import_path)
        if measured is None:
            return 1
        plain_times, plain_total, plain_cpu = measured.times, measured.total, measured.cpu
        indexing = max(0.0, per_trial - statistics.median(plain_times))

    print(f"database:                       {backend}")
    print(f"trials imported:                {n} x {TRIAL.name} ({steps // n} steps each)")
    print(f"rows stored:                    {stored}")
    print(f"time per trial (median):        {per_trial * 1000:8.1f} ms   (mean {total / n * 1000:.1f} ms)")
    print(f"  reading the folder (parse):   {reading * 1000:8.1f} ms")
    print(f"  trajectory analysis:          {analysing * 1000:8.1f} ms")
    print(f"  storing (the rest):           {storing * 1000:8.1f} ms")
    if rows_floor is not None:
        print(f"    PostgreSQL's part alone:    {rows_floor * 1000:8.1f} ms   (binary COPY of the trial's ready rows after each trial imported, median; {rows_floor / harbor:.1f} x the parse)")
        print(f"      the same after the imports: {floors.rows * 1000:6.1f} ms   (10 in a row, median: the floor as measured before 2026-12-06's second change)")
        print(f"      of which the step rows:   {floors.step_rows * 1000:8.1f} ms   (steps, tool calls, observations; the rest the search index's rows)")
    if not drop_search_indexes:
        print(f"    of which search indexing:   {indexing * 1000:8.1f} ms   (vs. the same import with no document or index)")
        print(f"      the documents' words:     {documents * 1000:8.1f} ms   (search_document alone; the rest is rows, GIN, WAL)")
        print(f"    of which the rest:          {(storing - indexing) * 1000:8.1f} ms   (rows, queries, commit)")
    print(f"steps per second (bulk):        {steps / total:8.0f}        (target >= 1,000)")
    if not drop_search_indexes:
        print(f"  without search indexing:      {steps / plain_total:8.0f}")
    print(f"re-import, unchanged:           {unchanged_total / n * 1000:8.1f} ms per trial")
    print(f"live re-import, +1 step:        {live_append * 1000:8.1f} ms   (138 steps stored, 139 in the file)")
    print(f"Harbor model_validate_json:     {harbor * 1000:8.1f} ms   for the same trajectory.json (the floor; a fresh process, best of two)")
    print(f"ratio ingest / Harbor parse:    {per_trial / harbor:8.1f} x      (target <= 5)")
    if not drop_search_indexes:
        print(f"  without search indexing:      {(per_trial - indexing) / harbor:8.1f} x")
        print(f"  search indexing alone:        {indexing / harbor:8.1f} x")
    print(f"  without the analysis:         {(per_trial - analysing) / harbor:8.1f} x")
    if rows_floor is not None:
        # What no importer of this design can go below: reading the folder,
        # the analysis the issue asks for, and the database storing ready rows.
        floor = reading + analysing + rows_floor
        print(f"  floor of a row-per-step import: {floor / harbor:6.1f} x      (reading + analysis + PostgreSQL's part, {floor * 1000:.1f} ms)")
    if rows_floor is not None:
        print(f"ratio ingest / COPY of its rows: {per_trial / rows_floor:7.1f} x      (one process; target <= 4)")
        print(f"  to the step rows' COPY alone: {per_trial / floors.step_rows:8.1f} x      (no target: the floor before the search index's rows counted)")
        # The importer's own CPU time, its waits for PostgreSQL left out: however
        # the database's part shrank or overlapped, one process takes this long.
        print(f"  its CPU time alone:           {cpu / n / rows_floor:8.1f} x      ({cpu / n * 1000:.1f} ms per trial: Python's work, no wait for the database)")
        if not drop_search_indexes:
            # That import stores no search row: its floor is the step rows'.
            print(f"  without search indexing:      {statistics.median(plain_times) / floors.step_rows:8.1f} x      "
                  f"(to the step rows' COPY; CPU alone {plain_cpu / n / floors.step_rows:.1f} x)")
    if parallel is not None:
        print(f"on {jobs} processes (bulk):        {parallel * 1000:8.1f} ms   per trial, wall clock; {steps / (parallel * n):.0f} steps/s")
        print(f"  ratio to Harbor parse:        {parallel / harbor:8.1f} x      (one process parses; {os.cpu_count()} CPUs here)")
        if rows_floor is not None:
            print(f"  ratio to COPY of its rows:    {parallel / rows_floor:8.1f} x      (wall clock per trial; target <= 4)")
    if long_memory is not None:
        size, before, peak, n_steps, seconds = long_memory
        print(f"long trial ({n_steps:,} steps, {size / 1e6:.1f} MB trajectory.json), imported in a process of its own in {seconds:.1f} s:")
        print(f"  peak memory of the import:    {(peak - before) / 1e6:8.1f} MB   {(peak - before) / size:.1f} x the file (target <= 2; growth of peak RSS)")
        print(f"  peak of the whole process:    {peak / 1e6:8.1f} MB   {peak / size:.1f} x the file ({before / 1e6:.0f} MB before the import: Django, Harbor)")
    return 0


# Run in a fresh process: imports the long trial and prints its RSS before and its peak RSS after, in bytes.
# The peak is the kernel's high-water mark of this process's memory (VmHWM),
# not getrusage's ru_maxrss: Linux carries that over exec from the forked
# copy of the parent, so a child of a large benchmark would report the
# parent's size.
_LONG_IMPORT = """
import json, sys, time
import django
django.setup()
from trajectories.reading import atif
from trajectories.storing.ingest import ingest_trial_dir

def status(field):
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024

atif.load_validator()
before = status("VmRSS")
started = time.perf_counter()
outcome = ingest_trial_dir(sys.argv[1])
seconds = time.perf_counter() - started
assert outcome.ok, outcome.error
print(json.dumps([before, status("VmHWM"), outcome.n_steps, seconds]))
"""


def _long_trial_memory(work: Path, times: int) -> tuple[int, int, int, int, float]:
    """(file bytes, RSS before, peak RSS, steps, seconds) of importing the real trial's steps repeated `times` times.

    A child process of its own, so that the peak is this import's, not the
    benchmark's; the figure is its resident set's high-water mark (VmHWM).
    """
    import subprocess

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from explorer_bench import long_trial

    folder = long_trial(TRIAL, times, work / "long" / f"long-x{times}__{TRIAL.name}")
    size = (folder / "agent" / "trajectory.json").stat().st_size
    result = subprocess.run(
        [sys.executable, "-c", _LONG_IMPORT, str(folder)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ),
    )
    if result.returncode != 0:
        raise RuntimeError(f"the long trial's import failed: {result.stderr[-2000:]}")
    before, peak, n_steps, seconds = json.loads(result.stdout.strip().splitlines()[-1])
    shutil.rmtree(folder)
    return size, before, peak, n_steps, seconds


class Bulk(NamedTuple):
    """What one bulk import of a folder took."""

    times: list[float]  # seconds per trial
    total: float  # seconds, the floor's samples taken out
    steps: int
    cpu: float  # this process's CPU seconds, the floor's samples taken out
    floor: float | None  # the median of the floor's samples (`floor_data`), one after each trial


def _bulk_import(folder: Path, import_path, jobs: int = 1, floor_data: list | None = None) -> Bulk | None:
    """Import every trial in `folder`; None when it failed.

    With `floor_data` (floor_tables), those rows are COPYed once after each
    trial (on one process; in a transaction rolled back, timed apart and
    left out of the import's times): the import and its floor measured side
    by side, as this machine's speed drifts by a quarter within minutes.
    """
    samples: list[float] = []
    spent = [0.0, 0.0]  # wall and CPU seconds of the samples
    cpu_started = time.process_time()
    started = time.perf_counter()
    times: list[float] = []
    last = [started]

    def on_progress(report, outcome):
        now = time.perf_counter()
        times.append(now - last[0])
        if floor_data is not None and jobs == 1:
            cpu = time.process_time()
            samples.append(_copy_time(floor_data, 1))
            spent[1] += time.process_time() - cpu
            spent[0] += time.perf_counter() - now
        last[0] = time.perf_counter()

    report = import_path(folder, on_progress=on_progress, jobs=jobs)
    total = time.perf_counter() - started - spent[0]
    cpu = time.process_time() - cpu_started - spent[1]
    if not report.ok:
        print(f"import failed: {report.as_dict()}", file=sys.stderr)
        return None
    steps = sum(outcome.n_steps for outcome in report.outcomes)
    return Bulk(times, total, steps, cpu, statistics.median(samples) if samples else None)


def _harbor_parse_time(path: Path, repeat: int = 30) -> float:
    """Median seconds of Harbor's Trajectory.model_validate_json on `path`, in a fresh process."""
    import subprocess

    code = (
        "import statistics, sys, time\n"
        "from harbor.models.trajectories import Trajectory\n"
        "raw = open(sys.argv[1], 'rb').read()\n"
        "Trajectory.model_validate_json(raw)\n"
        "samples = []\n"
        f"for _ in range({repeat}):\n"
        "    started = time.perf_counter(); Trajectory.model_validate_json(raw)\n"
        "    samples.append(time.perf_counter() - started)\n"
        "print(statistics.median(samples))\n"
    )
    return float(subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout)


class Floor(NamedTuple):
    """Seconds PostgreSQL takes to store one trial's rows, given them ready."""

    rows: float  # every row the import stores but the rollout's own: the target's floor
    step_rows: float  # its steps, tool calls and observations alone (this benchmark's floor until 2026-12-06)


def _rows_floor(rollout_id: int, repeat: int = 10) -> Floor | None:
    """Median time PostgreSQL takes to store one trial's rows, given them ready (floor_tables); None off PostgreSQL."""
    with floor_tables(rollout_id) as tables:
        if tables is None:
            return None
        return Floor(rows=_copy_time(tables, repeat), step_rows=_copy_time(tables[:3], repeat))


@contextlib.contextmanager
def floor_tables(rollout_id: int):
    """The rows an import stored for one trial, ready for PostgreSQL to store again: its floor.

    The rows the import stored for `rollout_id` (its steps, tool calls and
    observations, and the search index's: the chunks' documents and the
    rollout's, behind their GIN indexes) are read back as PostgreSQL's own
    binary COPY data, pointing at a copy of the rollout's row; _copy_time
    COPYs them as they are (new ids, foreign keys checked at once) into the
    real tables, with their indexes, in a transaction rolled back: the
    server's work and the transfer, no Python encoding. What any import
    storing these rows must at least spend in the database. The rollout's
    own row (one INSERT) is left out. Yields [(table, columns, data)], the
    step rows' three first; None on other databases. The rollout
    `rollout_id` must stay while they are used (the tool calls and
    observations point at its steps); the copy of its row goes at the end.
    """
    from django.db import connection

    from trajectories.models import Observation, Rollout, RolloutDocument, Step, StepChunk, ToolCall

    if connection.vendor != "postgresql":
        yield None
        return
    clone = _rollout_copy(rollout_id)
    in_steps = "step_id IN (SELECT id FROM trajectories_step WHERE rollout_id = %s)"
    sources = (
        (Step, "rollout_id = %s"), (ToolCall, in_steps), (Observation, in_steps),
        (StepChunk, "rollout_id = %s"), (RolloutDocument, "rollout_id = %s"),
    )
    tables = []
    try:
        with connection.cursor() as cursor:
            for model, link in sources:
                columns = [f.column for f in model._meta.concrete_fields if not f.primary_key or f.column == "rollout_id"]
                names = ", ".join(f'"{c}"' for c in columns)
                # The rows as they are, but that they belong to the copy of the rollout.
                selected = ", ".join("%s::bigint" if c == "rollout_id" else f'"{c}"' for c in columns)
                params = [clone] * columns.count("rollout_id") + [rollout_id]
                query = f"COPY (SELECT {selected} FROM {model._meta.db_table} WHERE {link}) TO STDOUT (FORMAT BINARY)"
                with cursor.cursor.copy(query, params) as copy:
                    data = b"".join(bytes(block) for block in copy)
                tables.append((model._meta.db_table, names, data))
        yield tables
    finally:
        Rollout.objects.filter(pk=clone).delete()


def _rollout_copy(rollout_id: int) -> int:
    """The id of a new row copying rollout `rollout_id` (another trial name), for the floor's rows to point at."""
    from django.db import connection

    from trajectories.models import Rollout

    columns = [f.column for f in Rollout._meta.concrete_fields if not f.primary_key]
    names = ", ".join(f'"{c}"' for c in columns)
    selected = ", ".join("'floor-copy-' || id" if c == "trial_name" else f'"{c}"' for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO trajectories_rollout ({names}) SELECT {selected} FROM trajectories_rollout WHERE id = %s RETURNING id",
            [rollout_id],
        )
        return cursor.fetchone()[0]


def _copy_time(tables: list[tuple[str, str, bytes]], repeat: int) -> float:
    """Median seconds of COPYing `tables` (name, columns, binary data) in a transaction rolled back."""
    from django.db import connection, transaction

    samples = []
    for _ in range(repeat):
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                started = time.perf_counter()
                for table, names, data in tables:
                    with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
                        copy.write(data)
                samples.append(time.perf_counter() - started)
            transaction.set_rollback(True)
    return statistics.median(samples)


class NoDocuments:
    """trajectories.search.document.TrajectoryDocuments making no document: every step's, chunk's and
    the rollout's words empty, for an import timed without its search upkeep."""

    def add_steps(self, steps):
        n = len(list(steps))
        return [""] * n, [""] * n

    def count(self, steps):
        pass

    def rollout_words(self):
        return ""

    def take_chunks(self):
        return []


def _drop_search_indexes() -> None:
    """No search index, and an importer that writes empty documents."""
    from django.db import connection

    import trajectories.storing.ingest

    trajectories.storing.ingest.TrajectoryDocuments = NoDocuments
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS trajectories_rolloutdocument_words")
            cursor.execute("DROP INDEX IF EXISTS trajectories_rolloutdocument_words_trgm")
            cursor.execute("DROP INDEX IF EXISTS trajectories_stepchunk_words")


def _register_task() -> None:
    from tasks.models import BenchmarkVersion, Task

    if TASKS.is_dir():
        from tasks.services import import_tasks

        import_tasks(TASKS, version="1.1")
    if not Task.objects.filter(name="flux2_klein_lora").exists():
        version, _ = BenchmarkVersion.objects.get_or_create(name="1.1")
        Task.objects.create(version=version, name="flux2_klein_lora", category="model_development")


def copy_trial(source: Path, target: Path) -> None:
    """A copy of the trial under the trial name `target.name`."""
    shutil.copytree(source, target)
    for name in ("config.json", "result.json"):
        path = target / name
        data = json.loads(path.read_text())
        data["trial_name"] = target.name
        if name == "result.json":
            data["config"]["trial_name"] = target.name
        path.write_text(json.dumps(data))


def _live_append_time(folder: Path, import_trial_dir) -> float:
    """Time of a live re-import after one more episode, as the runner does it."""
    copy_trial(TRIAL, folder)
    (folder / "result.json").unlink()
    full = json.loads((folder / "agent" / "trajectory.json").read_text())
    shorter = dict(full, steps=full["steps"][:-1])
    (folder / "agent" / "trajectory.json").write_text(json.dumps(shorter))
    assert import_trial_dir(folder, live=True).ok
    (folder / "agent" / "trajectory.json").write_text(json.dumps(full))
    started = time.perf_counter()
    outcome = import_trial_dir(folder, live=True)
    elapsed = time.perf_counter() - started
    assert outcome.outcome == "updated" and outcome.n_steps == len(full["steps"]), outcome
    return elapsed


def _median_time(function, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _server(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


def _create_database(url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(_server(url, "postgres").replace("postgresql://", "postgres://", 1).replace("postgres://", "postgresql://", 1), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    return _server(url, name)


def _drop_database(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(_server(url, "postgres").replace("postgres://", "postgresql://", 1), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')


if __name__ == "__main__":
    sys.exit(main())
