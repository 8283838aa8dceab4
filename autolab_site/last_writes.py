"""Work that follows a commit, which the transaction's owner may run as its last writes instead.

Django runs on_commit callbacks after the commit, each a transaction of its
own, with its own flush to disk on PostgreSQL. A caller that owns its
transaction and knows that nothing follows (the importer, once it has
numbered its rollout) runs them inside it, just before its commit: they then
commit with the change they follow, atomically, and cost no commit of their
own (the board's generation bump was a twentieth of a small trial's import).
Work registered here runs once either way.
"""
from __future__ import annotations

from collections.abc import Callable

from django.db import transaction


class _Once:
    """An on_commit callback that may have run already, inside the transaction."""

    __slots__ = ("work", "done")

    def __init__(self, work: Callable[[], None]):
        self.work = work
        self.done = False

    def __call__(self) -> None:
        if not self.done:
            self.done = True
            self.work()


def after_commit(work: Callable[[], None], using: str | None = None) -> None:
    """Run `work` once the current transaction commits (now, outside one), unless run_before_commit ran it."""
    transaction.on_commit(_Once(work), using=using)


def run_before_commit(using: str | None = None) -> None:
    """Run the after_commit work of the current transaction now, inside it, as its last writes.

    Only in the outermost atomic block, whose end is the commit: inside a
    savepoint, a rollback still to come could undo the work while its
    caller's change stays, so the work waits for the commit as usual. Work
    of a savepoint rolled back is gone from Django's list already; work
    registered after this call still runs after the commit.
    """
    connection = transaction.get_connection(using)
    if len(connection.atomic_blocks) != 1:
        return
    for _savepoints, callback, _robust in list(connection.run_on_commit):
        if isinstance(callback, _Once):
            callback()
