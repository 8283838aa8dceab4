"""A serial import reads the next trial while PostgreSQL stores the current one (storing.ingest._overlapped).

The rollout's document and the deferred foreign-key checks of its rows go
out pipelined; the next trial's folder is read meanwhile. What must hold:
the same rows as importing each trial alone, a database error in those
statements fails that trial only, and the trial read ahead is reported as
its own import would report it. Imports commit for real (transaction=True):
inside a test's transaction nothing overlaps.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from trajectories.models import Rollout, RolloutDocument, Step, StepChunk, ToolCall
from trajectories.reading import trial_folder
from trajectories.services import import_path, import_trial_dir
from trajectories.storing import ingest

from .trialdata import START, make_task, make_trial

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="pipelined statements are PostgreSQL's"),
]


def make_job(root, prefix: str, n: int):
    return [
        make_trial(root, f"lib__demo_task__{prefix}{i:03d}", n_agent_steps=2 + i % 3, start=START + timedelta(minutes=i))
        for i in range(n)
    ]


def stored(prefix: str) -> list:
    """Every row the import stored of the trials named with `prefix`, without ids."""
    rows = []
    for rollout in Rollout.objects.filter(trial_name__contains=f"__{prefix}").order_by("trial_name"):
        name = rollout.trial_name.split("__")[-1][1:]
        steps = Step.objects.filter(rollout=rollout).order_by("position")
        rows.append((
            name, rollout.n_steps, rollout.best_metric, rollout.failure_cause,
            [(s.position, s.kinds, s.message, s.new_output, set(s.search_document.split())) for s in steps],
            list(ToolCall.objects.filter(step__rollout=rollout).order_by("step__position").values_list("call_id", "kinds")),
            [(c.first, c.last, set(str(c.words).split())) for c in StepChunk.objects.filter(rollout=rollout).order_by("first")],
            set(str(RolloutDocument.objects.get(rollout=rollout).words).split()),
        ))
    return rows


@pytest.fixture
def reads(monkeypatch):
    """(trial folder name, whether the database was working through pipelined statements) of each folder read."""
    seen: list[tuple[str, bool]] = []
    real = ingest.read_trial_folder

    def read_trial_folder(path, **kwargs):
        seen.append((path.name, connection.connection is not None and connection.connection._pipeline is not None))
        return real(path, **kwargs)

    monkeypatch.setattr(ingest, "read_trial_folder", read_trial_folder)
    return seen


def test_each_next_trial_is_read_once_while_the_database_stores_the_one_before_and_the_rows_are_the_same(tmp_path, reads):
    make_task("demo_task")
    alone = [import_trial_dir(path) for path in make_job(tmp_path / "alone", "a", 6)]
    assert all(outcome.ok for outcome in alone)
    assert [overlapping for _, overlapping in reads] == [False] * 6  # one trial at a time: nothing to read meanwhile
    reads.clear()
    make_job(tmp_path / "job", "b", 6)
    report = import_path(tmp_path / "job", jobs=1)
    assert report.ok and report.counts["created"] == 6, report.as_dict()
    # The first read before any import; each later one during the import before it, each once.
    assert reads == [(f"lib__demo_task__b{i:03d}", i > 0) for i in range(6)]
    assert stored("b") == stored("a") and len(stored("b")) == 6
    assert sum(len(trial[4]) for trial in stored("b")) == Step.objects.filter(rollout__trial_name__contains="__b").count() > 6
    # Each numbered the next of its group, after the trials imported alone.
    numbers = Rollout.objects.filter(trial_name__contains="__b").order_by("trial_name").values_list("index", flat=True)
    assert list(numbers) == list(range(6, 12))


def test_a_database_error_in_the_overlapped_statements_fails_that_trial_alone(tmp_path, reads):
    """A trigger refuses the second trial's rollout document: the error comes back when the pipeline is left,
    after the third trial was read meanwhile. The second trial is rolled back whole; the third imports."""
    make_task("demo_task")
    make_job(tmp_path / "job", "c", 3)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION refuse_document() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF (SELECT trial_name FROM trajectories_rollout WHERE id = NEW.rollout_id) LIKE '%__c001' THEN
                    RAISE EXCEPTION 'no room for the words of %', NEW.rollout_id;
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_document BEFORE INSERT ON trajectories_rolloutdocument
                FOR EACH ROW EXECUTE FUNCTION refuse_document();
            """
        )
    try:
        report = import_path(tmp_path / "job", jobs=1)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_document ON trajectories_rolloutdocument; DROP FUNCTION refuse_document()")
    assert [outcome.outcome for outcome in report.outcomes] == ["created", "failed", "created"], report.as_dict()
    assert "no room for the words of" in report.outcomes[1].error
    assert reads == [(f"lib__demo_task__c{i:03d}", i > 0) for i in range(3)]  # the third read while the second failed
    assert sorted(Rollout.objects.values_list("trial_name", flat=True)) == ["lib__demo_task__c000", "lib__demo_task__c002"]
    assert Step.objects.filter(rollout__trial_name__endswith="c001").count() == 0
    assert StepChunk.objects.count() == 2 and RolloutDocument.objects.count() == 2
    assert Step.objects.filter(rollout__trial_name__endswith="c002").count() == 5  # a prompt and 4 agent steps


