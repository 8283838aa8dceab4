"""Serving a board: this process's recent boards, the shared cache, and the worker's rebuild.

`board(version)` and `served_board(version)` are the door every page, the
API and the CSV exports go through. A board is cached under a key of the
board's shape (`board.SHAPE`: no process reads a board pickled by code of
another shape) and its generation (`invalidation`); this process keeps its
last boards as objects too (`_recent`: unpickling a large board cost more
than the page). When nothing is cached, the board is updated here
(`compute.updated_board`); but a large board
(AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS) with a shared cache is never computed in
a request: the last one is served with its age (`Freshness`) while the
boards queue's worker runs `rebuild`. Nothing is served from before a
change without saying so.
"""
from __future__ import annotations

import gc
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone as dt_timezone

from django.conf import settings
from django.core.cache import cache, caches
from django.utils.timesince import timesince

from tasks.models import BenchmarkVersion

from evaluations.boards import board as board_shape
from evaluations.boards.compute import _updated, forget_kept, updated_board
from evaluations.boards.invalidation import changed_here_at, generation, generation_label
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
    recalled again (a stale one, every STALE_RECALL_SEC) is not frozen again.
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
    """How current a served board is: pages say so when it is the last one while a newer one is computed."""

    computed_at: float  # epoch seconds
    stale: bool  # rollouts or settings changed since it was computed
    rebuilding: bool  # a worker is computing the new one

    @property
    def computed(self) -> datetime:
        return datetime.fromtimestamp(self.computed_at, tz=dt_timezone.utc)

    @property
    def age(self) -> str:
        """"less than a minute", "3 minutes", "1 hour, 2 minutes" (Django's timesince said "0 minutes")."""
        if time.time() - self.computed_at < 60:
            return "less than a minute"
        return timesince(self.computed)


REBUILD_MARK_SEC = 600  # a rebuild that has not ended by then (its worker died) is asked for again
STALE_RECALL_SEC = 2.0  # a process re-reads the last board this often while serving it stale


def latest_key(version_id: int, harness: int | None, open_weight: bool | None) -> str:
    """Where the newest board of a version and filters is named, whatever its generation: (its identity, its key)."""
    return f"evaluations:board-last:{board_shape.SHAPE}:{version_id}:{harness}:{open_weight}"


def rebuilding_key(version_id: int, harness: int | None, open_weight: bool | None) -> str:
    return f"evaluations:board-rebuilding:{version_id}:{harness}:{open_weight}"


def _store(key: str, data: board_shape.Board, version_id: int, harness: int | None, open_weight: bool | None) -> None:
    """Keep a board for this process and, with a shared cache, there too and as the last one (which a page
    serves while the next is computed: served_board).

    A per-process cache (LocMemCache) holds nothing `_recent` does not: storing there only pickled the
    board (~20 ms at 100 entries) on every update. In a shared one the board is pickled once, under its
    key; the last one's entry names it (a copy there was a second pickling, a fifth of a worker's update).
    """
    _remember(key, data)
    if not shared_cache():
        return
    cache.set(key, data, BOARD_TIMEOUT)
    cache.set(latest_key(version_id, harness, open_weight), (data.identity, key), BOARD_TIMEOUT)


def board(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board:
    """`compute_board(...)`, from this process's last boards or the cache when nothing has changed."""
    return served_board(version, harness, open_weight)[0]


def served_board(
    version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None
) -> tuple[board_shape.Board, Freshness]:
    """The board and how current it is.

    The current one when cached; else, when the last board is large
    (AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS), the last one, stale, while
    `rebuild` runs on a worker; else computed here, updated from this
    process's last board where it can (`updated_board`).
    """
    everywhere, this_version, here = generation(version.pk)
    key = _board_key(version.pk, harness, open_weight, (everywhere, this_version, here))
    data = _recalled(key)
    if data is None:
        data = cache.get(key)
        if isinstance(data, board_shape.Board):  # not something a cache shared with older code holds
            _remember(key, data)
        else:
            data = None
    if data is not None:
        return data, Freshness(data.computed_at, stale=False, rebuilding=False)
    latest = latest_key(version.pk, harness, open_weight)
    last = _recalled(latest) or _last_board(latest)
    if last is not None and last.n_rollouts > settings.AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS and shared_cache():
        if last.generation == generation_label(everywhere, this_version) and last.computed_at > changed_here_at():
            # A worker's board of this very generation, computed after this process's own last change.
            _remember(key, last)
            return last, Freshness(last.computed_at, stale=False, rebuilding=False)
        return last, Freshness(last.computed_at, stale=True, rebuilding=request_rebuild(version.pk, harness, open_weight))
    data = updated_board(version, harness, open_weight)
    _store(key, data, version.pk, harness, open_weight)
    return data, Freshness(data.computed_at, stale=False, rebuilding=False)


def _last_board(latest: str) -> board_shape.Board | None:
    """The board stored last under `latest`, recalled for STALE_RECALL_SEC.

    Its identity is read first (a few bytes): the board is usually one this
    process already holds (it served it as current until a new rollout moved
    the generation), and unpickling a 100-entry board again took ~25 ms.
    """
    named = cache.get(latest) if shared_cache() else None
    if not (isinstance(named, tuple) and len(named) == 2):  # nothing, or what a cache shared with older code holds
        return None
    identity, key = named
    last = _held(identity)
    if last is None:
        last = cache.get(key)
        if not isinstance(last, board_shape.Board):
            return None
    _remember(latest, last, STALE_RECALL_SEC)
    return last


def _held(identity: tuple | None) -> board_shape.Board | None:
    """The board of that identity among this process's recent ones."""
    if identity is None:
        return None
    with _recent_lock:
        return next((data for data, _ in _recent.values() if data.identity == identity), None)


def shared_cache() -> bool:
    """Whether every process reads the boards a worker writes: not with the embedded default's per-process
    cache (LocMemCache), where the web process computes every board itself."""
    from django.core.cache.backends.dummy import DummyCache
    from django.core.cache.backends.locmem import LocMemCache

    return not isinstance(caches["default"], (LocMemCache, DummyCache))


def request_rebuild(version_id: int, harness: int | None, open_weight: bool | None) -> bool:
    """Ask a worker (queue AUTOLAB_BOARD_QUEUE) for the current board, once while one is asked for.

    True when a rebuild is asked for or running; False when the broker could not be reached (the next
    request asks again).
    """
    mark = rebuilding_key(version_id, harness, open_weight)
    if not cache.add(mark, time.time(), REBUILD_MARK_SEC):
        return True
    try:
        dispatch.send_rebuild(version_id, harness, open_weight)
    except dispatch.BROKER_DOWN:  # the page still serves the last board, and says so; the next request asks again
        logger.warning("could not ask for a rebuild of board %s", mark, exc_info=True)
        cache.delete(mark)
        return False
    return True


def rebuild(version_id: int, harness: int | None = None, open_weight: bool | None = None) -> str:
    """Bring one board up to date and store it where every process reads it (the task dispatch.REBUILD_TASK)."""
    mark = rebuilding_key(version_id, harness, open_weight)
    try:
        version = BenchmarkVersion.objects.filter(pk=version_id).first()
        if version is None:
            return f"version {version_id} is gone"
        key = board_key(version_id, harness, open_weight)
        start = time.monotonic()
        data, kept = _updated(version, harness, open_weight)
        _store(key, data, version_id, harness, open_weight)
        return f"board {version} ({harness}, {open_weight}): {kept.n_read} rollouts read in {time.monotonic() - start:.2f} s"
    finally:
        cache.delete(mark)
