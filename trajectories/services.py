"""Public API of the trajectories app for other apps, commands and views.

- import_path: import a trial folder, a Harbor job folder, a folder of jobs,
  or an archive of any of these; one transaction per trial. An Inspect AI
  log (.eval, .json) goes to trajectories.storing.inspect_import: one per log.
- import_trial_dir: import (or re-import) one trial folder, also while the
  trial is still running (the runner calls it after every episode).
- record_provenance: our runner's record, in the trial folder, of where the
  trial's usage and steps come from (trajectories.provenance: the host, the
  agent's sandbox, none), which the import reads.
- store_trial_files: copy a trial folder's files to the shared artifact
  storage (trajectories.storing.artifacts), where every page reads them.
- exception_family: what kind of fault a trial's exception is (the runner's
  retry rule and the failure classifier read the same table).
- anchors_in_use: the anchors a task's verifier scored its rollouts with.
- rollout_metric: the metric a rollout's verifier scored (tasks.anchors).
- effective_cause, cause_source, with_effective_cause, failed_rollouts, flag_evidence,
  BEHAVIOUR_FLAGS, SEALED_BELOW_VISIBLE: a rollout's failure cause (a staff label's first) and
  the failures list (trajectories.failures).
- search_words, store_step_chunks: the search document of some texts, and
  storing a new rollout's chunks (StepChunk rows) from its step documents
  (for rows made without an import, such as generate_synthetic's).
- record_review, record_failed_review, existing_review, Reading, Check,
  ReadingError: a rollout's reading against a rubric (trajectories.reviews,
  the one writer of Review rows); with_reviews, review_records: them read
  back as plain data (the API's `reviews`).
- job_summary, job_review: rollouts summed up as Harbor's job view says it
  ("36/36 finished, 2 errors, 14.5 M tokens, $212, 71 h", a reward
  histogram), and Harbor's reading of a whole job (trajectories.jobs).
- start_regrade, mark_regrade_running, regrade_heartbeat, record_regrade,
  record_failed_regrade, fail_lost_regrades, grade_history,
  read_verification, restore_trial_files: a rollout's grade
  history and the reward columns it decides (trajectories.grades, their one
  writer after the run), the verdict in a verifier's folder, and a rollout's
  recorded files given back from the artifact storage (for a regrade),
  and a small stored JSON file (stored_json).
- analyze_rollouts, send_analysis, judges: our own LLM judge's reading of
  rollouts (trajectories.judge), run by a Celery worker for the staff's button.
- read_submitted_trials, unpacked_archive, hold_back, digest_hex: a team's
  submitted job read for its checks, its rollouts held back or released, and
  a task digest ("sha256:<hex>" or hex) as the lock reader keeps it
  (trajectories.reading.harbor_lock, the one normaliser of digests).
- change_status, create_queued, note_event, set_imported, TransitionError:
  a rollout's status, written only by trajectories.lifecycle (our runner
  asks through evaluations.running.lifecycle); settle_cause: its outcome
  and not-the-agent's flag once a cause stands (trajectories.verdict decides).
"""
from __future__ import annotations

import functools
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from autolab_site.safe_files import write_file
from tasks.services import stored_anchors

from trajectories import provenance
from trajectories.explorer import rollout_metric