def test_a_broken_trial_read_ahead_is_reported_as_its_own_import_reports_it(tmp_path):
    make_task("demo_task")
    first, broken, last = make_job(tmp_path / "job", "d", 3)
    (broken / "agent" / "trajectory.json").write_text('{"schema_version": "ATIF-v1.6", "steps": [')
    expected = import_trial_dir(broken).error
    assert expected and "trajectory.json" in expected
    report = import_path(tmp_path / "job", jobs=1)
    assert [outcome.outcome for outcome in report.outcomes] == ["created", "failed", "created"]
    assert report.outcomes[1].error == expected


def test_a_trial_read_ahead_that_is_stored_already_is_left_unchanged(tmp_path, reads):
    """An unchanged trial's import never stores what was read ahead of it: its checksum says it is stored."""
    make_task("demo_task")
    paths = make_job(tmp_path / "job", "e", 3)
    assert import_trial_dir(paths[1]).ok
    before = stored("e")
    reads.clear()
    report = import_path(tmp_path / "job", jobs=1)
    assert [outcome.outcome for outcome in report.outcomes] == ["created", "unchanged", "created"], report.as_dict()
    assert [entry for entry in stored("e") if entry[0] == "001"] == before
    # Read ahead during the first import; the third is read by its own import (an unchanged trial overlaps nothing).
    assert reads == [("lib__demo_task__e000", False), ("lib__demo_task__e001", True), ("lib__demo_task__e002", False)]


def test_an_interrupt_while_reading_ahead_rolls_back_the_trial_being_stored(tmp_path, monkeypatch):
    """A second Ctrl-C (KeyboardInterrupt) during the read ahead: the trial whose transaction is open is
    rolled back and the import ends, as during any part of a trial; a rerun imports both."""
    make_task("demo_task")
    make_job(tmp_path / "job", "f", 2)
    real = trial_folder.snapshot_folder

    def snapshot_folder(path, **kwargs):
        if path.name.endswith("f001") and connection.connection._pipeline is not None:
            raise KeyboardInterrupt
        return real(path, **kwargs)

    monkeypatch.setattr(ingest, "snapshot_folder", snapshot_folder)
    report = import_path(tmp_path / "job", jobs=1)
    assert report.interrupted and report.outcomes == []
    assert not Rollout.objects.exists() and not Step.objects.exists()
    monkeypatch.undo()
    again = import_path(tmp_path / "job", jobs=1)
    assert again.ok and again.counts["created"] == 2, again.as_dict()


def test_the_read_ahead_uses_no_database(tmp_path, monkeypatch):
    from django.test.utils import CaptureQueriesContext

    from trajectories import services

    make_task("demo_task")
    make_job(tmp_path / "job", "h", 4)
    made = []
    real = services.read_ahead

    def read_ahead(path):
        with CaptureQueriesContext(connection) as queries:
            read = real(path)
        made.append((path.name, len(queries.captured_queries), read is not None))
        return read

    monkeypatch.setattr(services, "read_ahead", read_ahead)
    assert import_path(tmp_path / "job", jobs=1).ok
    assert made == [(f"lib__demo_task__h{i:03d}", 0, True) for i in (1, 2, 3)]


def test_trials_with_subagent_trajectories_store_their_chunks_before_the_overlapped_statements(tmp_path):
    """A trial with subagents stores its steps in one go and its chunks last (through COPY, which pipeline
    mode refuses, unless they are a new rollout's first: then one INSERT in the pipeline), one with only
    subagents' files none: each in a job read ahead stores what it does alone."""
    from .trialdata import trajectory, write_json

    make_task("demo_task")
    trials = make_job(tmp_path / "job", "s", 3) + make_job(tmp_path / "alone", "t", 3)
    for folder in (trials[0], trials[3]):
        write_json(folder / "agent" / "trajectory.summarization-1-summary.json", trajectory(2))
    for folder in (trials[1], trials[4]):
        (folder / "agent" / "trajectory.json").unlink()
        write_json(folder / "agent" / "trajectory.summarization-1-summary.json", trajectory(2))
    assert all(import_trial_dir(path).ok for path in trials[3:])
    report = import_path(tmp_path / "job", jobs=1)
    assert report.ok and report.counts["created"] == 3, report.as_dict()
    assert stored("s") == stored("t")
    assert [len(trial[6]) for trial in stored("s")] == [1, 0, 1]  # chunks: the main steps' (0: no main steps)
