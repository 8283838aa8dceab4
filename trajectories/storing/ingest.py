"""Storing one Harbor trial folder as a Rollout with its steps.

One trial is one transaction: either the rollout and every step, tool call
and observation are stored, or nothing is. The trial name is the identity:
importing the same content again changes nothing (the folder checksum says
so), and new content for a known trial name replaces the old rows while the
Rollout keeps its id (pages and staff labels point at it).
"""
from __future__ import annotations

import contextlib
import logging
import re
import zlib
from dataclasses import asdict, dataclass, field
from datetime import datetime
from datetime import timezone as dt_timezone
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models.functions import Coalesce, Length

from autolab_site import last_writes
from autolab_site.gc_pause import gc_paused
from agents import services as agents
from tasks import services as tasks

from trajectories.analysis import rollout as analysis
from trajectories.failures import service as failure_service
from trajectories.storing import observation_text
from trajectories.storing.bulk_rows import BATCH_SIZE, insert_rows, reserve_ids
from trajectories import lifecycle, provenance, reviews, statuses
from trajectories.reading.json_data import clean_text
from trajectories.storing.numbering import number_last
from trajectories.grades import keep_latest_regrade, regraded_anchors, rescored_fields
from trajectories.models import (
    Observation,
    ObservationText,
    Rollout,
    RolloutDocument,
    RolloutStatus,
    Step,
    SubTrajectory,
    ToolCall,
)
from trajectories.reading.parsed import FileChange, ParsedStep, ParsedTrajectory, RolloutAnalysis, StepAnalysis
from trajectories.search.chunks import store_chunks
from trajectories.search.texts import index_verifier
from trajectories.search.document import TrajectoryDocuments
from trajectories.reading.trial_folder import (
    FolderSnapshot, TrialFolder, TrialFolderError, is_trial_dir, peek_trial_name, read_trial_folder, score_log_entries,
    snapshot_folder,
)

logger = logging.getLogger(__name__)

CREATED = "created"
UPDATED = "updated"
UNCHANGED = "unchanged"
FAILED = "failed"
OUTCOMES = (CREATED, UPDATED, UNCHANGED, FAILED)

TRIAL_LOCK = 7_301_002
_EARLIEST = datetime.min.replace(tzinfo=dt_timezone.utc)
TRIAL_NAME_LENGTH = 300
KINDS_LENGTH = 200


class IngestError(ValueError):
    """A trial that cannot be stored, with a message fit for a report."""


@dataclass
class TrialOutcome:
    """What importing one trial folder did; the report's row for it."""

    path: str
    outcome: str = FAILED
    trial_name: str = ""
    error: str = ""
    rollout_id: int | None = None
    task: str = ""
    model: str = ""
    harness: str = ""
    status: str = ""
    status_reason: str = ""
    # "atif", "converted from <native format>" or "none" (no trajectory: reward and result only).
    trajectory: str = ""
    n_steps: int = 0
    n_episodes: int | None = None
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    reward: float | None = None
    verifier_fields: dict[str, Any] = field(default_factory=dict)
    verifier_outputs: dict[str, Any] = field(default_factory=dict)
    exception_type: str = ""
    n_benchmark_calls: int = 0
    n_edits: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.outcome == FAILED:
            return {key: data[key] for key in ("path", "trial_name", "outcome", "error")}
        return data


