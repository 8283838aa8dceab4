"""Store human baselines (evaluations.results.human_baselines) as rollouts of their cohorts' entries.

Each attempt is one rollout of (cohort, harness "human") with its events as
the score log and its last event as the reward; the whole file goes in one
transaction. An attempt is known by version and attempt id, so importing
the same file again changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from django.db import transaction

from tasks.models import BenchmarkVersion, Task
from tasks.scoring import normalised_score
from tasks.services import task_spec
from trajectories.models import Rollout, RolloutStatus
from trajectories import services as trajectories
from trajectories.verdict import Outcome

from evaluations.results.human_baselines import Attempt, HumanBaselineError, read_attempts
from agents.services import ensure_human_cohort

# Attempts have no wall-clock date of their own: their runs are laid on a fixed origin.
ORIGIN = datetime(2024, 1, 1, tzinfo=timezone.utc)


@dataclass
class HumanImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    cohorts: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.created + self.updated + self.unchanged} attempts of {', '.join(self.cohorts)}: "
                f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged")


def import_human_csv(text: str, version: BenchmarkVersion) -> HumanImportReport:
    """Import every attempt of the CSV into `version`; HumanBaselineError (nothing stored) on any problem."""
    tasks = {t.name: t for t in Task.objects.filter(version=version).select_related("version")}

    def normalise(name: str, raw: float) -> float | None:
        task = tasks.get(name)
        return normalised_score(task_spec(task), raw) if task else None

    attempts = read_attempts(text, normalise)
    unknown = sorted({a.task for a in attempts} - set(tasks))
    if unknown:
        raise HumanBaselineError(f"no task {', '.join(unknown)} in {version}")
    report = HumanImportReport()
    with transaction.atomic():
        for attempt in attempts:
            try:
                model, harness = ensure_human_cohort(attempt.cohort)
            except ValueError as error:
                raise HumanBaselineError(f"attempt {attempt.attempt_id}: {error}") from None
            if model.name not in report.cohorts:
                report.cohorts.append(model.name)
            outcome = _store(attempt, tasks[attempt.task], model, harness, version)
            setattr(report, outcome, getattr(report, outcome) + 1)
    return report


def _store(attempt: Attempt, task: Task, model, harness, version: BenchmarkVersion) -> str:
    name = f"human__{version.name}__{attempt.attempt_id}"[:300]
    checksum = attempt.checksum()
    rollout = Rollout.objects.filter(trial_name=name).first()
    if rollout is not None and rollout.checksum == checksum:
        return "unchanged"
    outcome = "created" if rollout is None else "updated"
    rollout = rollout or Rollout(trial_name=name)
    start = ORIGIN
    if rollout.pk is None or (rollout.task_id, rollout.model_id, rollout.harness_id) != (task.pk, model.pk, harness.pk):
        rollout.index = trajectories.next_rollout_index(task.pk, model.pk, harness.pk)  # its number, for good
    rollout.task, rollout.model, rollout.harness = task, model, harness
    trajectories.set_imported(rollout, RolloutStatus.FINISHED)
    rollout.started_at = rollout.agent_started_at = start
    rollout.finished_at = rollout.agent_finished_at = start + timedelta(seconds=attempt.length)
    rollout.reward = attempt.final
    rollout.score_log = [{"t": t, "score": s, "raw": raw} for t, s, raw in attempt.events]
    rollout.verifier_fields = {"attempt_id": attempt.attempt_id, "cohort": attempt.cohort, "source": attempt.source,
                               "final_score": attempt.final}
    rollout.source_path = "human baseline CSV"
    rollout.checksum = checksum
    rollout.schema_version = "human-baseline-csv"
    # A human's attempt has no failure cause: scored or zero, by its final score.
    trajectories.settle_cause(rollout, Outcome.SCORED if (attempt.final or 0) > 0 else Outcome.ZERO, cause="")
    rollout.save()
    return outcome