from trajectories.storing import artifacts, bulk, job_analysis, uploads
from trajectories.reading import native_formats
from trajectories.reading.harbor_lock import digest_hex
from trajectories.storing.archives import ArchiveError, is_archive, unpacked
from trajectories.failures.service import (
    cause_source, classify_and_store, effective_cause, failed_rollouts, flag_evidence, with_effective_cause,
)
from trajectories.failures.rules import CAUSES, ENDED_BY_THE_AGENT, FLAGS as BEHAVIOUR_FLAGS, SEALED_BELOW_VISIBLE, exception_family
from trajectories.search.chunks import store_chunks
from trajectories.search.document import document as search_words, stored_chunks
from trajectories.search.texts import index_log
from trajectories.storing.inspect_import import import_inspect_log
from trajectories.storing.live import LiveImport
from trajectories.reading.inspect_log import is_inspect_log
from trajectories.storing.ingest import (
    CREATED, FAILED, OUTCOMES, UNCHANGED, UPDATED, ReadAhead, TrialOutcome, ingest_trial_dir, read_ahead,
)
from trajectories.storing.numbering import next_index as next_rollout_index
from trajectories.models import Rollout
from trajectories.reading.trial_folder import find_trial_dirs
from trajectories.reading.review_data import Check, Reading, ReadingError
from trajectories.jobs import job_review, summary_of as job_summary
from trajectories.reviews import existing_review, record_failed_review, record_review, review_records, with_reviews
from trajectories.reviews import existing_review, record_failed_review, record_review
from trajectories.grades import beat as regrade_heartbeat, fail_lost as fail_lost_regrades
from trajectories.grades import history as grade_history, mark_running as mark_regrade_running
from trajectories.grades import record_failed_regrade, record_regrade, start_regrade
from trajectories.reading.trial_folder import Verification, read_verification
from trajectories.lifecycle import (
    TransitionError, change as change_status, create_queued, note as note_event, set_imported, settle_cause,
)

logger = logging.getLogger(__name__)

ProgressCallback = Callable[["ImportReport", TrialOutcome], None]


@dataclass
class ImportReport:
    """Per-trial outcomes of one import, plus errors that concern no trial."""

    source: str
    total: int = 0  # trial folders found
    outcomes: list[TrialOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False
    started: float = field(default_factory=time.monotonic)

    @property
    def counts(self) -> dict[str, int]:
        counts = {outcome: 0 for outcome in OUTCOMES}
        for outcome in self.outcomes:
            counts[outcome.outcome] += 1
        return counts

    @property
    def ok(self) -> bool:
        return not self.errors and not self.interrupted and self.counts[FAILED] == 0

    @property
    def done(self) -> int:
        return len(self.outcomes)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def summary(self) -> str:
        """One line: "2 trials: 2 created, 0 updated, 0 unchanged, 0 failed"."""
        counts = ", ".join(f"{n} {outcome}" for outcome, n in self.counts.items())
        line = f"{self.done} trials: {counts}"
        if self.errors:
            line += f"; errors: {'; '.join(self.errors)}"
        return line

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "total": self.total,
            "done": self.done,
            "counts": self.counts,
            "interrupted": self.interrupted,
            "errors": self.errors,
            "trials": [outcome.as_dict() for outcome in self.outcomes],
        }


def import_path(
    path: Path | str,
    *,
    version: str | None = None,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
    jobs: int | None = 1,
    force: bool = False,
    store_files: bool = False,
) -> ImportReport:
    """Import every trial found at `path`; see the module docstring.

    Trials are imported each in its own transaction, so a bad trial is
    reported and the others still import. `should_stop` is checked between
    trials; a KeyboardInterrupt during a trial rolls that trial back and
    ends the import. Either way the report says what was done, and a re-run
    continues: trials already imported come back "unchanged". `jobs` > 1
    imports on that many processes (None: one per CPU, up to 8) on PostgreSQL; see
    trajectories.storing.bulk. `force` imports unchanged trials again (their rows
    anew), for an upgrade whose analysis or search rules changed. `store_files`
    copies each imported trial's folder to the artifact storage (the rollout
    page's Artifacts, Log and Verifier tabs read it), as the runner does.
    """
    path = Path(path)
    report = ImportReport(source=str(path))

    if path.is_file() and is_inspect_log(path):
        # An Inspect AI log is not an archive of trials: each of its samples is a rollout.
        report.total = 1
        for outcome in import_inspect_log(path, version=version):
            report.outcomes.append(outcome)
            if on_progress:
                on_progress(report, outcome)
    elif is_archive(path) and path.is_file():
        try:
            with unpacked(path, parent=settings.UPLOADS_DIR) as folder:
                _import_folder(
                    folder, report, version, _storing_files(on_progress, folder, path.name) if store_files else on_progress,
                    should_stop, jobs, label=path.name, force=force,
                )
        except ArchiveError as exc:
            report.errors.append(str(exc))
    elif path.is_dir():
        _import_folder(
            path, report, version, _storing_files(on_progress, path, "") if store_files else on_progress, should_stop, jobs,
            force=force,
        )
    elif path.exists():
        report.errors.append(
            native_formats.single_file_error(path) or f"{path}: neither a folder nor an archive (.tar.gz, .tgz, .tar, .zip)"
        )
    else:
        report.errors.append(f"{path}: no such file or folder")
    return report