def ingest_trial_dir(
    path: Path,
    *,
    version: str | None = None,
    rollout: Rollout | None = None,
    live: bool = False,
    source_label: str = "",
    lookups: dict | None = None,
    force: bool = False,
    snapshot: FolderSnapshot | None = None,
    folder: TrialFolder | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> TrialOutcome:
    """Import the trial folder `path`; never raises for bad input.

    `rollout` is the row our runner created before the trial started: it is
    updated in place, keeping its campaign (and its task, model and harness,
    which the runner chose). `source_label` replaces the path in the stored
    source_path when `path` is a temporary folder (an unpacked archive).
    `lookups` is a dict shared by the trials of one bulk import, caching
    task, model and harness rows so that each is looked up once. `force`
    imports a trial again even when its files have not changed, every row
    anew: after an upgrade whose analysis or search rules differ.
    `snapshot` is the folder as the caller read it (snapshot_folder), when
    it must know which bytes were imported (the live import does), and
    `folder` what read_trial_folder made of that snapshot, when the caller
    needs it too (the live import continues from it).
    """
    with gc_paused():  # a trial's objects live until its end: nothing to collect
        return _ingest_trial_dir(
            Path(path), version=version, rollout=rollout, live=live, source_label=source_label, lookups=lookups,
            force=force, snapshot=snapshot, folder=folder, meanwhile=meanwhile,
        )


def _ingest_trial_dir(
    path: Path, *, version: str | None, rollout: Rollout | None, live: bool, source_label: str, lookups: dict | None,
    force: bool, snapshot: FolderSnapshot | None, folder: TrialFolder | None, meanwhile: Callable[[], None] | None,
) -> TrialOutcome:
    outcome = TrialOutcome(path=source_label or str(path))
    try:
        if not is_trial_dir(path):
            raise IngestError(f"{path}: not a Harbor trial folder (no config.json, result.json or agent/trajectory.json)")
        # A snapshot made here is this import's alone: the reader may let its bytes go as it decodes them.
        own_snapshot = snapshot is None
        if snapshot is None:
            snapshot = _snapshot(path, live=live)
        existing = rollout
        if existing is None:
            name = peek_trial_name(path, snapshot)[:TRIAL_NAME_LENGTH]
            existing = _stored_as(name) if name else None
        if existing is not None and existing.checksum == snapshot.checksum and not force:
            return describe(outcome, _rollouts().get(pk=existing.pk) if rollout is None else existing, UNCHANGED)
        folder = folder or read_trial_folder(path, live=live, snapshot=snapshot, consume=own_snapshot)
        if rollout is None and existing is not None and existing.trial_name != folder.trial_name[:TRIAL_NAME_LENGTH]:
            existing = _stored_as(folder.trial_name[:TRIAL_NAME_LENGTH])
        stored, created = _store(
            folder, existing, version=version, runner_rollout=rollout is not None, source=outcome.path,
            lookups=lookups if lookups is not None else {}, replace_steps=force, meanwhile=meanwhile,
        )
    except _StoredMeanwhile as stored_meanwhile:
        return describe(outcome, stored_meanwhile.rollout, UNCHANGED)
    except (TrialFolderError, IngestError, tasks.TaskNotFound) as exc:
        outcome.error = str(exc)
        return outcome
    except Exception as exc:  # noqa: BLE001  (one bad trial must not stop a bulk import)
        logger.exception("importing %s failed", path)
        outcome.error = f"{path}: {type(exc).__name__}: {exc}"
        return outcome
    return describe(outcome, stored, CREATED if created else UPDATED)


class ReadAhead(NamedTuple):
    """A trial folder read before its import (read_ahead), for ingest_trial_dir's `snapshot` and `folder`."""

    snapshot: FolderSnapshot
    folder: TrialFolder


def _snapshot(path: Path, *, live: bool) -> FolderSnapshot:
    """The trial folder as an import reads it (snapshot_folder).

    A finished trial's trajectory is no longer rewritten: a large one is streamed, not held.
    """
    return snapshot_folder(path, stream_large=not live and (path / "result.json").is_file())


def read_ahead(path: Path) -> ReadAhead | None:
    """The trial folder `path` read as its (not live) import would read it, or None: its import reads it itself.

    For a bulk import's `meanwhile` (the next trial read while PostgreSQL
    stores this one). Any failure is left to the import, which reads the
    folder again and reports it as it always does; an unchanged trial's
    import never looks at the read (its checksum is the snapshot's).
    """
    try:
        if not is_trial_dir(path):
            return None
        snapshot = _snapshot(path, live=False)
        return ReadAhead(snapshot, read_trial_folder(path, snapshot=snapshot, consume=True))
    except Exception:  # noqa: BLE001  (reported by the import itself, in its words)
        return None


def _rollouts():
    return Rollout.objects.select_related("task", "model", "harness")


class StoredTrial(NamedTuple):
    """A trial already imported, as deciding whether to import it again reads it."""

    pk: int
    checksum: str
    trial_name: str


def _stored_as(trial_name: str, *, after: str = "") -> StoredTrial | None:
    """The trial of this name already imported, if any; read by a statement of its own sent
    in one message after the statement `after` (one without parameters), when given.

    Plain SQL: a Rollout has a hundred columns, and the ORM spent a
    millisecond building this one-row query, asked twice per trial.
    """
    query = f"SELECT id, checksum, trial_name FROM {connection.ops.quote_name(Rollout._meta.db_table)} WHERE trial_name = %s"
    with connection.cursor() as cursor:
        if after:
            # A message of several statements takes no parameters: the name goes in quoted, by psycopg.
            cursor.execute(f"{after}; {connection.ops.compose_sql(query, [trial_name])}")
            cursor.nextset()
        else:
            cursor.execute(query, [trial_name])
        row = cursor.fetchone()
    return StoredTrial(*row) if row else None


def describe(outcome: TrialOutcome, rollout: Rollout, result: str) -> TrialOutcome:
    outcome.outcome = result
    outcome.trial_name = rollout.trial_name
    outcome.rollout_id = rollout.pk
    outcome.task = rollout.task.name
    outcome.model = rollout.model.name
    outcome.harness = str(rollout.harness)
    outcome.status = rollout.status
    outcome.status_reason = rollout.status_reason
    outcome.trajectory = rollout.trajectory_format
    outcome.n_steps = rollout.n_steps
    outcome.n_episodes = rollout.n_episodes
    outcome.n_input_tokens = rollout.n_input_tokens
    outcome.n_cache_tokens = rollout.n_cache_tokens
    outcome.n_output_tokens = rollout.n_output_tokens
    outcome.cost_usd = rollout.cost_usd
    outcome.reward = rollout.reward
    outcome.verifier_fields = rollout.verifier_fields
    outcome.verifier_outputs = rollout.verifier_outputs
    outcome.exception_type = rollout.exception_type
    outcome.n_benchmark_calls = rollout.n_benchmark_calls
    outcome.n_edits = rollout.n_edits
    outcome.warnings = list(rollout.validation_warnings)
    return outcome


# -- Storing ------------------------------------------------------------------


def _store(
    folder: TrialFolder,
    existing: Rollout | StoredTrial | None,
    *,
    version: str | None,
    runner_rollout: bool,
    source: str,
    lookups: dict,
    replace_steps: bool = False,
    meanwhile: Callable[[], None] | None = None,
) -> tuple[Rollout, bool]:
    if runner_rollout and existing is not None:
        task, model, harness = existing.task, existing.model, existing.harness
    else:
        key = ("task", folder.task_name, version)
        if key not in lookups:
            lookups[key] = _match_task(folder.task_name, version)
        task = lookups[key]
        key = ("agent", folder.model_name, folder.model_provider, folder.agent_name, folder.agent_version)
        if key not in lookups:
            lookups[key] = _model_and_harness(folder)
        model, harness = lookups[key]
    trajectory = folder.trajectory
    if trajectory is not None and trajectory.restream is not None and trajectory.subagents:
        _with_text(trajectory)  # _link_subtrajectories reads the main steps' subagent refs
    warnings = list(folder.warnings)
    anchors = analysis_anchors(task, folder, regraded_anchors(existing.pk) if existing is not None else None)
    result = _analyse(trajectory, tasks.task_spec(task, anchors), folder.agent_started_at, warnings)

    with transaction.atomic():
        if runner_rollout:
            _commit_without_waiting()
        else:
            existing = _after_other_imports(folder, existing, force=replace_steps)  # commits without waiting too
        created = existing is None
        if created:
            rollout = Rollout(trial_name=folder.trial_name[:TRIAL_NAME_LENGTH])
            old_group = None
        else:
            rollout = Rollout.objects.select_for_update().get(pk=existing.pk)
            old_group = (rollout.task_id, rollout.model_id, rollout.harness_id)
        # New here (or moved to another entry): the next number of its group, for good, given last.
        numbered = old_group == (task.pk, model.pk, harness.pk)
        rollout.task, rollout.model, rollout.harness = task, model, harness
        _fill_rollout(rollout, folder, result, warnings, source=source, keep_status=runner_rollout)
        rollout.anchors = anchors.as_dict()
        if not created:
            keep_latest_regrade(rollout)
        _classify(rollout, folder, result)
        rollout.save()
        start = 0 if created else None if replace_steps else _appendable_prefix(rollout, folder, result)
        if start is None:
            _delete_steps(rollout)
            start = 0
        search = _SearchIndex(rollout, created=created)
        _store_steps(rollout, folder, result, search, start=start)
        # A new rollout's chunks, stored once, go in the overlapped block as one INSERT: the
        # server updates their GIN index while this process reads on. Otherwise (chunks to
        # replace first) through COPY before it, which pipeline mode refuses.
        chunks_meanwhile = _can_overlap(meanwhile) and search.first_and_only_chunks()
        if not chunks_meanwhile:
            search.store_last_chunks()
        with _overlapped(meanwhile) as overlapping:
            if chunks_meanwhile:
                search.store_last_chunks(copy=False)
            search.store_document()
            if overlapping:
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        index_verifier(rollout)
        # A regrade done since the anchors were read above is the rollout's now: its steps are scored by it.
        rescored = rescored_fields(rollout, anchors.as_dict())
        if rescored:
            rollout.save(update_fields=rescored)
        store_harbor_analysis(rollout, folder)
        if not numbered:
            number_last(rollout)
        last_writes.run_before_commit()  # the boards' generation bump, committed with the rollout
    return rollout, created


@contextlib.contextmanager
def _overlapped(meanwhile: Callable[[], None] | None):
    """Send the block's statements without waiting for them, run `meanwhile`, then wait.

    PostgreSQL's pipeline mode: the block's statements (the rollout's
    document and a new rollout's chunks, their GIN upkeep, the deferred
    foreign-key checks of every row)
    are milliseconds of the server's work, done on another core while this
    process runs `meanwhile` (a bulk import reads its next trial). Their
    errors are raised on leaving, in this transaction. Yields whether it
    overlaps: not without `meanwhile`, not elsewhere than PostgreSQL, not in a
    caller's transaction (it may not want its checks made now).
    """
    if not _can_overlap(meanwhile):
        yield False
        return
    with connection.connection.pipeline():  # connected: in a transaction
        yield True
        meanwhile()


def _can_overlap(meanwhile: Callable[[], None] | None) -> bool:
    """Whether _overlapped's block goes out without waiting (see there)."""
    return meanwhile is not None and connection.vendor == "postgresql" and len(connection.atomic_blocks) == 1


HARBOR_RUBRIC = "harbor analyze"


def store_harbor_analysis(rollout: Rollout, folder: TrialFolder) -> None:
    """The trial's own analysis.json as its Harbor review (a new file replaces the old reading).

    A file that could not be read leaves a failed review saying why (the
    rollout page shows it), unless a good reading is already stored: a
    later bad copy of the file never hides what was read before.
    """
    if folder.analysis is not None and folder.analysis.reading is not None:
        reviews.record_review(rollout, folder.analysis.reading, source="harbor", rubric=HARBOR_RUBRIC, replace=True)
    elif folder.analysis is not None:
        reviews.record_failed_review(rollout, folder.analysis.error, source="harbor", rubric=HARBOR_RUBRIC)
    elif folder.analysis_error:
        reviews.record_failed_review(rollout, folder.analysis_error, source="harbor", rubric=HARBOR_RUBRIC)


def analysis_anchors(task, folder: TrialFolder, regraded: dict | None = None):
    """The anchors a trial's steps are scored against: the task's, or the verifier's own.

    A regraded rollout's are its latest regrade's (`regraded`, from
    grades.regraded_anchors), as its reward is: not the folder's verifier's.
    """
    if regraded:
        return tasks.stored_anchors(task, regraded)
    return tasks.rollout_anchors(task, folder.reward, folder.verifier_fields, folder.verifier_outputs)


class _StoredMeanwhile(Exception):
    """Another import stored this very trial while this one read it: nothing to do."""

    def __init__(self, rollout: Rollout):
        super().__init__(rollout.trial_name)
        self.rollout = rollout


def _after_other_imports(folder: TrialFolder, existing: Rollout | StoredTrial | None, *, force: bool) -> StoredTrial | None:
    """The trial's row as it is once no other import of the same trial is under way.

    Two imports of one folder (two commands, or an upload beside a command)
    would otherwise both find no row and both insert it: the second fails
    on the unique trial name. On PostgreSQL the second waits here for the
    first to commit, then finds its row (SQLite has one writer at a time,
    and this transaction began with the write lock). The statement taking
    the lock also sets _commit_without_waiting's setting: one round trip
    less per import. The row is read in a statement of its own, after the
    lock: one snapshot with the lock would miss the other's commit.
    """
    name = folder.trial_name[:TRIAL_NAME_LENGTH]
    if connection.vendor == "postgresql":
        lock = f"SELECT {COMMIT_WITHOUT_WAITING}, pg_advisory_xact_lock({TRIAL_LOCK}, {zlib.crc32(name.encode()) - 2**31})"
        current = _stored_as(name, after=lock)
    else:
        current = _stored_as(name)
    if current is not None and existing is None and current.checksum == folder.checksum and not force:
        raise _StoredMeanwhile(_rollouts().get(pk=current.pk))
    return current


def _commit_without_waiting() -> None:
    """Let this transaction's commit return before its WAL reaches the disk.

    A crash of the database server can then lose the last fraction of a
    second of imports, never half of one (PostgreSQL's synchronous_commit
    off is atomic and consistent). An import is re-run from its trial folder
    at no cost, and waiting for the flush was a tenth of an import's time.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {COMMIT_WITHOUT_WAITING}")


# SET LOCAL synchronous_commit TO OFF, as an expression that can share a statement.
COMMIT_WITHOUT_WAITING = "set_config('synchronous_commit', 'off', true)"


class _SearchIndex:
    """A rollout's search documents, made a batch of steps at a time as their rows are written.

    Each step's document and new output lines go into its row; the chunks
    of the steps so far are stored after each batch, the rollout's own
    document at the end. Made for every step at once, the documents of a
    20,016-step trajectory weighed a third of its file, all held until the
    last row was written. Every step counts, stored ones too (`skip`): an
    output line belongs to the first step that shows it.
    """

    def __init__(self, rollout: Rollout, *, created: bool):
        self.rollout = rollout
        self.builder = TrajectoryDocuments()
        self.created = created  # a new rollout: no chunk of it is stored yet
        self.chunks_stored = False
        self.pending = False  # steps added since the chunks were last stored

    def skip(self, steps: list[ParsedStep]) -> None:
        """Steps already stored with their chunks: their words count, and neither their documents nor the
        chunks they filled are made again (the next store replaces the open chunk on, not every chunk)."""
        self.builder.count(step_texts(steps))
        self.chunks_stored = True

    def add(self, steps: list[ParsedStep]) -> tuple[list[str], list[str]]:
        """(documents, new output lines) of `steps`, which follow the steps added before."""
        self.pending = True
        return self.builder.add_steps(step_texts(steps))

    def store_chunks(self, *, copy: bool = True) -> None:
        """Store the chunks the steps added since the last call joined (the first call replaces every stored one).

        `copy=False`: in one INSERT (search.chunks.store_chunks), for first_and_only_chunks.
        """
        whole = not self.chunks_stored
        store_chunks(
            self.rollout.pk, self.builder.take_chunks(), whole=whole, new_rollout=whole and self.created, copy=copy
        )
        self.chunks_stored, self.pending = True, False

    def store_last_chunks(self, *, copy: bool = True) -> None:
        """Store the chunks not stored yet: those of the last steps added (of all of them, where none
        were stored), or none stored when there are no steps (a re-import then deletes the old ones)."""
        if self.pending or not self.chunks_stored:
            self.store_chunks(copy=copy)

    def first_and_only_chunks(self) -> bool:
        """Whether store_last_chunks stores a new rollout's first chunks: it then deletes nothing first,
        and needs no answer from the database before the next statement (pipeline mode)."""
        return self.created and not self.chunks_stored

    def store_document(self) -> None:
        """Store the rollout's own document (the words of every step).

        One statement, with nothing to read back (no RETURNING, as
        bulk_create's has), so that it can go out without waiting (_overlapped).
        """
        table = connection.ops.quote_name(RolloutDocument._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (rollout_id, words) VALUES (%s, %s)"
                " ON CONFLICT (rollout_id) DO UPDATE SET words = EXCLUDED.words",
                [self.rollout.pk, self.builder.rollout_words()],
            )


def step_texts(steps: list[ParsedStep]):
    """What search indexes of each step (trajectories.search.document.trajectory_documents)."""
    return (
        (step.message, step.reasoning, [call.arguments for call in step.tool_calls], [o.content for o in step.observations])
        for step in steps
    )


def _classify(rollout: Rollout, folder: TrialFolder, result: RolloutAnalysis) -> None:
    """The failure classification from the steps in hand, before the rollout's one save.

    The same facts as failure_service reads from stored steps. A classifier
    bug must not lose an import: it becomes a warning.
    """
    steps = []
    if folder.trajectory:
        for parsed, analysed in zip(folder.trajectory.steps, result.steps):
            elapsed = _elapsed(parsed, rollout.agent_started_at)
            steps.append(failure_service.step_facts(parsed.step_id, _kinds(analysed.kinds), elapsed, analysed.diff or ""))
    try:
        failure_service.classify_rollout(rollout, steps)
    except Exception as exc:  # noqa: BLE001
        logger.exception("failure classification of %s failed", rollout.trial_name)
        rollout.validation_warnings = [*rollout.validation_warnings, f"failure classification failed: {exc}"[:200]]


def _match_task(task_name: str, version: str | None):
    try:
        return tasks.match_task(task_name, version=version)
    except tasks.TaskNotFound as exc:
        raise IngestError(f"no registered task matches {task_name!r} ({exc})") from exc


def _model_and_harness(folder: TrialFolder):
    if not folder.model_name:
        raise IngestError(f"{folder.path}: no model name (result.json agent_info.model_info.name or config.json agent.model_name)")
    if not folder.agent_name:
        raise IngestError(f"{folder.path}: no agent name (result.json agent_info.name or config.json agent.name)")
    config_agent = folder.config.get("agent") if isinstance(folder.config.get("agent"), dict) else {}
    model = agents.ensure_model(
        folder.model_name,
        provider=folder.model_provider[:100],
        litellm_model=clean_text(config_agent.get("model_name"))[:300],
    )
    harness = agents.ensure_harness(
        folder.agent_name[:200], folder.agent_version[:50], import_path=folder.agent_import_path[:300]
    )
    return model, harness


def _with_text(trajectory: ParsedTrajectory) -> None:
    """A trajectory read without its text (ParsedTrajectory.restream) given all of it, held at once."""
    steps: list[ParsedStep] = []
    trajectory.restream(lambda position, step: steps.append(step))
    trajectory.steps, trajectory.restream = steps, None


# A streamed trajectory's analysis lets go of the text of the steps it is done with every this many steps.
LET_GO_EVERY = 500


def _analyse(trajectory: ParsedTrajectory | None, spec, agent_started_at: datetime | None, warnings: list[str]) -> RolloutAnalysis:
    """The analysis of the main trajectory, or an empty one if analysis fails.

    A bug in the analysis must not lose an import: the steps are stored
    without kinds and the failure is recorded as a warning. A trajectory
    read without its text is analysed as it is read again, holding the
    text of the steps a metric may still read only (RolloutAnalyser.let_go).
    """
    steps = trajectory.steps if trajectory else []
    try:
        if trajectory is not None and trajectory.restream is not None:
            analyser = analysis.RolloutAnalyser(spec, agent_started_at)

            def on_step(position: int, step: ParsedStep) -> None:
                analyser.add([step])
                if position % LET_GO_EVERY == LET_GO_EVERY - 1:
                    analyser.let_go(steps)

            trajectory.restream(on_step)
            result = analyser.result()
        else:
            result = analysis.analyse_rollout(steps, spec, agent_started_at)
        if len(result.steps) != len(steps):
            raise ValueError(f"{len(result.steps)} step analyses for {len(steps)} steps")
        return result
    except TrialFolderError:
        raise  # the file changed under the import: nothing of it is stored
    except Exception as exc:  # noqa: BLE001
        logger.exception("analysis of %s failed", spec.name)
        warnings.append(f"analysis failed: {type(exc).__name__}: {exc}"[:200])
        return RolloutAnalysis(steps=[StepAnalysis(kinds=[], call_kinds=[]) for _ in steps], curve=[])


def _fill_rollout(
    rollout: Rollout, folder: TrialFolder, result: RolloutAnalysis, warnings: list[str], *, source: str, keep_status: bool
) -> None:
    trajectory = folder.trajectory
    final = trajectory.final_metrics if trajectory else {}
    rollout.trial_id = folder.trial_id[:100]
    rollout.job_id = folder.job_id[:100]
    lifecycle.set_imported(rollout, _status(rollout, folder, keep_status=keep_status))
    if rollout.status == RolloutStatus.INCOMPLETE:
        warnings.append(f"incomplete: {statuses.INCOMPLETE_REASON}; left out of the figures")
    if folder.started_at or folder.finished:
        rollout.started_at = folder.started_at
        rollout.finished_at = folder.finished_at
    for phase, (start_field, finish_field) in {
        "environment_setup": ("environment_setup_started_at", "environment_setup_finished_at"),
        "agent_setup": ("agent_setup_started_at", "agent_setup_finished_at"),
        "agent_execution": ("agent_started_at", "agent_finished_at"),
        "verifier": ("verifier_started_at", "verifier_finished_at"),
    }.items():
        timing = folder.phases.get(phase)
        # A live trial has no result.json: keep what the runner recorded.
        if timing and (timing.started_at or folder.finished):
            setattr(rollout, start_field, timing.started_at)
            setattr(rollout, finish_field, timing.finished_at)
    if rollout.agent_started_at is None:
        rollout.agent_started_at = folder.agent_started_at

    cost = folder.cost_usd if folder.cost_usd is not None else final.get("total_cost_usd")
    measured = provenance.Usage(
        n_input_tokens=first_int(folder.n_input_tokens, final.get("total_prompt_tokens")),
        n_cache_tokens=first_int(folder.n_cache_tokens, final.get("total_cached_tokens")),
        n_output_tokens=first_int(folder.n_output_tokens, final.get("total_completion_tokens")),
        cost_usd=cost if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )
    rollout.usage_source = folder.provenance.usage
    rollout.trajectory_source = folder.provenance.trajectory
    set_usage(rollout, measured)
    rollout.n_episodes = folder.n_episodes
    rollout.api_request_times_msec = folder.api_request_times_msec
    rollout.exception_type = folder.exception_type
    rollout.excluded = folder.excluded[:2000]
    rollout.exception_message = folder.exception_message
    rollout.exception_traceback = folder.exception_traceback
    rollout.reward = folder.reward
    rollout.reward_valid = folder.reward_valid
    rollout.verifier_mode = folder.verifier_mode
    rollout.environment = folder.environment
    rollout.task_digest = folder.run_settings.task_digest[:64]
    rollout.harbor_version = folder.run_settings.harbor_version[:50]
    rollout.run_settings = folder.run_settings.as_dict()
    rollout.trajectory_sha256 = folder.trajectory_sha256
    rollout.verifier_fields = folder.verifier_fields
    rollout.verifier_stdout = folder.verifier_stdout
    rollout.verifier_outputs = folder.verifier_outputs
    rollout.score_log = score_log_entries(folder)

    rollout.source_path = source[:1000]
    rollout.checksum = folder.checksum
    rollout.schema_version = trajectory.schema_version if trajectory else ""
    rollout.trajectory_format = folder.trajectory_format
    rollout.session_id = trajectory.session_id[:200] if trajectory else ""
    rollout.final_metrics = final if isinstance(final, dict) else {}
    rollout.validation_warnings = warnings
    rollout.agent_extra = trajectory.agent_extra if trajectory else {}
    rollout.config = folder.config

    rollout.n_steps = len(trajectory.steps) if trajectory else 0
    fill_analysis(rollout, result)


# The Rollout fields fill_analysis sets.
ANALYSIS_SUMMARY_FIELDS = (
    "n_benchmark_calls", "n_edits", "first_benchmark_sec", "last_improvement_sec", "budget_used_fraction",
    "best_metric", "best_score", "curve", "files_changed",
)


def fill_analysis(rollout: Rollout, result: RolloutAnalysis) -> None:
    """The rollout's figures from the analysis of its steps."""
    rollout.n_benchmark_calls = result.n_benchmark_calls
    rollout.n_edits = result.n_edits
    rollout.first_benchmark_sec = result.first_benchmark_sec
    rollout.last_improvement_sec = result.last_improvement_sec
    rollout.budget_used_fraction = result.budget_used_fraction
    rollout.best_metric = result.best_metric
    rollout.best_score = result.best_score
    rollout.curve = [asdict(point) for point in result.curve]
    rollout.files_changed = files_changed(result.files)


# Net diffs kept per rollout: a rewrite of a large data file is no code to read.
FILES_CHANGED_CHARS = 300_000


def files_changed(files: list[FileChange]) -> list[dict[str, Any]]:
    """The rollout's changed files as stored: a diff past the rollout's share is cut, and says so."""
    stored, room = [], FILES_CHANGED_CHARS
    for change in files:
        row = asdict(change)
        if len(change.diff) > room:
            row["diff"] = change.diff[: max(room, 0)].rpartition("\n")[0] + "\n" if room > 0 else ""
            row["diff"] += f"# ... cut: the net diff of {change.path} has {len(change.diff):,} characters\n"
        room -= len(change.diff)
        stored.append(row)
    return stored


def _status(rollout: Rollout, folder: TrialFolder, *, keep_status: bool) -> str:
    """An imported trial's status (trajectories.statuses); a rollout our runner owns keeps its own (evaluations.running.lifecycle sets it)."""
    owned = bool(rollout.pk) and (keep_status or (rollout.campaign_id is not None and rollout.is_active))
    return statuses.imported_status(
        finished=folder.finished, exception_type=folder.exception_type, reward=folder.reward,
        reward_valid=folder.reward_valid, previous=rollout.status if rollout.pk else "", runner_active=owned,
    )


# The Rollout fields set_usage writes.
USAGE_FIELDS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd", "reported_usage")


def set_usage(rollout: Rollout, measured: provenance.Usage) -> None:
    """The rollout's counted and reported usage from what its trial says, by its usage source (trajectories.provenance).

    The one writer of the counted usage fields: an import, and each live tick, go through it.
    """
    counted, reported = provenance.split_usage(rollout.usage_source, measured)
    rollout.n_input_tokens = counted.n_input_tokens
    rollout.n_cache_tokens = counted.n_cache_tokens
    rollout.n_output_tokens = counted.n_output_tokens
    rollout.cost_usd = counted.cost_usd
    rollout.reported_usage = reported


def first_int(*values: Any) -> int | None:
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _delete_steps(rollout: Rollout) -> None:
    """Remove the old rows bottom-up, each table in one plain query.

    Plain SQL: Django's delete of observations (which full texts hang on)
    first loaded every one of them, text and all, as a model: a long
    trajectory's re-import held its old text in memory once more.
    """
    table = {model: connection.ops.quote_name(model._meta.db_table) for model in (ObservationText, Observation, ToolCall, Step, SubTrajectory)}
    steps = f"SELECT id FROM {table[Step]} WHERE rollout_id = %s"
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {table[ObservationText]} WHERE observation_id IN "
            f"(SELECT id FROM {table[Observation]} WHERE step_id IN ({steps}))",
            [rollout.pk],
        )
        cursor.execute(f"DELETE FROM {table[Observation]} WHERE step_id IN ({steps})", [rollout.pk])
        cursor.execute(f"DELETE FROM {table[ToolCall]} WHERE step_id IN ({steps})", [rollout.pk])
        cursor.execute(f"UPDATE {table[SubTrajectory]} SET parent_step_id = NULL WHERE rollout_id = %s", [rollout.pk])
        cursor.execute(f"DELETE FROM {table[Step]} WHERE rollout_id = %s", [rollout.pk])
        cursor.execute(f"DELETE FROM {table[SubTrajectory]} WHERE rollout_id = %s", [rollout.pk])


def _store_steps(rollout: Rollout, folder: TrialFolder, result: RolloutAnalysis, search: _SearchIndex, *, start: int = 0) -> None:
    """Bulk-insert the main trajectory from `start` on, then every subagent trajectory.

    Rows are plain dicts of column values, not model instances: a trial has
    hundreds of them and building Django models only to read their fields
    back for COPY was a good part of an import's time. The main steps'
    search documents are made as their rows are (`search`).
    """
    trajectory = folder.trajectory
    agent_started_at = rollout.agent_started_at
    subtrajectories = _subtrajectories(rollout, folder)
    if subtrajectories:
        SubTrajectory.objects.bulk_create([sub for sub, _ in subtrajectories])

    def main_rows(positions: range, parsed_steps: list[ParsedStep]) -> tuple[list[dict[str, Any]], list[tuple[ParsedStep, StepAnalysis | None]]]:
        rows, parsed_of_rows = [], []
        if not positions:
            return rows, parsed_of_rows  # perhaps no main trajectory at all, only subagents' files
        documents, new_outputs = search.add(parsed_steps)
        for position, parsed, document, new_output in zip(positions, parsed_steps, documents, new_outputs):
            analysed = result.steps[position]
            row = step_row(rollout, None, position, parsed, analysed, agent_started_at)
            row["search_document"], row["new_output"] = document, new_output
            rows.append(row)
            parsed_of_rows.append((parsed, analysed))
        return rows, parsed_of_rows

    n_main = min(len(trajectory.steps), len(result.steps)) if trajectory else 0
    if start:
        search.skip(trajectory.steps[:start])
    if not subtrajectories:
        # Nothing links back to the rows: they are built and written a batch at a time. A trajectory
        # read without its text is read again for it (start is then 0: _appendable_prefix).
        batch: list[ParsedStep] = []

        def write_batch(last: int) -> None:
            insert_steps(*main_rows(range(last - len(batch) + 1, last + 1), batch))
            if last < n_main - 1:
                search.store_chunks()  # the last batch's are the caller's to store (store_last_chunks)
            batch.clear()

        def on_step(position: int, parsed: ParsedStep) -> None:
            if start <= position < n_main:
                batch.append(parsed)
                if len(batch) == STEP_BATCH:
                    write_batch(position)

        if trajectory is not None and trajectory.restream is not None:
            trajectory.restream(on_step)
        else:
            for position in range(start, n_main):
                on_step(position, trajectory.steps[position])
        if batch:
            write_batch(n_main - 1)
        return
    step_rows, parsed_of_row = main_rows(range(start, n_main), trajectory.steps[start:n_main] if trajectory else [])
    for sub, parsed_sub in subtrajectories:
        for position, parsed in enumerate(parsed_sub.steps):
            step_rows.append(step_row(rollout, sub, position, parsed, None, agent_started_at))
            parsed_of_row.append((parsed, None))
    insert_steps(step_rows, parsed_of_row)
    if subtrajectories:
        _link_subtrajectories(subtrajectories, step_rows, parsed_of_row, trajectory)


# Steps whose tool calls and observations are built and written at a time:
# a 20,000-step trajectory's rows all at once weighed a third of its file.
STEP_BATCH = 2_000


def insert_steps(step_rows: list[dict[str, Any]], parsed_of_row: list[tuple[ParsedStep, StepAnalysis | None]]) -> None:
    """Insert steps (their step_row, with search_document) with their tool calls and observations.

    Fills each row's "id". Ids are reserved for all of them at once, then
    rows go in batches of STEP_BATCH steps, each batch's tool calls and
    observations built just before they are written.
    """
    n_calls = sum(len(parsed.tool_calls) for parsed, _ in parsed_of_row)
    n_observations = sum(len(parsed.observations) for parsed, _ in parsed_of_row)
    ids = reserve_ids({Step: len(step_rows), ToolCall: n_calls, Observation: n_observations})
    for row, new_id in zip(step_rows, ids[Step]):
        row["id"] = new_id
    call_ids = iter(ids[ToolCall])
    observation_ids = iter(ids[Observation])
    for first in range(0, len(step_rows), STEP_BATCH):
        batch = slice(first, first + STEP_BATCH)
        _insert_batch(step_rows[batch], parsed_of_row[batch], call_ids, observation_ids)


def _insert_batch(step_rows, parsed_of_row, call_ids, observation_ids) -> None:
    insert_rows(Step, step_rows)

    call_rows: list[dict[str, Any]] = []
    calls_by_step: list[dict[str, dict[str, Any]]] = []
    for row, (parsed, analysed) in zip(step_rows, parsed_of_row):
        by_id: dict[str, dict[str, Any]] = {}
        for index, call in enumerate(parsed.tool_calls):
            call_kinds = analysed.call_kinds[index] if analysed and index < len(analysed.call_kinds) else []
            tool_call = {
                "id": next(call_ids, None),
                "step_id": row["id"],
                "position": index,
                "call_id": call.call_id,
                "function_name": call.function_name,
                "arguments": call.arguments,
                "kinds": _kinds(call_kinds),
            }
            call_rows.append(tool_call)
            if call.call_id:
                by_id.setdefault(call.call_id, tool_call)
        calls_by_step.append(by_id)
    insert_rows(ToolCall, call_rows)

    observation_rows = []
    full_texts: list[tuple[dict[str, Any], str]] = []
    limit = observation_limit()
    for row, (parsed, _), by_id in zip(step_rows, parsed_of_row, calls_by_step):
        for index, observation in enumerate(parsed.observations):
            extra = observation.extra
            if observation.subagent_ref:
                extra = dict(extra, subagent_ref=observation.subagent_ref)
            call = by_id.get(observation.source_call_id) if observation.source_call_id else None
            bounded = observation_text.bound(observation.content, limit)
            observation_row = {
                "id": next(observation_ids, None),
                "step_id": row["id"],
                "tool_call_id": call["id"] if call else None,
                "position": index,
                "source_call_id": observation.source_call_id,
                "content": bounded.kept,
                "cut_at": bounded.cut_at,
                "full_length": bounded.full_length if bounded.cut else None,
                "extra": extra,
            }
            observation_rows.append(observation_row)
            if bounded.cut:
                full_texts.append((observation_row, observation.content))
    insert_rows(Observation, observation_rows)
    if full_texts:
        ObservationText.objects.bulk_create(
            [ObservationText(observation_id=row["id"], data=observation_text.compress(text)) for row, text in full_texts],
            batch_size=10,
        )


def observation_limit() -> int:
    """Characters of an observation kept in its row (0: all of them)."""
    return int(getattr(settings, "AUTOLAB_OBSERVATION_MAX_CHARS", observation_text.DEFAULT_LIMIT))


# Step columns that analysis fills, and may revise when later steps arrive
# (a benchmark's metric is read from the polls that follow it).
ANALYSIS_FIELDS = ("elapsed_sec", "kinds", "metric_value", "metric_unit", "metric_score", "metric_status", "diff")


def _appendable_prefix(rollout: Rollout, folder: TrialFolder, result: RolloutAnalysis) -> int | None:
    """How many stored steps can stay when a growing trajectory is re-imported.

    A live trial's trajectory.json only grows: when every stored step is
    still there unchanged (same ids, times, messages, calls and observation
    sizes), only the new steps are inserted and the stored ones get their
    revised analysis. None means "replace everything" (a re-run trial,
    subagents, anything unexpected).
    """
    trajectory = folder.trajectory
    if trajectory is None or trajectory.subagents or folder.subtrajectory_files or trajectory.restream is not None:
        return None
    stored = list(
        Step.objects.filter(rollout=rollout)
        .order_by("position")
        .values_list("id", "subtrajectory_id", "position", "step_id", "timestamp", "source", "message", *ANALYSIS_FIELDS)
    )
    if not stored or len(stored) > len(trajectory.steps) or any(row[1] is not None for row in stored):
        return None
    calls: dict[int, list[tuple[int, int, str]]] = {}
    for call_id, step_pk, position, kinds in ToolCall.objects.filter(step__rollout=rollout).values_list(
        "id", "step_id", "position", "kinds"
    ):
        calls.setdefault(step_pk, []).append((position, call_id, kinds))
    sizes = {
        row["step_id"]: (row["n"], row["size"] or 0)
        for row in Observation.objects.filter(step__rollout=rollout)
        .values("step_id")
        .annotate(n=models.Count("id"), size=models.Sum(Coalesce("full_length", Length("content"))))
    }
    if [row[2] for row in stored] != list(range(len(stored))):
        return None
    changed_steps: list[Step] = []
    changed_calls: list[ToolCall] = []
    for row, parsed, analysed in zip(stored, trajectory.steps, result.steps):
        pk, _, position, step_id, timestamp, source, message, *old_analysis = row
        if (step_id, timestamp, source, message) != (parsed.step_id, parsed.timestamp, parsed.source, parsed.message):
            return None
        if len(calls.get(pk, [])) != len(parsed.tool_calls):
            return None
        if sizes.get(pk, (0, 0)) != (len(parsed.observations), sum(len(o.content) for o in parsed.observations)):
            return None
        fresh = step_row(rollout, None, position, parsed, analysed, rollout.agent_started_at)
        new_analysis = [fresh[name] for name in ANALYSIS_FIELDS]
        if new_analysis != list(old_analysis):
            changed_steps.append(Step(pk=pk, **{name: fresh[name] for name in ANALYSIS_FIELDS}))
        for call_position, call_pk, kinds in calls.get(pk, []):
            call_kinds = analysed.call_kinds[call_position] if call_position < len(analysed.call_kinds) else []
            if _kinds(call_kinds) != kinds:
                changed_calls.append(ToolCall(pk=call_pk, kinds=_kinds(call_kinds)))
    if changed_steps:
        Step.objects.bulk_update(changed_steps, list(ANALYSIS_FIELDS), batch_size=BATCH_SIZE)
    if changed_calls:
        ToolCall.objects.bulk_update(changed_calls, ["kinds"], batch_size=BATCH_SIZE)
    return len(stored)


def step_row(
    rollout: Rollout,
    sub: SubTrajectory | None,
    position: int,
    parsed: ParsedStep,
    analysed: StepAnalysis | None,
    agent_started_at: datetime | None,
) -> dict[str, Any]:
    """The column values of one Step, for insert_rows."""
    elapsed = _elapsed(parsed, agent_started_at)
    metric = analysed.metric if analysed else None
    return {
        "rollout_id": rollout.pk,
        "subtrajectory_id": sub.pk if sub else None,
        "position": position,
        "step_id": parsed.step_id,
        "timestamp": parsed.timestamp,
        "elapsed_sec": elapsed,
        "source": parsed.source,
        "message": parsed.message,
        "reasoning": parsed.reasoning,
        "model_name": parsed.model_name,
        "prompt_tokens": parsed.prompt_tokens,
        "completion_tokens": parsed.completion_tokens,
        "cached_tokens": parsed.cached_tokens,
        "cost_usd": parsed.cost_usd,
        "extra": parsed.extra,
        "kinds": _kinds(analysed.kinds) if analysed else "",
        "metric_value": metric.value if metric else None,
        "metric_unit": (metric.unit or "")[:50] if metric else "",
        "metric_score": metric.score if metric else None,
        "metric_status": (metric.status or "")[:20] if metric else "",
        "diff": (analysed.diff or "") if analysed else "",
        "repeats": analysed.repeats if analysed else False,
    }


def _elapsed(parsed: ParsedStep, agent_started_at: datetime | None) -> float | None:
    if parsed.timestamp and agent_started_at:
        return (parsed.timestamp - agent_started_at).total_seconds()
    return None


def _kinds(kinds: list[str]) -> str:
    """" benchmark edit ": spaces around every kind, so `contains=" edit "` works."""
    if not kinds:
        return ""
    text = " " + " ".join(dict.fromkeys(k for k in kinds if k)) + " "
    return text if len(text) <= KINDS_LENGTH else text[: text.rfind(" ", 0, KINDS_LENGTH) + 1]


def _subtrajectories(rollout: Rollout, folder: TrialFolder) -> list[tuple[SubTrajectory, ParsedTrajectory]]:
    """Unsaved SubTrajectory rows: summarisation files, then embedded subagents."""
    found: list[tuple[str, ParsedTrajectory]] = sorted(folder.subtrajectory_files.items(), key=_run_order)
    pending = [(index, sub) for index, sub in enumerate(folder.trajectory.subagents if folder.trajectory else [])]
    while pending:
        index, sub = pending.pop(0)
        found.append((sub.trajectory_id or sub.session_id or f"subagent-{index + 1}", sub))
        pending.extend((len(found) + offset, nested) for offset, nested in enumerate(sub.subagents))
    rows = []
    for name, sub in found:
        raw = {
            "schema_version": sub.schema_version,
            "trajectory_id": sub.trajectory_id,
            "agent_version": sub.agent_version,
            "model_name": sub.model_name,
            "agent_extra": sub.agent_extra,
            "final_metrics": sub.final_metrics,
        }
        if sub.warnings:
            raw["warnings"] = sub.warnings
        rows.append(
            (
                SubTrajectory(
                    rollout=rollout,
                    name=name[:300],
                    session_id=sub.session_id[:200],
                    agent_name=sub.agent_name[:200],
                    raw=raw,
                ),
                sub,
            )
        )
    return rows


# terminus-2 runs each summarisation's subagents in this order.
_SUMMARISATION = re.compile(r"trajectory\.summarization-(\d+)-(summary|questions|answers)\.json")
_SUMMARISATION_ROLES = {"summary": 0, "questions": 1, "answers": 2}


def _run_order(item: tuple[str, ParsedTrajectory]) -> tuple:
    """Subagent files in the order they ran (their pages list them so), not by file name.

    Their first own step's time (copied context carries older times), then
    terminus-2's summarisation number and role, then the name.
    """
    name, sub = item
    first = next((s.timestamp for s in sub.steps if s.timestamp and not s.extra.get("is_copied_context")), None)
    match = _SUMMARISATION.fullmatch(name)
    rank = (int(match.group(1)), _SUMMARISATION_ROLES[match.group(2)]) if match else (0, 0)
    return (first is None, first or _EARLIEST, rank, name)


def _link_subtrajectories(
    subtrajectories: list[tuple[SubTrajectory, ParsedTrajectory]],
    step_rows: list[dict[str, Any]],
    parsed_of_row: list[tuple[ParsedStep, StepAnalysis | None]],
    trajectory: ParsedTrajectory | None,
) -> None:
    """Point each subtrajectory at the step that spawned it.

    The spawning step is the one whose observation carries a subagent ref
    naming it (by trajectory_id, file name or session id); failing that, the
    last main step before the subtrajectory's first step.
    """
    spawner: dict[str, dict[str, Any]] = {}
    for row, (parsed, _) in zip(step_rows, parsed_of_row):
        for observation in parsed.observations:
            refs = observation.extra.get("subagent_refs") or ([observation.subagent_ref] if observation.subagent_ref else [])
            for ref in refs:
                if not isinstance(ref, dict):
                    continue
                for key in ("trajectory_id", "trajectory_path", "session_id"):
                    value = ref.get(key)
                    if isinstance(value, str) and value:
                        spawner.setdefault(value.rsplit("/", 1)[-1], row)
    main_rows = [row for row in step_rows if row["subtrajectory_id"] is None and row["timestamp"]]
    changed = []
    for sub, parsed_sub in subtrajectories:
        parent = None
        for key in (sub.name, parsed_sub.trajectory_id, parsed_sub.session_id):
            if key and key in spawner:
                parent = spawner[key]
                break
        if parent is None:
            first = next((s.timestamp for s in parsed_sub.steps if s.timestamp), None)
            if first is not None:
                before = [row for row in main_rows if row["timestamp"] <= first]
                parent = before[-1] if before else None
        if parent is not None and parent.get("id"):
            sub.parent_step_id = parent["id"]
            changed.append(sub)
    if changed:
        SubTrajectory.objects.bulk_update(changed, ["parent_step"])
