"""The one writer of a rollout's grade after its run: the grade history, and the reward columns the boards read.

A regrade re-runs the task's current verifier on what the rollout left
(evaluations.regrades.regrade does that). What it finds is recorded here, with its
provenance (the verifier's version, when, by whom, on which backend), as a
`Grade`; the grade the rollout came with is kept as the history's first
entry, written the first time anything is regraded. The rollout's own
reward columns always hold its latest done grade: `record_regrade` writes
them with one `save()`, whose post_save signal marks the boards stale the
way an import's save does (evaluations.boards.invalidation.on_rollout_saved), and
classifies the rollout again. A regrade that fails leaves the rollout as it
was; its reason is kept in the history.

A grade decides its anchors too (tasks.anchors: a verifier may score
against a baseline it measured, or a reference of its own). The reward is
the truth, so when the latest grade's anchors are not the ones the
rollout's benchmark calls and best-so-far curve were scored with, those
scores are worked out again from the stored metrics (`rescore`), and a
re-import of a regraded trial scores its steps against them
(`regraded_anchors`).
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from autolab_site.masking import mask_text
from tasks import services as tasks
from tasks.scoring import normalised_score
from trajectories.analysis.curve import rescored
from trajectories.failures.service import classify_and_store
from trajectories.models import Grade, Rollout, Step
from trajectories.reading.trial_folder import Verification
from trajectories.search.texts import index_verifier

# The rollout columns a grade decides (and nothing else of the rollout).
GRADED_FIELDS = ("reward", "reward_valid", "verifier_fields", "verifier_stdout", "verifier_outputs", "score_log", "anchors")
# What is scored against the anchors, besides the reward (rescore).
SCORED_FIELDS = ("curve", "best_score")


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
        **{name: getattr(rollout, name) for name in GRADED_FIELDS},
    )


@transaction.atomic
def start_regrade(rollout: Rollout, *, backend: str, requested_by=None) -> Grade:
    """A queued regrade of the rollout (its original grade recorded first); the rollout itself is untouched."""
    Rollout.objects.select_for_update().filter(pk=rollout.pk).first()
    _original(rollout)
    return Grade.objects.create(
        rollout=rollout, kind=Grade.Kind.REGRADE, state=Grade.State.QUEUED, backend=backend, requested_by=requested_by,
    )


def mark_running(grade: Grade, *, celery_task_id: str = "") -> bool:
    """Claim a queued regrade for the worker about to run it; False when it is not queued any more.

    One claim per grade: a message delivered twice (sent again by the
    reaper, or redelivered after its worker died) finds the grade running
    or ended, and leaves it to its worker or to the reaper (`fail_lost`).
    """
    now = timezone.now()
    changes = {"state": Grade.State.RUNNING, "heartbeat_at": now}
    if celery_task_id:
        changes["celery_task_id"] = celery_task_id
    if not Grade.objects.filter(pk=grade.pk, state=Grade.State.QUEUED).update(**changes):
        return False
    for name, value in changes.items():
        setattr(grade, name, value)
    return True


def beat(grade_id: int) -> None:
    """The running regrade's worker is alive (its trial runs on)."""
    Grade.objects.filter(pk=grade_id, state=Grade.State.RUNNING).update(heartbeat_at=timezone.now())


def fail_lost(stale_before) -> list[int]:
    """Fail each running regrade whose heartbeat stopped before `stale_before`, saying why; the ids failed.

    Its rollout stays as it was (a regrade changes it only when done). A
    grade that beats again or ends meanwhile is left alone: its worker is
    alive after all.
    """
    lost = Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True)
    failed = []
    for grade_id, heartbeat_at in Grade.objects.filter(lost, state=Grade.State.RUNNING).values_list("pk", "heartbeat_at"):
        since = heartbeat_at.isoformat() if heartbeat_at else "never"
        message = f"its worker stopped: no heartbeat since {since}. The rollout keeps its grade; it may be regraded again"
        if Grade.objects.filter(lost, pk=grade_id, state=Grade.State.RUNNING).update(
            state=Grade.State.FAILED, message=message, graded_at=timezone.now()
        ):
            failed.append(grade_id)
    return failed


def record_failed_regrade(grade: Grade, message: str) -> Grade:
    """The regrade produced no grade: why, kept in the history; the rollout is left as it was."""
    grade.state = Grade.State.FAILED
    grade.message = mask_text(message)[:5000]  # a verifier's failure may quote what the trial printed
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
    """Write the latest done grade into the rollout's reward columns (one save: the boards see it), then classify it.

    Scores of the rollout's own made against other anchors than the
    grade's are worked out again first (`rescore`), in the same save.
    """
    latest = Grade.objects.filter(rollout=rollout, state=Grade.State.DONE).order_by("-pk").first()
    if latest is None:
        return
    scored_with = rollout.anchors
    for name in GRADED_FIELDS:
        setattr(rollout, name, getattr(latest, name))
    fields = [*GRADED_FIELDS, "updated_at", *rescored_fields(rollout, scored_with)]
    rollout.save(update_fields=fields)
    index_verifier(rollout)
    classify_and_store(rollout)


def rescored_fields(rollout: Rollout, scored_with: dict | None) -> list[str]:
    """`rescore` the rollout when its anchors are not those its scores were made with (`scored_with`).

    The rollout's fields it changed, for its caller's save ([] when the
    anchors are the same: nothing to do).
    """
    if _pair(rollout.anchors) == _pair(scored_with):
        return []
    rescore(rollout)
    return list(SCORED_FIELDS)


def _pair(anchors: dict | None) -> tuple:
    anchors = anchors or {}
    return anchors.get("baseline"), anchors.get("reference")


def rescore(rollout: Rollout) -> None:
    """Score the rollout's benchmark calls and best-so-far curve against its anchors, from their stored metrics.

    The steps are written here; the curve and best score are set on
    `rollout`, for its caller's save. Which point is best stays (the running
    best follows the metric in the task's direction): only scores change.
    """
    spec = tasks.task_spec(rollout.task, tasks.stored_anchors(rollout.task, rollout.anchors))

    def score(value: float) -> float | None:
        return normalised_score(spec, value)

    rollout.curve = rescored(rollout.curve or [], score)
    rollout.best_score = rollout.curve[-1]["best_score"] if rollout.curve else None
    steps = list(Step.objects.filter(rollout=rollout, metric_value__isnull=False).only("id", "metric_value"))
    for step in steps:
        step.metric_score = score(step.metric_value)
    Step.objects.bulk_update(steps, ["metric_score"], batch_size=500)


def regraded_anchors(rollout_id: int | None) -> dict | None:
    """The anchors of the rollout's latest done regrade; None when it was never regraded.

    A regraded trial imported again is scored against these, as its reward
    is its latest regrade's (keep_latest_regrade).
    """
    if rollout_id is None:
        return None
    latest = _latest_regrade(rollout_id)
    return latest.anchors if latest is not None and latest.anchors else None


def _latest_regrade(rollout_id: int) -> Grade | None:
    return Grade.objects.filter(rollout_id=rollout_id, kind=Grade.Kind.REGRADE, state=Grade.State.DONE).order_by("-pk").first()


def keep_latest_regrade(rollout: Rollout) -> None:
    """A regraded rollout imported again (`import_trials --force`) keeps its latest regrade's verdict, unsaved.

    The trial folder holds the original grade; the board counts the latest.
    """
    if rollout.pk is None:
        return
    latest = _latest_regrade(rollout.pk)
    if latest is not None:
        for name in GRADED_FIELDS:
            setattr(rollout, name, getattr(latest, name))