def record_provenance(trial_dir: Path | str, record: provenance.Provenance) -> None:
    """Write where the trial's usage and steps come from at its folder's root (trajectories.provenance), for its import.

    Our runner's: the root of a trial folder is where no sandbox writes.
    """
    write_file(trial_dir, provenance.FILE_NAME, record.to_json())


def import_trial_dir(
    path: Path | str, *, version: str | None = None, rollout: Rollout | None = None, live: bool = False
) -> TrialOutcome:
    """Import one trial folder; `rollout` is the runner's row to update in place."""
    return ingest_trial_dir(Path(path), version=version, rollout=rollout, live=live)


def live_import(trial_dir: Path | str, rollout_id: int) -> LiveImport:
    """The importer of a running trial our runner owns: call its tick() whenever trajectory.json changed."""
    return LiveImport(Path(trial_dir), rollout_id)


def _import_folder(
    folder: Path,
    report: ImportReport,
    version: str | None,
    on_progress: ProgressCallback | None,
    should_stop: Callable[[], bool] | None,
    jobs: int | None,
    label: str = "",
    force: bool = False,
) -> None:
    trial_dirs = find_trial_dirs(folder)
    report.total = len(trial_dirs)
    if not trial_dirs:
        report.errors.append(f"{label or folder}: no Harbor trial folders found")
        return
    _import_trials(trial_dirs, folder, report, version, on_progress, should_stop, jobs, label, force)
    if report.interrupted:
        return
    # A job folder's analysis.json speaks of trials imported above (and of unchanged ones): applied after them.
    labels = {_source_label(label, folder, trial_dir) or str(trial_dir): trial_dir for trial_dir in trial_dirs}
    imported = [
        job_analysis.ImportedTrial(labels[outcome.path], outcome.rollout_id, outcome.trial_name)
        for outcome in report.outcomes if outcome.path in labels
    ]
    report.errors.extend(job_analysis.apply_job_analyses(folder, imported))


def _import_trials(
    trial_dirs: list[Path],
    folder: Path,
    report: ImportReport,
    version: str | None,
    on_progress: ProgressCallback | None,
    should_stop: Callable[[], bool] | None,
    jobs: int | None,
    label: str,
    force: bool,
) -> None:
    lookups: dict = {}
    jobs = min(bulk.usable_jobs(jobs), len(trial_dirs))
    if jobs > 1:
        trials = [(trial_dir, _source_label(label, folder, trial_dir)) for trial_dir in trial_dirs]

        def on_outcome(outcome: TrialOutcome) -> None:
            report.outcomes.append(outcome)
            if on_progress is not None:
                on_progress(report, outcome)

        outcomes, report.interrupted = bulk.import_in_parallel(trials, jobs, version, on_outcome, should_stop, force=force)
        report.outcomes[:] = outcomes  # in folder order, as a serial import lists them
        return
    ahead: dict[Path, ReadAhead | None] = {}
    for index, trial_dir in enumerate(trial_dirs):
        if should_stop is not None and should_stop():
            report.interrupted = True
            return
        following = trial_dirs[index + 1] if index + 1 < len(trial_dirs) else None
        read = ahead.pop(trial_dir, None)
        try:
            outcome = ingest_trial_dir(
                trial_dir, version=version, source_label=_source_label(label, folder, trial_dir), lookups=lookups,
                force=force, snapshot=read.snapshot if read else None, folder=read.folder if read else None,
                # The next trial is read while PostgreSQL stores this one.
                meanwhile=(lambda path=following: ahead.__setitem__(path, read_ahead(path))) if following else None,
            )
        except KeyboardInterrupt:
            report.interrupted = True
            return
        report.outcomes.append(outcome)
        if on_progress is not None:
            on_progress(report, outcome)


