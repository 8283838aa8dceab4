"""A time budget for a series of SQL statements, on PostgreSQL and SQLite.

A public search must never cost more than a set time, whatever the query:
one that scans every text would otherwise hold a web worker and a database
core for seconds, and a few clients sending it stall every other page.
PostgreSQL cancels a statement past its `statement_timeout` (set with SET
LOCAL, so it ends with the transaction); SQLite has no timeout, but calls a
progress handler every few thousand instructions, which interrupts the
statement once the deadline has passed. Either way the statement raises
and the caller keeps what earlier statements found.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from django.db import OperationalError, connection, transaction

T = TypeVar("T")
SQLITE_CHECK_EVERY = 100  # virtual machine instructions between two looks at the clock (one LIKE over a long text is one)


class OutOfTime(Exception):
    """The budget ran out; what was found before stands."""


class Budget:
    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds
        self.timeout = 0.0  # the statement timeout set on PostgreSQL, seconds; 0: none yet
        self.broken = False  # PostgreSQL cancelled a statement: the transaction is aborted

    def extend(self, seconds: float) -> None:
        """Allow at least `seconds` more from now (for a step known to be cheap)."""
        self.deadline = max(self.deadline, time.monotonic() + seconds)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run(self, query: Callable[[], T]) -> T:
        """`query()` (which must evaluate its SQL), stopped at the deadline with OutOfTime."""
        left = self.left()
        if left <= 0 or self.broken:
            raise OutOfTime
        if connection.vendor == "postgresql":
            return self._run_postgresql(query, left)
        try:
            return query()
        except OperationalError as exc:
            if "interrupted" in str(exc):
                raise OutOfTime from exc
            raise

    def _run_postgresql(self, query: Callable[[], T], left: float) -> T:
        # One SET for most searches: the timeout is lowered only once less
        # than half of it is left, so the whole costs at most 1.5 budgets.
        if not self.timeout or left < self.timeout / 2:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{max(int(left * 1000), 1)}ms"])
            self.timeout = left
        try:
            return query()
        except OperationalError as exc:
            if self.cancelled(exc):
                raise OutOfTime from exc
            raise

    def cancelled(self, exc: OperationalError) -> bool:
        """Whether PostgreSQL cancelled the statement (its timeout); if so the transaction is aborted, and
        rolled back at the block's end."""
        from psycopg.errors import QueryCanceled

        if not isinstance(exc.__cause__, QueryCanceled):
            return False
        self.broken = True
        connection.set_rollback(True)
        return True


@contextmanager
def budget(seconds: float) -> Iterator[Budget]:
    """A Budget for the statements run through it in this block; the bound is lifted at its end.

    On PostgreSQL the block is a transaction (a savepoint inside another),
    which SET LOCAL's timeout ends with; a cancelled statement rolls it
    back, after which the block runs no more SQL. Reads only.
    """
    bound = Budget(seconds)
    if connection.vendor == "postgresql":
        with transaction.atomic():
            yield bound
            if bound.timeout and not bound.broken:
                _lift_timeout(bound)
        return
    connection.ensure_connection()
    raw = connection.connection
    raw.set_progress_handler(lambda: int(time.monotonic() > bound.deadline), SQLITE_CHECK_EVERY)
    try:
        yield bound
    finally:
        raw.set_progress_handler(None, 0)


def _lift_timeout(bound: Budget) -> None:
    """The statement timeout back to the default before the block ends.

    Inside another transaction it would outlive the block; and COMMIT is a
    statement too: under the few milliseconds a budget near its end leaves,
    a busy server cancelled it, and the search answered 500 (search_bench's
    'aluate_loc', which reaches the budget). Should this statement be
    cancelled in turn, the block rolls back instead, which only reads.
    """
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout TO DEFAULT")
    except OperationalError as exc:
        if not bound.cancelled(exc):
            raise
