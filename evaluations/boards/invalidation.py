"""When a cached board goes stale: the generation counters, `invalidate`, and the signals that call it.

Every board is cached under a key that includes a *generation*, kept in the
database (BoardGeneration) so that every process reads the same one.
Saving or deleting an Entry, PublishedResult, Task, BenchmarkVersion,
AgentModel, Harness or FailureLabel bumps the global counter (signals
connected in `EvaluationsConfig.ready`); creating or deleting a Rollout, or
saving one in a way that changes what boards read (`board_state`), bumps
the counter of its entry on its version only (`entry_scope`), so a live
campaign on one version leaves the others' boards cached. Code that changes
rollouts with `QuerySet.update()`, `bulk_update()` or `bulk_create()` (no
signals) must call `invalidate()` (with the version when it knows it: every
entry of it is then recomputed).

This module only says *that* something changed; `compute` reads the
counters to know which entries to read again, `serving` to name the cache key.
"""
from __future__ import annotations

import itertools
import time

from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from autolab_site import last_writes
from tasks.models import Task
from trajectories import statuses
from trajectories.models import Rollout
from trajectories.statuses import Disposition

from evaluations.boards.board import entry_key
from evaluations.models import BoardGeneration

# Changes made by this process, counted at once: they reach the database's
# counter only when they commit, and this process must not serve from before
# them meanwhile (nor a test, whose transaction never commits).
_changes_here = itertools.count(1)
_seen_here: dict[str, int] = {}  # scope -> this process's latest change
_changed_here_at = 0.0  # when this process last changed what boards read (epoch seconds)


GLOBAL = ""  # the scope every board reads: tasks, models, entries, published results


def version_scope(version_id: int) -> str:
    """The counter of a change to one benchmark version's rollouts that no one entry holds (every entry recomputed)."""
    return f"v{version_id}"


def entry_scope(version_id: int, key: str) -> str:
    """The counter of one entry's rollouts on one version: its change recomputes that entry alone."""
    return f"v{version_id}:{key}"


def _counters(version_id: int | None) -> dict[str, tuple[int, int]]:
    """Scope -> (the database's counter, this process's latest change) of what a version's boards read.

    With no version, every scope.
    """
    rows = BoardGeneration.objects.values_list("scope", "value")
    if version_id is not None:
        rows = rows.filter(
            Q(scope__in=[GLOBAL, version_scope(version_id)]) | Q(scope__startswith=f"{version_scope(version_id)}:")
        )
    values = dict(rows)
    if version_id is None:
        local = dict(_seen_here)
    else:
        prefix = f"{version_scope(version_id)}:"
        local = {
            scope: n for scope, n in _seen_here.items()
            if scope in (GLOBAL, version_scope(version_id)) or scope.startswith(prefix)
        }
    return {scope: (int(values.get(scope, 0)), local.get(scope, 0)) for scope in {*values, *local}}


def _generation_of(counters: dict[str, tuple[int, int]]) -> tuple[int, int, int]:
    everywhere = counters.get(GLOBAL, (0, 0))[0]
    this_version = sum(db for scope, (db, _) in counters.items() if scope != GLOBAL)
    here = sum(local for _, local in counters.values())
    return everywhere, this_version, here


def generation(version_id: int | None = None) -> tuple[int, int, int]:
    """A board's generation: the global counter, its version's (the same in every process) and this process's own changes.

    The version part sums the version's counter and its entries'; with no
    version, every version's: what lists versions changes with any of them.
    """
    return _generation_of(_counters(version_id))


def _bump(scope: str) -> None:
    if _increment(scope):
        return
    try:
        with transaction.atomic():
            # Start from the clock, not 0: cache entries written under an
            # earlier counter (a database reset, say) must not match.
            BoardGeneration.objects.create(scope=scope, value=int(time.time() * 1000))
    except IntegrityError:  # another process made it meanwhile
        _increment(scope)