def _storing_files(on_progress: ProgressCallback | None, folder: Path, label: str) -> ProgressCallback:
    """A progress callback that first copies the trial's folder to the artifact storage.

    It runs as each trial's outcome comes in, while the folder (an archive's
    extraction too) still exists; files already stored with the same size
    are not sent again, so an unchanged trial costs a listing.
    """

    def callback(report: ImportReport, outcome: TrialOutcome) -> None:
        # An archive's trials are named "archive.tar.gz:job/trial" (_source_label), inside its extraction.
        prefix = f"{label}:"
        trial_dir = folder / outcome.path[len(prefix):] if label and outcome.path.startswith(prefix) else Path(outcome.path)
        if outcome.outcome != FAILED and outcome.rollout_id is not None and trial_dir.is_dir():
            rollout = Rollout.objects.filter(pk=outcome.rollout_id).only("pk", "trial_name", "artifacts").first()
            if rollout is not None:
                try:
                    _store_files(rollout, trial_dir)
                except OSError as error:
                    outcome.warnings.append(f"its files were not copied to the artifact storage: {error}")
        if on_progress is not None:
            on_progress(report, outcome)

    return callback


def _source_label(label: str, folder: Path, trial_dir: Path) -> str:
    """"archive.tar.gz:job/trial" for a trial from an unpacked archive; "" for a folder on disk."""
    return f"{label}:{trial_dir.relative_to(folder).as_posix()}" if label else ""


def sweep_uploads(*, enqueue: bool = True) -> list[str]:
    """Remove what ended or killed imports left in the uploads folder (the reaper calls this); the paths removed.

    An import removes its extraction folder when it ends, but not when it
    is killed: those of processes gone from this host are removed here,
    with the stored archives of uploads that ended; uploads whose worker
    died are failed (trajectories.storing.uploads).
    """
    return uploads.sweep(enqueue=enqueue)


def run_upload(job_id: int) -> str:
    """Import an uploaded archive's job (a Celery worker runs this); its final status."""
    # The archive and its extraction are removed when the import ends: its files are stored now or never.
    return uploads.run(job_id, functools.partial(import_path, store_files=True))


def judges():
    """The models staff may choose as a judge (AgentModel.is_judge), by name."""
    from agents.models import AgentModel

    return AgentModel.objects.filter(is_judge=True).exclude(litellm_model="").order_by("name")


def analyze_rollouts(
    rollout_ids: list[int], *, judge: str, budget: int, replace: bool = False, requested_by_id: int | None = None,
) -> dict[str, int | str]:
    """Read rollouts with the judge (a worker runs this for the staff's button); counts per state."""
    from django.contrib.auth import get_user_model

    from trajectories import judge as judging
    from trajectories.analysis.judge_rubric import RubricError

    user = get_user_model().objects.filter(pk=requested_by_id).first() if requested_by_id else None
    try:
        results = judging.analyze_rollouts(rollout_ids, judge=judge, budget=budget, replace=replace, requested_by=user)
    except (judging.JudgeError, RubricError) as exc:
        # The judge was removed (or unmarked) between the click and the worker: nothing to read with.
        logger.warning("analysis of %d rollouts not run: %s", len(rollout_ids), exc)
        return {"error": str(exc)}
    counts = Counter(result.state for result in results)
    return {state: counts[state] for state in (judging.DONE, judging.CACHED, judging.FAILED)}


