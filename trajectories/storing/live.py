"""The live import of a trial our runner is running: each tick stores the steps that are new, and only those.

The runner's watcher calls `LiveImport.tick` whenever trajectory.json
changed. The first tick imports the trial as any import does (ingest) and
keeps what that import knew: where the file's steps end
(GrowingTrajectory), the analysis so far (RolloutAnalyser) and the search
words so far (TrajectoryDocuments). Later ticks decode, analyse, index and
insert the new steps, revise the few stored steps whose benchmark result a
new poll printed, and update the rollout's figures: their cost grows with
the new steps, not with the rollout (a twelve-hour rollout has thousands).

Anything unexpected (the file rewritten rather than grown, subagents, step
ids that are not 1, 2, 3, ..., another writer of the rollout's rows) makes
the next tick import the trial in full again, as before; so does the
runner's final import once result.json is written, which validates the
whole trajectory and classifies the outcome.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db import transaction

from tasks import services as tasks
from trajectories import provenance, statuses
from trajectories.analysis.rollout import RolloutAnalyser
from trajectories.models import Rollout, RolloutDocument, Step
from trajectories.reading.atif import parse_steps
from autolab_site.masking import mask_secrets
from trajectories.reading.json_data import clean_json
from trajectories.reading.masked import mask_steps
from trajectories.reading.growing_trajectory import GrowingTrajectory, NotYet
from trajectories.reading.trial_folder import (
    TrialFolder, is_subtrajectory_file, read_trial_folder, snapshot_folder,
)
from trajectories.search.chunks import store_chunks
from trajectories.search.document import TrajectoryDocuments
from trajectories.storing import ingest

logger = logging.getLogger(__name__)

TRAJECTORY = "agent/trajectory.json"
# Step fields a new poll can revise on a stored benchmark step.
METRIC_FIELDS = ("metric_value", "metric_unit", "metric_score", "metric_status")
# Warnings kept on a live rollout (the final import replaces them all).
MAX_WARNINGS = 50


@dataclass
class _Known:
    """What the live import knows of the stored rollout between ticks."""

    file: GrowingTrajectory
    analyser: RolloutAnalyser
    documents: TrajectoryDocuments
    words: str  # the rollout's search words as stored
    agent_started_at: datetime | None  # the stored rollout's, which its steps' elapsed times count from


class _NoLongerLive(Exception):
    def __init__(self, rollout: Rollout):
        super().__init__(f"rollout {rollout.pk} is {rollout.status}: no longer live")


class LiveImport:
    """The import of one running trial, tick after tick (see the module docstring)."""

    def __init__(self, trial_dir: Path, rollout_id: int):
        self.trial_dir = Path(trial_dir)
        self.rollout_id = rollout_id
        self._known: _Known | None = None
        self._not_yet_size: int | None = None
        self.full_imports = 0

    def tick(self) -> ingest.TrialOutcome:
        """Store what trajectory.json gained; an outcome with an error means "try again on the next tick"."""
        outcome = ingest.TrialOutcome(path=str(self.trial_dir))
        if self._known is None:
            return self._import_in_full()
        try:
            raw = (self.trial_dir / TRAJECTORY).read_bytes()
        except OSError as exc:
            outcome.error = f"{TRAJECTORY}: {exc.strerror or exc}"
            return outcome
        try:
            growth = self._known.file.read(raw)
        except NotYet as exc:
            # Caught while being written: read again next tick; twice the same, it is damaged.
            if self._not_yet_size != len(raw):
                self._not_yet_size = len(raw)
                outcome.error = f"{TRAJECTORY}: {exc}"
                return outcome
            growth = None
        self._not_yet_size = None
        if growth is None or "subagent_trajectories" in growth.tail or self._has_subtrajectory_files():
            return self._import_in_full()
        first = self._known.file.n_steps - len(growth.steps)
        warnings: list[str] = []
        parsed = parse_steps(growth.steps, first_position=first, warnings=warnings)
        if parsed is None or any(o.subagent_ref for step in parsed for o in step.observations):
            return self._import_in_full()
        mask_steps(parsed)  # as every reader of a trial does (reading.masked)
        try:
            stored = self._store(parsed, first, growth.tail, warnings)
        except _NoLongerLive as exc:
            self._known = None
            outcome.error = str(exc)
            return outcome
        except BaseException:
            self._known = None  # the analysis went on without the rows: start again from the database
            raise
        if stored is None:
            return self._import_in_full()
        return ingest.describe(outcome, stored, ingest.UPDATED if parsed else ingest.UNCHANGED)

    def _has_subtrajectory_files(self) -> bool:
        try:
            return any(map(is_subtrajectory_file, os.listdir(self.trial_dir / "agent")))
        except OSError:
            return False

    def _import_in_full(self) -> ingest.TrialOutcome:
        """An import of the whole trial; then the state its next ticks start from, when they can."""
        self._known = None
        self.full_imports += 1
        rollout = Rollout.objects.select_related("task").get(pk=self.rollout_id)
        outcome = ingest.TrialOutcome(path=str(self.trial_dir))
        if rollout.status not in statuses.ACTIVE:
            outcome.error = str(_NoLongerLive(rollout))
            return outcome
        try:
            snapshot = snapshot_folder(self.trial_dir)
        except OSError as exc:
            outcome.error = f"{self.trial_dir}: {exc.strerror or exc}"
            return outcome
        try:
            # Read once: the import stores it, and the ticks after continue from it.
            folder = read_trial_folder(self.trial_dir, live=True, snapshot=snapshot)
        except Exception:  # noqa: BLE001  (the import reads it again and reports what is wrong)
            folder = None
        outcome = ingest.ingest_trial_dir(self.trial_dir, rollout=rollout, live=True, snapshot=snapshot, folder=folder)
        raw = snapshot.files.get(TRAJECTORY)
        if outcome.error or raw is None or folder is None:
            return outcome
        try:
            self._known = self._known_after(rollout, folder, raw)
        except Exception:  # noqa: BLE001  (the next tick imports in full; nothing is lost)
            logger.exception("live import of rollout %s cannot continue from its full import", self.rollout_id)
        return outcome

    def _known_after(self, rollout: Rollout, folder: TrialFolder, raw: bytes) -> _Known | None:
        """What the full import of `folder` (its trajectory file `raw`) stored, as the state later ticks continue from."""
        trajectory = folder.trajectory
        if trajectory is None or trajectory.subagents or folder.subtrajectory_files:
            return None  # the full import's, on every tick
        file = GrowingTrajectory()
        if file.restart(raw) is None:
            return None
        steps = trajectory.steps
        if file.n_steps != len(steps) or [step.step_id for step in steps] != list(range(1, len(steps) + 1)):
            return None
        rollout.refresh_from_db(fields=["n_steps", "agent_started_at"])
        if rollout.n_steps != len(steps):
            return None
        spec = tasks.task_spec(rollout.task, ingest.analysis_anchors(rollout.task, folder))
        # The same anchor of elapsed times as the full import's analysis.
        analyser = RolloutAnalyser(spec, folder.agent_started_at)
        analyser.add(steps)
        analyser.result()
        analyser.revised()
        documents = TrajectoryDocuments()
        documents.count(ingest.step_texts(steps))  # stored, with their chunks, by the full import
        return _Known(file, analyser, documents, documents.rollout_words(), rollout.agent_started_at)

    def _store(self, parsed, first: int, tail: dict, warnings: list[str]) -> Rollout | None:
        """Insert the new steps, revise the stored ones a poll measured, update the figures; None: import in full."""
        known = self._known
        known.analyser.add(parsed)
        result = known.analyser.result()
        revised = known.analyser.revised()
        documents, new_outputs = known.documents.add_steps(ingest.step_texts(parsed))
        with transaction.atomic():
            # Its task, model and harness: what the tick's outcome names (ingest.describe).
            rollout = (
                Rollout.objects.select_for_update(of=("self",)).select_related("task", "model", "harness").get(pk=self.rollout_id)
            )
            if rollout.status not in statuses.ACTIVE:
                raise _NoLongerLive(rollout)
            if rollout.n_steps != first or rollout.agent_started_at != known.agent_started_at:
                return None  # another import wrote this rollout meanwhile
            rows = []
            for offset, step in enumerate(parsed):
                row = ingest.step_row(rollout, None, first + offset, step, result.steps[first + offset], rollout.agent_started_at)
                row["search_document"], row["new_output"] = documents[offset], new_outputs[offset]
                rows.append(row)
            ingest.insert_steps(rows, list(zip(parsed, result.steps[first:])))
            for position in sorted(revised):
                fresh = ingest.step_row(rollout, None, position, known.analyser.steps[position], result.steps[position], None)
                Step.objects.filter(rollout=rollout, subtrajectory=None, position=position).update(
                    **{name: fresh[name] for name in METRIC_FIELDS}
                )
            self._fill(rollout, result, first + len(parsed), tail, warnings)
            store_chunks(rollout.pk, known.documents.take_chunks(), whole=False)
            words = known.documents.rollout_words()
            if words is not known.words:
                RolloutDocument.objects.filter(rollout=rollout).update(words=words)
                known.words = words
        return rollout

    @staticmethod
    def _fill(rollout: Rollout, result, n_steps: int, tail: dict, warnings: list[str]) -> None:
        ingest.fill_analysis(rollout, result)
        rollout.n_steps = n_steps
        fields = ["n_steps", "checksum", *ingest.ANALYSIS_SUMMARY_FIELDS]
        # The files changed since the full import: a later import must read them again.
        rollout.checksum = ""
        final = tail.get("final_metrics")
        if isinstance(final, dict):
            rollout.final_metrics = mask_secrets(clean_json(final))
            # The tail's totals, else what the rollout had, whichever of its fields (counted or reported) held it.
            reported = rollout.reported_usage if isinstance(rollout.reported_usage, dict) else {}
            had = {name: getattr(rollout, name) if getattr(rollout, name) is not None else reported.get(name)
                   for name in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")}
            ingest.set_usage(rollout, provenance.Usage(
                n_input_tokens=ingest.first_int(final.get("total_prompt_tokens"), had.get("n_input_tokens")),
                n_cache_tokens=ingest.first_int(final.get("total_cached_tokens"), had.get("n_cache_tokens")),
                n_output_tokens=ingest.first_int(final.get("total_completion_tokens"), had.get("n_output_tokens")),
                cost_usd=had.get("cost_usd"),
            ))
            fields += ["final_metrics", *ingest.USAGE_FIELDS]
        if warnings:
            rollout.validation_warnings = [*rollout.validation_warnings, *mask_secrets(warnings)][:MAX_WARNINGS]
            fields.append("validation_warnings")
        rollout.save(update_fields=fields)
