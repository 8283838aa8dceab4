"""The one writer of a rollout's grade after its run: the grade history, and the reward columns the boards read.

A regrade re-runs the task's current verifier on what the rollout left
(evaluations.regrade does that). What it finds is recorded here, with its
provenance (the verifier's version, when, by whom, on which backend), as a
`Grade`; the grade the rollout came with is kept as the history's first
entry, written the first time anything is regraded. The rollout's own
reward columns always hold its latest done grade: `record_regrade` writes
them with one `save()`, whose post_save signal marks the boards stale the
way an import's save does (evaluations.leaderboard.on_rollout_saved), and
classifies the rollout again. A regrade that fails leaves the rollout as it
was; its reason is kept in the history.
"""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tasks import services as tasks
from trajectories.failures.service import classify_and_store
from trajectories.models import Grade, Rollout
from trajectories.reading.trial_folder import Verification

# The rollout columns a grade decides (and nothing else of the rollout).
GRADED_FIELDS = ("reward", "reward_valid", "verifier_fields", "verifier_stdout", "verifier_outputs", "score_log")


def history(rollout: Rollout) -> list[Grade]:
    """Every grading of the rollout, oldest first (empty until it is first regraded)."""
    return list(Grade.objects.filter(rollout=rollout).select_related("requested_by").order_by("pk"))


def _original(rollout: Rollout) -> Grade:
    """The grade the rollout came with, as the first entry of its history (made once, from its columns)."""
    first = Grade.objects.filter(rollout=rollout, kind=Grade.Kind.ORIGINAL).first()
    if first is not None:
        return first
    return Grade.objects.create(
        rollout=rollout, kind=Grade.Kind.ORIGINAL, state=Grade.State.DONE,
        message="as " + ("run" if rollout.campaign_id else "imported"),
        graded_at=rollout.verifier_finished_at or rollout.finished_at or rollout.imported_at,
        anchors=rollout.anchors or {}, **{name: getattr(rollout, name) for name in GRADED_FIELDS},
    )


@transaction.atomic
def start_regrade(rollout: Rollout, *, backend: str, requested_by=None) -> Grade:
    """A queued regrade of the rollout (its original grade recorded first); the rollout itself is untouched."""
    Rollout.objects.select_for_update().filter(pk=rollout.pk).first()
    _original(rollout)
    return Grade.objects.create(
        rollout=rollout, kind=Grade.Kind.REGRADE, state=Grade.State.QUEUED, backend=backend, requested_by=requested_by,
    )


def mark_running(grade: Grade, *, celery_task_id: str = "") -> None:
    grade.state = Grade.State.RUNNING
    fields = ["state"]
    if celery_task_id:
        grade.celery_task_id = celery_task_id
        fields.append("celery_task_id")
    grade.save(update_fields=fields)


def record_failed_regrade(grade: Grade, message: str) -> Grade:
    """The regrade produced no grade: why, kept in the history; the rollout is left as it was."""
    grade.state = Grade.State.FAILED
    grade.message = message[:5000]
    grade.graded_at = timezone.now()
    grade.save(update_fields=["state", "message", "graded_at"])
    return grade


@transaction.atomic
def record_regrade(grade: Grade, verification: Verification, *, verifier_version: str) -> Grade:
    """The regrade's verdict as the rollout's latest grade: in the history, and in the rollout's reward columns."""
    rollout = Rollout.objects.select_for_update().select_related("task__version").get(pk=grade.rollout_id)
    grade.state = Grade.State.DONE
    grade.reward = verification.reward
    grade.reward_valid = verification.reward_valid
    grade.verifier_fields = verification.fields
    grade.verifier_stdout = verification.stdout
    grade.verifier_outputs = verification.outputs
    grade.score_log = verification.score_log(rollout.agent_started_at)
    grade.anchors = tasks.rollout_anchors(rollout.task, verification.reward, verification.fields, verification.outputs).as_dict()
    grade.verifier_version = verifier_version
    grade.message = "; ".join(verification.warnings)[:5000]
    grade.graded_at = timezone.now()
    grade.save()
    apply_latest(rollout)
    return grade


def apply_latest(rollout: Rollout) -> None:
    """Write the latest done grade into the rollout's reward columns (one save: the boards see it), then classify it."""
    latest = Grade.objects.filter(rollout=rollout, state=Grade.State.DONE).order_by("-pk").first()
    if latest is None:
        return
    for name in GRADED_FIELDS:
        setattr(rollout, name, getattr(latest, name))
    rollout.save(update_fields=[*GRADED_FIELDS, "updated_at"])
    classify_and_store(rollout)


def keep_latest_regrade(rollout: Rollout) -> None:
    """A regraded rollout imported again (`import_trials --force`) keeps its latest regrade's verdict, unsaved.

    The trial folder holds the original grade; the board counts the latest.
    """
    if rollout.pk is None:
        return
    latest = (
        Grade.objects.filter(rollout_id=rollout.pk, kind=Grade.Kind.REGRADE, state=Grade.State.DONE).order_by("-pk").first()
    )
    if latest is not None:
        for name in GRADED_FIELDS:
            setattr(rollout, name, getattr(latest, name))