def send_analysis(rollout_ids: list[int], *, judge: str, budget: int, replace: bool, requested_by) -> bool:
    """Queue the reading of `rollout_ids` for a worker (queue AUTOLAB_JUDGE_QUEUE); False when the broker is down."""
    from autolab_site.celery import app

    task = "trajectories.analyze_rollouts"
    if task not in app.tasks:
        app.loader.import_default_modules()  # a web process has not run Celery's autodiscovery
    try:
        app.signature(task, args=[list(rollout_ids), judge, budget, replace, getattr(requested_by, "pk", None)]).apply_async(
            queue=getattr(settings, "AUTOLAB_JUDGE_QUEUE", "cpu"), retry=False,
        )
    except Exception:  # noqa: BLE001  (kombu's errors for an unreachable broker vary by transport)
        return False
    return True


def classify(rollout: Rollout) -> str:
    """Classify a rollout from what is stored (outcome, cause, evidence); its cause."""
    return classify_and_store(rollout).cause


def store_log_tail(rollout: Rollout, relative: str, data: bytes, size: int) -> None:
    """A running trial's log tail, in the shared artifact storage for its page."""
    artifacts.store_tail(rollout, relative, data, size)


def store_trial_files(rollout: Rollout, folder: Path, relatives: list[str] | None = None):
    """The trial folder's files (or those named) into the shared artifact storage; the rollout's file list."""
    return _store_files(rollout, Path(folder), relatives)


def _store_files(rollout: Rollout, folder: Path, relatives: list[str] | None = None):
    """artifacts.store_files, then the stored trial log indexed for search (search.texts)."""
    stored = artifacts.store_files(rollout, folder, relatives)
    index_log(rollout)
    return stored


def restore_trial_files(rollout: Rollout, folder: Path, wanted: Callable[[str], bool]) -> artifacts.Restored:
    """The rollout's stored trial files that `wanted` selects, written back into `folder` (cut files left out, said)."""
    return artifacts.restore_files(rollout, Path(folder), wanted)


# What a trial folder must hold whole for it to be analysed again.
NEEDED_TO_REANALYSE = ("config.json", "agent/trajectory.json")


def reanalyse_stored(rollout: Rollout) -> TrialOutcome | str:
    """Import a rollout again from its files in the artifact storage, every row anew, keeping its id.

    `import_trials --force` without its folder: after an upgrade whose analysis
    changed (step kinds, metrics, the best-so-far curve and where its points
    lie), for rollouts our runner ran (their folder is the storage's copy) and
    those imported with `--store-files`. A rollout our runner owns keeps its
    status (as its own import did). A string says why it was not: running,
    no stored files, or its trajectory stored cut short.
    """
    import tempfile

    if rollout.is_active:
        return "still running"
    stored = {entry.get("path") for entry in rollout.artifacts or [] if isinstance(entry, dict)}
    if "agent/trajectory.json" not in stored:
        return "no trajectory in the artifact storage: import its trial folder again with import_trials --force"
    with tempfile.TemporaryDirectory(prefix="autolab-reanalyse-") as tmp:
        folder = Path(tmp) / "trial"
        restored = restore_trial_files(rollout, folder, lambda relative: True)
        broken = [path for path in (*restored.cut, *restored.missing) if path in NEEDED_TO_REANALYSE]
        if broken:
            return f"{', '.join(broken)} not whole in the artifact storage"
        return ingest_trial_dir(
            folder, version=rollout.task.version.name, rollout=rollout if rollout.campaign_id else None, force=True,
            source_label=rollout.source_path or f"artifact storage: {rollout.trial_name}",
        )


def stored_json(rollout: Rollout, relative: str):
    """A small JSON file among the rollout's stored trial files (its artifact manifest), or None."""
    return artifacts.stored_json(rollout, relative)


def store_step_chunks(rollout_id: int, documents: list[str]) -> None:
    """Store a new rollout's chunks from its main steps' search documents, in order (positions 0, 1, ...)."""
    store_chunks(rollout_id, stored_chunks(documents), whole=True, new_rollout=True)


