"""Serving a board: this process's recent boards, the shared cache, the stored last board, and the one build.

`served_board(version)` (and `board(version)`) is the door every page and
the API go through, and it never computes a board: a web request reads
this process's recent boards (`_recent`), the shared cache, then the last
board stored in the database (`StoredBoard`, which outlives a cache flush,
a restart or a deploy). A board of the current generation (`invalidation`)
is served as it is; an older one is served with its age (`Freshness`)
while its build runs; with none stored yet the page says the board is
being built. The build is asked for once (single flight: the stored row's
`build_claimed_at`, set by one request, atomically) and runs on the boards
queue's worker (`rebuild`), which updates the board entry by entry
(`compute.updated_board`) and writes it to the cache and the database.

`build(version)` builds a board here and stores it: the worker's task,
commands, and tests (a test builds the board its page then serves).
A board is cached under a key of the board's shape (`board.SHAPE`: no
process reads a board pickled by code of another shape) and its generation.
"""
from __future__ import annotations

import gc
import logging
import pickle
import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.core.cache import cache, caches
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.timesince import timesince

from tasks.models import BenchmarkVersion

from evaluations.boards import board as board_shape
from evaluations.boards.compute import _updated, forget_kept
from evaluations.boards.invalidation import changed_here_at, generation, generation_label
from evaluations.models import StoredBoard
from evaluations.running import dispatch

logger = logging.getLogger(__name__)

BOARD_TIMEOUT = 24 * 3600


def board_key(version_id: int, harness: int | None = None, open_weight: bool | None = None) -> str:
    """The cache key of a board under the current generation and the board's shape (board.SHAPE)."""
    return _board_key(version_id, harness, open_weight, generation(version_id))


def _board_key(version_id: int, harness: int | None, open_weight: bool | None, at: tuple[int, int, int]) -> str:
    everywhere, this_version, here = at
    generation_at = generation_label(everywhere, this_version)
    return f"evaluations:board:{board_shape.SHAPE}:{version_id}:{harness}:{open_weight}:{generation_at}.{here}"


def stored_scope(version_id: int, harness: int | None, open_weight: bool | None) -> str:
    """The StoredBoard row of a version and filters."""
    return f"{version_id}:{harness}:{open_weight}"


# The boards this process read last, by cache key, as objects: the cache
# (LocMemCache too) pickles, and unpickling a 100-entry board took most of
# a warm page's time. A key carries the generation, so an entry here is
# never stale; boards are frozen, so requests can share one.
RECENT_BOARDS = 8
_recent: OrderedDict[str, tuple[board_shape.Board, float]] = OrderedDict()
_recent_lock = threading.Lock()


# A board of this many rollouts is hundreds of thousands of objects, which every full collection of the
# cyclic garbage collector scanned: 130-140 ms pauses, the p95 of the 100-entry model and rollout pages.
FREEZE_MIN_ROLLOUTS = 2000


def _remember(key: str, data: board_shape.Board, timeout: float = BOARD_TIMEOUT) -> None:
    with _recent_lock:
        _recent[key] = (data, time.monotonic() + timeout)
        _recent.move_to_end(key)
        while len(_recent) > RECENT_BOARDS:
            _recent.popitem(last=False)
    _freeze(data)


_frozen: tuple | None = None  # the identity of the last board frozen


def _freeze(data: board_shape.Board) -> None:
    """Put a large board out of the cyclic collector's reach, once per board.

    Boards (and the kept state) hold no reference cycles: reference counting
    frees them when they go, and the collector need not scan them again and
    again meanwhile. gc.freeze() takes every object alive, so the young
    generations (a request's cyclic garbage) are collected first, and a board
    recalled again is not frozen again.
    """
    global _frozen
    if data.n_rollouts < FREEZE_MIN_ROLLOUTS or data.identity == _frozen:
        return
    _frozen = data.identity
    gc.collect(1)
    gc.freeze()


def _recalled(key: str) -> board_shape.Board | None:
    with _recent_lock:
        found = _recent.get(key)
    if found is None or found[1] < time.monotonic():
        return None
    return found[0]


def forget_recent_boards() -> None:
    """Empty this process's recent and kept boards (tests do, with the cache, between tests: a rolled-back
    database may reuse a version's id and generation)."""
    with _recent_lock:
        _recent.clear()
    forget_kept()