def _increment(scope: str) -> bool:
    """Add one to the scope's counter; False when it has no row yet.

    Plain SQL: an import runs this at every trial, and the ORM took a millisecond to build its UPDATE.
    """
    table = connection.ops.quote_name(BoardGeneration._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET value = value + 1 WHERE scope = %s", [scope])
        return cursor.rowcount > 0


def invalidate(version_id: int | None = None, entry: str | None = None) -> None:
    """Mark cached boards stale once the change commits, in every process: one entry's of one version (its
    rollouts changed: the next board recomputes that entry alone), one version's, or (None) every board.

    One bump, after the commit, in a statement of its own: a request that
    read the old generation before it may cache the new data under the old
    key (never read again), never the old data under the new one; and no
    transaction holds the counter's row while it runs. An importer runs it
    as its transaction's last write instead (last_writes.run_before_commit):
    committed with the data, which is as safe, and the counter's row is held
    for the commit alone.
    """
    if version_id is None:
        scope = GLOBAL
    elif entry is None:
        scope = version_scope(version_id)
    else:
        scope = entry_scope(version_id, entry)
    global _changed_here_at
    _seen_here[scope] = next(_changes_here)
    _changed_here_at = time.time()
    last_writes.after_commit(lambda: _bump(scope))


def on_result_change(sender, **kwargs) -> None:
    invalidate()


def rollout_version(task_id: int | None, rollout: Rollout | None = None) -> int | None:
    """The benchmark version of a rollout's task (None when unknown: every board is then invalidated).

    Read from `rollout`'s task when that is loaded already (an import sets
    it): a query on every import's save otherwise.
    """
    if task_id is None:
        return None
    task = rollout._state.fields_cache.get("task") if rollout is not None else None
    if task is not None and task.pk == task_id and "version_id" in task.__dict__:
        return task.version_id
    return Task.objects.filter(pk=task_id).values_list("version_id", flat=True).first()


def _rollout_entry(instance: Rollout) -> str | None:
    data = instance.__dict__
    if data.get("model_id") is None or data.get("harness_id") is None:
        return None
    return entry_key(data["model_id"], data["harness_id"])


def on_rollout_deleted(sender, instance: Rollout, **kwargs) -> None:
    invalidate(rollout_version(instance.__dict__.get("task_id")), _rollout_entry(instance))


# A rollout is saved many times while it runs (heartbeats, every streamed
# step). Only a save that changes what the boards read invalidates them: each
# Rollout remembers its board state when loaded and compares it on save.
BOARD_STATE_FIELDS = (
    "task_id", "model_id", "harness_id", "index", "reward", "status", "superseded", "infra_error", "excluded", "cost_usd",
    "n_input_tokens", "n_output_tokens", "agent_started_at", "agent_finished_at", "n_benchmark_calls", "curve",
    "score_log", "trajectory_source", "held_back",
)


def board_state(rollout: Rollout) -> tuple | None:
    """What the boards read of a rollout; None when some field is not loaded.

    Fields are read from __dict__ so that a deferred field is never fetched.
    An unfinished rollout only counts as "unfinished": its curve, tokens and
    timings may change freely until its status does.
    """
    data = rollout.__dict__
    if any(name not in data for name in BOARD_STATE_FIELDS):
        return None
    if statuses.disposition(data["status"], data["superseded"], data["infra_error"]) == Disposition.UNFINISHED:
        return (Disposition.UNFINISHED, data["task_id"], data["model_id"], data["harness_id"])
    return tuple(data[name] for name in BOARD_STATE_FIELDS)


def remember_rollout(sender, instance: Rollout, **kwargs) -> None:
    instance._board_state = board_state(instance)
    instance._board_place = (instance.__dict__.get("task_id"), _rollout_entry(instance))


def on_rollout_saved(sender, instance: Rollout, created: bool = False, **kwargs) -> None:
    before = getattr(instance, "_board_state", None)
    after = board_state(instance)
    instance._board_state = after
    if created or before is None or after is None or before != after:
        # The entry's part of its version's boards only, unless the rollout moved (to another task,
        # maybe of another version: every board; to another entry: its version's) or is not known.
        place_before = getattr(instance, "_board_place", None)
        task_id, entry = instance.__dict__.get("task_id"), _rollout_entry(instance)
        instance._board_place = (task_id, entry)
        if not created and place_before is not None and place_before[0] != task_id:
            task_id = None
        if not created and (place_before is None or place_before[1] != entry):
            entry = None
        invalidate(rollout_version(task_id, instance), entry)



def generation_label(everywhere: int, this_version: int) -> str:
    """The database's generation a board was computed at, as the board records it (Board.generation)."""
    return f"{everywhere}.{this_version}"


def changed_here_at() -> float:
    """When this process last changed what boards read (epoch seconds; 0 when it never did)."""
    return _changed_here_at
