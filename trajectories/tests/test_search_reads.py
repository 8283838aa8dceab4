"""Search reads the steps that can match, not every step of every rollout holding the words somewhere.

Issue 27: a query whose words each appear in many rollouts, but together in
one step of one of them, read every step of all those rollouts (the
rare-word query discarded 23,016 of 23,352 rows). These tests count the
step rows the database reads during one search: on PostgreSQL its own
per-transaction counters (pg_stat_xact_user_tables: rows fetched by index
and read by scans), on SQLite the step documents its LIKE looked through.
"""
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection

from trajectories.models import Step
from trajectories.search import query as search

from . import factories

# SQLite's LIKE is counted by replacing it on the connection, which only a
# new connection undoes: these tests commit, and close theirs at the end.
# PostgreSQL's per-transaction counters need the test's own transaction.
pytestmark = pytest.mark.django_db(transaction=connection.vendor == "sqlite")

DECOYS = 12
STEPS = 40  # per rollout


@pytest.fixture
def corpus():
    """DECOYS rollouts holding both words far apart, and one holding them in one step (its 20th)."""
    rollouts = [factories.make_rollout(trial_name=f"trial__{n}") for n in range(DECOYS + 1)]
    steps = []
    for n, rollout in enumerate(rollouts):
        for position in range(STEPS):
            # A word of its own per step: SQLite's count tells step documents apart by it.
            message = f"step own{n}x{position} of the run."
            if position == 0 and n < DECOYS:
                message += " alpha begins"
            if position == STEPS - 1 and n < DECOYS:
                message += " omega ends"
            if position == 19 and n == DECOYS:
                message += " alpha omega together"
            steps.append(Step(rollout=rollout, position=position, step_id=position + 1, source="agent", message=message))
    Step.objects.bulk_create(steps)
    search.rebuild_documents([rollout.pk for rollout in rollouts])
    yield rollouts[-1]
    if connection.vendor == "sqlite":
        connection.close()


@contextmanager
def step_rows_read() -> Iterator[list[int]]:
    """[n]: the step rows the database read in the block (n set at its end)."""
    counted = [0]
    if connection.vendor == "postgresql":
        before = _postgresql_step_reads()
        yield counted
        counted[0] = _postgresql_step_reads() - before
        return
    documents = set(Step.objects.values_list("search_document", flat=True))
    seen: set[str] = set()
    plain = sqlite3.connect(":memory:")

    def like(pattern, text, escape=None):
        if text in documents:
            seen.add(text)
        if escape is None:
            return plain.execute("SELECT ? LIKE ?", [text, pattern]).fetchone()[0]
        return plain.execute("SELECT ? LIKE ? ESCAPE ?", [text, pattern, escape]).fetchone()[0]

    connection.ensure_connection()
    connection.connection.create_function("like", 2, like)
    connection.connection.create_function("like", 3, like)
    try:
        yield counted
    finally:
        counted[0] = len(seen)
        plain.close()


def _postgresql_step_reads() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables"
            " WHERE relname = 'trajectories_step'"
        )
        row = cursor.fetchone()
    return row[0] if row else 0


def test_words_together_in_one_step_read_that_steps_neighbourhood_only(corpus):
    with step_rows_read() as read:
        hits = search.search_steps("alpha omega")
    assert [(h.rollout_id, h.step_id, h.where) for h in hits] == [(corpus.pk, 20, "message")]
    # Every decoy rollout holds both words: reading their steps would be
    # DECOYS * STEPS rows. Fewer than one rollout's steps are read.
    assert read[0] < STEPS


def test_a_substring_reads_the_steps_that_could_hold_it_only(corpus):
    with step_rows_read() as read:
        hits = search.search_steps("lpha omeg")
    assert [(h.rollout_id, h.step_id, h.where) for h in hits] == [(corpus.pk, 20, "message")]
    assert read[0] < STEPS