@dataclass(frozen=True)
class Freshness:
    """How current a served board is: pages say so when it is the last one while a newer one is built, and
    that the board is being built when there is none yet (computed_at None)."""

    computed_at: float | None  # epoch seconds; None: no board built yet
    stale: bool  # rollouts or settings changed since it was computed
    rebuilding: bool  # its build is asked for or running (False: the broker could not be reached)

    @property
    def building(self) -> bool:
        """No board yet: the page says it is being built."""
        return self.computed_at is None

    @property
    def computed(self) -> datetime | None:
        return None if self.computed_at is None else datetime.fromtimestamp(self.computed_at, tz=dt_timezone.utc)

    @property
    def age(self) -> str:
        """"less than a minute", "3 minutes", "1 hour, 2 minutes" (Django's timesince said "0 minutes")."""
        if self.computed_at is None:
            return ""
        if time.time() - self.computed_at < 60:
            return "less than a minute"
        return timesince(self.computed)


BUILD_CLAIM_SEC = 600  # a build that has not ended by then (its worker died) is asked for again


def board(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board | None:
    """The served board (`served_board`): None while the first one is built."""
    return served_board(version, harness, open_weight)[0]


def served_board(
    version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None
) -> tuple[board_shape.Board | None, Freshness]:
    """The board and how current it is, never computed here.

    The current one when this process, the cache or the database holds it;
    else the last one stored, stale, while its build runs on the boards
    queue (asked for once: `request_build`); else None (being built).
    """
    at = generation(version.pk)
    key = _board_key(version.pk, harness, open_weight, at)
    data = _recalled(key) or _cached(key)
    if data is not None:
        return data, Freshness(data.computed_at, stale=False, rebuilding=False)
    row = _stored_row(version.pk, harness, open_weight)
    last = _stored_board(row)
    if last is not None and last.generation == generation_label(*at[:2]) and last.computed_at > changed_here_at():
        # A worker's board of this very generation, computed after this process's own last change.
        _remember(key, last)
        return last, Freshness(last.computed_at, stale=False, rebuilding=False)
    asked = request_build(version.pk, harness, open_weight, row)
    if last is None:
        return None, Freshness(None, stale=False, rebuilding=asked)
    return last, Freshness(last.computed_at, stale=True, rebuilding=asked)


def _cached(key: str) -> board_shape.Board | None:
    if not shared_cache():
        return None
    data = cache.get(key)
    if not isinstance(data, board_shape.Board):  # nothing, or what a cache shared with older code holds
        return None
    _remember(key, data)
    return data


STORED_FIELDS = ("id", "shape", "key", "generation", "built_at", "build_claimed_at")


def _stored_row(version_id: int, harness: int | None, open_weight: bool | None) -> dict | None:
    """The stored board's row, without its board (a few bytes)."""
    return StoredBoard.objects.filter(scope=stored_scope(version_id, harness, open_weight)).values(*STORED_FIELDS).first()


def _stored_board(row: dict | None) -> board_shape.Board | None:
    """The board the row holds: the one in this process's memory when it is that one, else read and unpickled
    once (a 100-entry board took ~25 ms)."""
    if row is None or row["built_at"] is None or row["shape"] != board_shape.SHAPE:
        return None
    built = row["built_at"].timestamp()
    with _recent_lock:
        held = next(
            (data for data, _ in _recent.values()
             if data.generation == row["generation"] and abs(data.computed_at - built) < 1e-5),
            None,
        )  # fmt: skip
    if held is not None:
        return held
    blob = StoredBoard.objects.filter(pk=row["id"]).values_list("data", flat=True).first()
    if not blob:
        return None
    try:
        data = pickle.loads(zlib.decompress(bytes(blob)))  # noqa: S301 (written by this site's own worker)
    except Exception:  # noqa: BLE001 (a board pickled by other code: built again)
        logger.warning("the stored board %s could not be read", row["key"], exc_info=True)
        return None
    if not isinstance(data, board_shape.Board):
        return None
    _remember(row["key"], data)
    return data


def shared_cache() -> bool:
    """Whether every process reads the boards a worker writes to the cache: not with the embedded default's
    per-process cache (LocMemCache), where processes share the stored board (the database) only."""
    from django.core.cache.backends.dummy import DummyCache
    from django.core.cache.backends.locmem import LocMemCache

    return not isinstance(caches["default"], (LocMemCache, DummyCache))


def _claimable(now: datetime) -> Q:
    return Q(build_claimed_at__isnull=True) | Q(build_claimed_at__lt=now - timedelta(seconds=BUILD_CLAIM_SEC))


def request_build(version_id: int, harness: int | None, open_weight: bool | None, row: dict | None = None) -> bool:
    """Ask the boards queue's worker for the current board, once while one is asked for (single flight).

    The request that sets the stored row's claim sends the task; every other
    one finds it set. True when a build is asked for or running; False when
    the broker could not be reached (the claim is let go: the next request
    asks again). Where Celery runs tasks in the caller (task_always_eager),
    nothing is sent: the page must not build, and a test builds (`build`).
    """
    now = timezone.now()
    if row is not None and row["build_claimed_at"] is not None and row["build_claimed_at"] > now - timedelta(seconds=BUILD_CLAIM_SEC):
        return True
    row_id = row["id"] if row is not None else _stored_row_id(version_id, harness, open_weight)
    if not StoredBoard.objects.filter(_claimable(now), pk=row_id).update(build_claimed_at=now):
        return True  # another request claimed it meanwhile
    from autolab_site.celery import app

    if app.conf.task_always_eager:
        return True
    try:
        dispatch.send_rebuild(version_id, harness, open_weight)
    except dispatch.BROKER_DOWN:  # the page says so; the next request asks again
        logger.warning("could not ask for a build of board %s", stored_scope(version_id, harness, open_weight), exc_info=True)
        StoredBoard.objects.filter(pk=row_id, build_claimed_at=now).update(build_claimed_at=None)
        return False
    return True


def _stored_row_id(version_id: int, harness: int | None, open_weight: bool | None) -> int:
    scope = stored_scope(version_id, harness, open_weight)
    try:
        with transaction.atomic():
            return StoredBoard.objects.get_or_create(scope=scope, defaults={"version_id": version_id})[0].pk
    except IntegrityError:  # another request made it meanwhile
        return StoredBoard.objects.get(scope=scope).pk


def _store(key: str, data: board_shape.Board, version_id: int, harness: int | None, open_weight: bool | None) -> None:
    """Keep a board for this process, in a shared cache, and in the database as the last one (which pages
    serve after a cache flush, and while the next one is built)."""
    _remember(key, data)
    if shared_cache():
        cache.set(key, data, BOARD_TIMEOUT)
    blob = zlib.compress(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL), 1)
    values = {
        "version_id": version_id, "shape": board_shape.SHAPE, "key": key, "generation": data.generation,
        "built_at": datetime.fromtimestamp(data.computed_at, tz=dt_timezone.utc), "n_rollouts": data.n_rollouts,
        "data": blob,
    }
    scope = stored_scope(version_id, harness, open_weight)
    if not StoredBoard.objects.filter(scope=scope).update(**values):
        try:
            with transaction.atomic():
                StoredBoard.objects.create(scope=scope, **values)
        except IntegrityError:  # a request claimed its build meanwhile
            StoredBoard.objects.filter(scope=scope).update(**values)


