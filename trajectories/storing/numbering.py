"""A rollout's number: given once, when the rollout is made, and never changed.

Repeats of one (task, model, harness) are numbered 0, 1, 2, ... in the
order they were made (imported, or queued by a campaign); people read
`index + 1` ("rollout 2"). A number used to be recomputed in run order at
every import, so a campaign's rollout read "rollout 1" while it ran and
"rollout 2" once its trial was imported, and two siblings could share one.
Now every page, the grid and the cancel dialog say the same number for the
rollout's whole life.
"""
from __future__ import annotations

import functools

from django.db import connection

from trajectories.models import Rollout

# Advisory lock namespace for numbering (any constant of ours).
NUMBERING_LOCK = 7_301_001


def next_index(task_id: int, model_id: int, harness_id: int, *, excluding: int | None = None) -> int:
    """The number a new rollout of (task, model, harness) takes: one past the group's last
    (`excluding` a rollout of the group already saved, the one to number).

    Call it in the transaction that saves the rollout: on PostgreSQL the
    group is locked until that transaction ends, so parallel imports and
    campaigns never hand out one number twice (SQLite has one writer). The
    group is read in a statement after the lock's: its snapshot sees what
    the lock waited for.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_GROUP, [NUMBERING_LOCK, _group_key(task_id, model_id, harness_id)])
    last = next(iter(group_last(task_id, model_id, harness_id, excluding=excluding)), None)
    return 0 if last is None else last + 1


def group_last(task_id: int, model_id: int, harness_id: int, *, excluding: int | None = None):
    """The group's last number, as a query of at most one row.

    The rollout index on (task, model, harness, index) reads it from the
    group's end; on (task, model, harness) alone it read the whole group
    at every import (9.6 ms for a group of 6,535 repeats).
    """
    return (
        Rollout.objects.filter(task_id=task_id, model_id=model_id, harness_id=harness_id).exclude(pk=excluding)
        .order_by("-index").values_list("index", flat=True)[:1]
    )


def number_last(rollout: Rollout) -> None:
    """Give `rollout`, saved in this transaction, the next number of its group, as the transaction's last write.

    The import's way: next_index before a trial's steps held the group's
    lock through the whole import, so two processes importing repeats of
    one task waited for each other (2,200 against 2,900 steps/s). Here the
    deferred foreign-key checks run first, and the lock is held from here
    to a commit with nothing left to do but the work that follows a commit
    (autolab_site.last_writes). Nothing else may write after this. One
    round trip on PostgreSQL: the checks, the lock, then the number read
    and written, three statements in one message (four round trips, one per
    step, were a tenth of a small trial's import).
    """
    group = (rollout.task_id, rollout.model_id, rollout.harness_id)
    if connection.vendor != "postgresql":
        rollout.index = next_index(*group, excluding=rollout.pk)
        Rollout.objects.filter(pk=rollout.pk).update(index=rollout.index)
        return
    # Integers only, written into the text: a message of several statements takes no parameters.
    ids = {"task": group[0], "model": group[1], "harness": group[2], "rollout": rollout.pk}
    statements = [
        _LOCK_GROUP % (NUMBERING_LOCK, _group_key(*group)),
        # After the lock's statement, so that its snapshot sees what the lock waited for.
        _number_statement() % {name: int(value) for name, value in ids.items()},
    ]
    if len(connection.atomic_blocks) == 1:
        # Only where the commit follows: a caller's own transaction goes on with its checks deferred.
        statements.insert(0, "SET CONSTRAINTS ALL IMMEDIATE")
    with connection.cursor() as cursor:
        cursor.execute("; ".join(statements))
        while cursor.nextset():
            pass  # to the last statement's result
        rollout.index = cursor.fetchone()[0]


@functools.cache
def _number_statement() -> str:
    """The UPDATE giving a rollout its group's next number, with %(task)s, %(model)s, %(harness)s and
    %(rollout)s for the ids: the same text for every group, so Django builds group_last's query once
    per process, not at every import."""
    names = {1: "task", 2: "model", 3: "harness", 4: "rollout"}  # told apart by their values
    last, params = group_last(1, 2, 3, excluding=4).query.sql_with_params()
    pieces = last.split("%s")
    assert "%" not in "".join(pieces) and sorted(params) == [1, 2, 3, 4], (last, params)
    last = pieces[0] + "".join(f"%({names[value]})s{piece}" for value, piece in zip(params, pieces[1:]))
    table = connection.ops.quote_name(Rollout._meta.db_table)
    return f"UPDATE {table} SET index = 1 + COALESCE(({last}), -1) WHERE id = %(rollout)s RETURNING index"


_LOCK_GROUP = "SELECT pg_advisory_xact_lock(%s, %s)"


def _group_key(task_id: int, model_id: int, harness_id: int) -> int:
    return hash((task_id, model_id, harness_id)) % 2**31
