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

from django.db import connection

from trajectories.models import Rollout

# Advisory lock namespace for numbering (any constant of ours).
NUMBERING_LOCK = 7_301_001


def next_index(task_id: int, model_id: int, harness_id: int) -> int:
    """The number a new rollout of (task, model, harness) takes: one past the group's last.

    Call it in the transaction that saves the rollout: on PostgreSQL the
    group is locked until that transaction ends, so parallel imports and
    campaigns never hand out one number twice (SQLite has one writer).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                           [NUMBERING_LOCK, hash((task_id, model_id, harness_id)) % 2**31])
    last = (
        Rollout.objects.filter(task_id=task_id, model_id=model_id, harness_id=harness_id)
        .order_by("-index").values_list("index", flat=True).first()
    )
    return 0 if last is None else last + 1