def build(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board:
    """Build the current board here, updated from this process's last one where it can, and store it
    (this process, the cache, the database): the boards worker's task (`rebuild`), commands, and tests,
    never a page."""
    return _build(version, harness, open_weight)[0]


def _build(version: BenchmarkVersion, harness: int | None, open_weight: bool | None):
    key = board_key(version.pk, harness, open_weight)
    data, kept = _updated(version, harness, open_weight)
    _store(key, data, version.pk, harness, open_weight)
    return data, kept


def rebuild(version_id: int, harness: int | None = None, open_weight: bool | None = None) -> str:
    """Bring one board up to date and store it where every process reads it (the task dispatch.REBUILD_TASK),
    then let its claim go."""
    scope = stored_scope(version_id, harness, open_weight)
    try:
        version = BenchmarkVersion.objects.filter(pk=version_id).first()
        if version is None:
            return f"version {version_id} is gone"
        at = generation(version_id)
        row = _stored_row(version_id, harness, open_weight)
        if (
            row is not None and row["shape"] == board_shape.SHAPE and row["generation"] == generation_label(*at[:2])
            and row["built_at"].timestamp() > changed_here_at()
        ):  # a build asked for twice (a claim that outlived BUILD_CLAIM_SEC): the first one did it
            return f"board {version} ({harness}, {open_weight}): already current"
        start = time.monotonic()
        _, kept = _build(version, harness, open_weight)
        return f"board {version} ({harness}, {open_weight}): {kept.n_read} rollouts read in {time.monotonic() - start:.2f} s"
    finally:
        StoredBoard.objects.filter(scope=scope).update(build_claimed_at=None)