__all__ = [
    "CREATED",
    "FAILED",
    "UNCHANGED",
    "UPDATED",
    "ArchiveError",
    "analyze_rollouts",
    "judges",
    "send_analysis",
    "BEHAVIOUR_FLAGS",
    "ImportReport",
    "TransitionError",
    "TrialOutcome",
    "cause_source",
    "change_status",
    "create_queued",
    "note_event",
    "set_imported",
    "settle_cause",
    "import_path",
    "classify",
    "effective_cause",
    "exception_family",
    "failed_rollouts",
    "flag_evidence",
    "SEALED_BELOW_VISIBLE",
    "import_trial_dir",
    "store_log_tail",
    "store_trial_files",
    "is_archive",
    "next_rollout_index",
    "sweep_uploads",
    "run_upload",
    "search_words",
    "store_step_chunks",
    "with_effective_cause",
    "record_review",
    "record_failed_review",
    "existing_review",
    "review_records",
    "rollout_metric",
    "with_reviews",
    "job_summary",
    "job_review",
    "Verification",
    "grade_history",
    "mark_regrade_running",
    "regrade_heartbeat",
    "fail_lost_regrades",
    "read_verification",
    "record_failed_regrade",
    "record_regrade",
    "restore_trial_files",
    "reanalyse_stored",
    "start_regrade",
    "stored_json",
]


@dataclass
class AnchorsInUse:
    """One set of anchors a task's rollouts were scored with, and how many."""

    anchors: Any  # tasks.anchors.Anchors
    n: int


def anchors_in_use(task) -> list[AnchorsInUse]:
    """The anchors of a task's current (not superseded) rollouts, most used first.

    Reproduced anchors come before unchecked and mismatched ones with the
    same count: they are what the verifier demonstrably used.
    """
    groups: Counter = Counter()
    samples = {}
    for stored in Rollout.objects.filter(task=task, superseded=False).values_list("anchors", flat=True):
        anchors = stored_anchors(task, stored)
        key = (anchors.status, anchors.baseline, anchors.reference, anchors.baseline_sources, anchors.reference_sources)
        groups[key] += 1
        samples.setdefault(key, anchors)
    order = {"reproduced": 0, "unchecked": 1, "mismatch": 2}
    keys = sorted(groups, key=lambda k: (-groups[k], order.get(k[0], 3)))
    return [AnchorsInUse(samples[k], groups[k]) for k in keys]


def ended_by_the_agent(rollout: Rollout) -> bool:
    """The rollout's cause says its agent's code ended its own sandbox or its grading (counted, never retried)."""
    return rollout.failure_cause in ENDED_BY_THE_AGENT


def cause_label(cause: str) -> str:
    """A failure cause as the pages name it ("Sandbox ended by the agent")."""
    return CAUSES.get(cause, cause)


# -- a team's submission (submissions.services): its trials read, held back, released -----------------

@dataclass
class SubmittedTrial:
    """One trial folder of a submitted job, read (or why it could not be): what the submission checks judge."""

    path: Path
    folder: Any = None  # trajectories.reading.trial_folder.TrialFolder; None when unreadable
    error: str = ""


def read_submitted_trials(root: Path | str) -> list[SubmittedTrial]:
    """Every trial folder under `root` read as an import reads it, storing nothing."""
    from trajectories.reading.trial_folder import TrialFolderError, read_trial_folder

    trials = []
    for trial_dir in find_trial_dirs(Path(root)):
        try:
            trials.append(SubmittedTrial(trial_dir, read_trial_folder(trial_dir)))
        except (TrialFolderError, OSError, ValueError) as exc:
            trials.append(SubmittedTrial(trial_dir, None, str(exc)))
    return trials


def unpacked_archive(archive: Path | str):
    """A context manager: the archive's contents in a temporary folder, unpacked safely (ArchiveError if not)."""
    return unpacked(archive, parent=settings.UPLOADS_DIR)


ARCHIVE_ERROR = ArchiveError


def hold_back(rollout_ids: list[int], held: bool) -> int:
    """Hold rollouts back from every board (a submission under review), or release them; how many changed.

    Saved one by one, so that the boards' invalidation sees each change.
    """
    changed = 0
    for rollout in Rollout.objects.filter(pk__in=rollout_ids).exclude(held_back=held):
        rollout.held_back = held
        rollout.save(update_fields=["held_back"])
        changed += 1
    return changed
