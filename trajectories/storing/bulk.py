"""Importing many trials on several processes at once (PostgreSQL only).

An import is mostly Python work (JSON validation, analysis, search words),
so one process keeps one core busy and the database waits. With `jobs`
worker processes each imports whole trials, one transaction per trial as
always, and the parent only collects outcomes. What makes this safe:

- every trial is its own transaction, and a new rollout takes the next
  number of its (task, model, harness) under an advisory lock (numbering.py);
- models, harnesses and tasks are found or created with get_or_create,
  which survives a race on their unique names;
- workers are forked after the parent closed its database connections, so
  none shares a socket;
- workers die with their parent (Linux's parent-death signal), so a kill -9
  of the command leaves no worker importing on, holding a connection.

SQLite allows one writer at a time, so there `jobs` is always 1, as it is
inside a caller's transaction or beside other threads. Ctrl-C behaves as in
a serial import: the command's handler stops handing out trials and the
running ones finish; a second Ctrl-C rolls them back. Either way the report
lists exactly the trials that were stored.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from django.db import connection, connections

from trajectories.reading import atif
from trajectories.storing.ingest import TrialOutcome, ingest_trial_dir

# Per worker process: the task, model and harness rows it has looked up.
_lookups: dict = {}

# The default stops at this many processes: each holds a database connection.
MAX_DEFAULT_JOBS = 8


def usable_jobs(jobs: int | None) -> int:
    """How many processes to import with: `jobs`, or one per CPU (up to 8) when None.

    1 on SQLite, and inside a transaction: workers could not see the
    caller's uncommitted rows, nor may they commit on its behalf. 1 too
    when this process runs other threads: a fork copies locks they may hold
    (a web server's request threads, say); `import_trials` runs none.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block or threading.active_count() > 1:
        return 1
    if jobs is None:
        jobs = min(os.cpu_count() or 1, MAX_DEFAULT_JOBS)
    return max(1, jobs)


def import_in_parallel(
    trials: Sequence[tuple[Path, str]],
    jobs: int,
    version: str | None,
    on_outcome: Callable[[TrialOutcome], None],
    should_stop: Callable[[], bool] | None = None,
    force: bool = False,
) -> tuple[list[TrialOutcome], bool]:
    """Import (trial folder, source label) pairs on `jobs` processes.

    `on_outcome` is called in the parent as each trial finishes. Returns the
    outcomes in the order of `trials` and whether the import was
    interrupted before every trial was handed out.
    """
    atif.load_validator()
    connections.close_all()
    global _parent_pid
    _parent_pid = os.getpid()
    context = multiprocessing.get_context("fork")
    outcomes: dict[int, TrialOutcome] = {}
    queue = iter(enumerate(trials))
    interrupted = False
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker) as pool:
        running: dict[Future, int] = {}

        def hand_out() -> None:
            item = next(queue, None)
            if item is not None:
                index, (path, source) = item
                running[pool.submit(_import_one, path, version, source, force)] = index

        for _ in range(jobs * 2):  # keep every worker busy while results travel back
            hand_out()
        try:
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    index = running.pop(future)
                    if future.cancelled():
                        continue
                    outcome = future.result()
                    outcomes[index] = outcome
                    on_outcome(outcome)
                    if not interrupted and should_stop is not None and should_stop():
                        interrupted = True
                        # Trials handed out but not begun are not begun.
                        for waiting in list(running):
                            if waiting.cancel():
                                running.pop(waiting)
                    if not interrupted:
                        hand_out()
        except KeyboardInterrupt:
            # A second Ctrl-C: workers roll back the trials they are in. Record
            # what the others finished before it, so the report stays true.
            interrupted = True
            for future in running:
                future.cancel()
            for future, index in running.items():
                if future.cancelled():
                    continue
                try:
                    outcome = future.result()
                except BaseException:  # noqa: BLE001  (rolled back by the interrupt)
                    continue
                outcomes[index] = outcome
                on_outcome(outcome)
    if not interrupted and len(outcomes) < len(trials):
        interrupted = True
    return [outcomes[index] for index in sorted(outcomes)], interrupted


_parent_pid = 0
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _start_worker() -> None:
    # The parent closed its connections before forking: each worker opens its own.
    _lookups.clear()
    signal.signal(signal.SIGINT, _second_interrupt_stops)
    die_with_parent(_parent_pid)


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux; elsewhere nothing).

    A worker killed so in a trial's transaction loses it: PostgreSQL rolls
    it back when the connection drops. The parent may already have died
    before the signal was armed; then its pid is no longer our parent's.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent_pid and os.getppid() != parent_pid:
        os._exit(1)


_interrupts = 0


def _second_interrupt_stops(signum, frame) -> None:
    """Ctrl-C reaches every process: the first lets the trial finish, the second rolls it back."""
    global _interrupts
    _interrupts += 1
    if _interrupts > 1:
        raise KeyboardInterrupt


def _import_one(path: Path, version: str | None, source: str, force: bool) -> TrialOutcome:
    if _interrupts > 1:
        raise KeyboardInterrupt  # queued before the second Ctrl-C: not begun
    try:
        return ingest_trial_dir(path, version=version, source_label=source, lookups=_lookups, force=force)
    finally:
        # A worker may sit idle for long; don't hold a transaction's snapshot.
        connection.close_if_unusable_or_obsolete()
