"""What happens to a submission: received, checked (and imported, held back), regraded, marked, published, rejected.

Each change of state is one function here, and each writes the state and
one `SubmissionEvent` through `_change` (the table is `states`'):
`receive`, `check` (received -> checked or failed_checks), `verify`
(-> verified, after a sealed regrade of a sample agreed), `self_report`,
`publish`, `reject`. Nothing here launches a run or calls a judge; the
regrade goes through `evaluations.regrades` and is staff's.

A submission's import is all or nothing: its trials are imported inside one
transaction with their rollouts held back (`Rollout.held_back`: on no
board) and the checks that need the import (reward-hacking flags) run
before it commits; a failing check rolls the whole import back and the
submission keeps its reasons.
"""
from __future__ import annotations

import logging
import random
import shutil
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluations.boards.invalidation import invalidate
from evaluations.models import Entry
from evaluations.regrades import regrade as regrades
from tasks.models import Task
from trajectories import services as trajectories
from trajectories.models import Grade, ReviewCheck, Rollout

from submissions import checks, states
from submissions.models import Submission, SubmissionEvent, Team

logger = logging.getLogger(__name__)

HACKING_CAUSES = ("protected_file_modified",)  # trajectories.failures.rules.PROTECTED_FILE_MODIFIED
HACKING_REVIEW_CHECK = "reward_hacking"


class ImportRefused(Exception):
    """Raised inside the import's transaction to roll it back; carries the checks that say why."""

    def __init__(self, results: list[checks.CheckResult]):
        super().__init__("; ".join(r.reason for r in results if r.blocks))
        self.results = results


def submissions_dir() -> Path:
    return Path(settings.SUBMISSIONS_DIR)


def stored_file(submission: Submission) -> Path:
    return submissions_dir() / str(submission.pk) / submission.file_name


def teams_of(user) -> list[Team]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(Team.objects.filter(members=user))


def visible_to(user, *, staff: bool):
    """The submissions `user` may see: all for staff, their teams' for a member, none else."""
    if staff:
        return Submission.objects.all()
    if not getattr(user, "is_authenticated", False):
        return Submission.objects.none()
    return Submission.objects.filter(team__members=user)


def _change(submission: Submission, new: str, *, by=None, note: str = "", **fields) -> Submission:
    """The one writer of a submission's state: the table's check, the fields, and one event."""
    states.check_transition(submission.state, new)
    old = submission.state
    submission.state = new
    for name, value in fields.items():
        setattr(submission, name, value)
    submission.save()
    SubmissionEvent.objects.create(submission=submission, from_state=old, to_state=new, by=by, note=note[:5000])
    return submission


# -- received -------------------------------------------------------------------------------------------

def receive(*, team: Team, user, version, upload, file_name: str, model_name: str, harness_name: str,
            harness_version: str = "", contact: str, note: str = "") -> Submission:
    """Store the uploaded file as a new submission (state received) and record it."""
    submission = Submission.objects.create(
        team=team, version=version, model_name=model_name, harness_name=harness_name, harness_version=harness_version,
        contact=contact, note=note, file_name=file_name, size=upload.size, created_by=user,
    )
    SubmissionEvent.objects.create(submission=submission, from_state="", to_state=states.RECEIVED, by=user)
    path = stored_file(submission)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return submission


# -- checked on a worker ------------------------------------------------------------------------------

TASK = "submissions.check"
RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def stale_after_sec() -> float:
    """A check a worker took this long ago and never finished: its worker died (the import rolled back)."""
    return float(getattr(settings, "AUTOLAB_SUBMISSION_STALE_SEC", 1800))


def send_check(submission: Submission) -> bool:
    """Send its check to a worker; False (it stays received, `sweep` sends it again) when the broker is down."""
    from autolab_site.celery import app

    if TASK not in app.tasks:
        app.loader.import_default_modules()
    Submission.objects.filter(pk=submission.pk).update(sent=True)
    try:
        app.signature(TASK, args=[submission.pk]).apply_async(
            queue=getattr(settings, "AUTOLAB_UPLOAD_QUEUE", "cpu"), retry_policy=RETRY_POLICY,
        )
    except Exception:  # noqa: BLE001  (kombu's errors for an unreachable broker vary by transport)
        logger.warning("submission %s: its check could not be sent; sent again within a minute", submission.pk, exc_info=True)
        Submission.objects.filter(pk=submission.pk, claimed_at__isnull=True).update(sent=False)
        return False
    return True


def run_check(submission_id: int) -> str:
    """The worker's part: claim a received submission and check it; its state, or "skipped" (taken, or not received)."""
    claimed = Submission.objects.filter(pk=submission_id, state=states.RECEIVED, claimed_at__isnull=True).update(
        claimed_at=timezone.now()
    )
    if not claimed:
        return "skipped"
    return check(Submission.objects.select_related("version").get(pk=submission_id)).state


def sweep() -> list[int]:
    """Send again the checks whose message never left; fail those whose worker died mid-check. The ids acted on."""
    acted = []
    stale_before = timezone.now() - timedelta(seconds=stale_after_sec())
    for submission in Submission.objects.filter(state=states.RECEIVED, claimed_at__lt=stale_before):
        _change(
            submission, states.FAILED_CHECKS,
            note="the check stopped: its worker ended (killed, or out of memory) before it finished; nothing was imported",
            checks=[checks.CheckResult(checks.READABLE, False, "the check stopped before it finished: submit again").as_dict()],
        )
        shutil.rmtree(stored_file(submission).parent, ignore_errors=True)
        acted.append(submission.pk)
    for submission in Submission.objects.filter(state=states.RECEIVED, claimed_at__isnull=True, sent=False):
        if not send_check(submission):
            break
        acted.append(submission.pk)
    return acted


# -- checked or failed_checks ---------------------------------------------------------------------------

def _facts(trial: trajectories.SubmittedTrial, flags: dict[str, tuple[str, ...]]) -> checks.TrialFacts:
    folder = trial.folder
    if folder is None:
        return checks.TrialFacts(trial_name=trial.path.name, error=trial.error)
    run = folder.run_settings
    return checks.TrialFacts(
        trial_name=folder.trial_name, trial_id=folder.trial_id, task_name=folder.task_name,
        task_digest=run.task_digest, multipliers=run.multipliers, overrides=run.overrides,
        verifier_mode=run.verifier_mode or folder.verifier_mode,
        has_trajectory=folder.trajectory is not None, trajectory_sha256=folder.trajectory_sha256,
        hacking_flags=flags.get(folder.trial_name, ()),
    )


def _rules(version) -> checks.VersionRules:
    """The version's pins: Harbor's digest of each task folder as imported (never the site's own checksum)."""
    rows = Task.objects.filter(version=version).values_list("name", "harbor_digest", "has_environment", "has_tests")
    return checks.VersionRules(
        task_digests={name: trajectories.digest_hex(digest) for name, digest, _, _ in rows},
        min_trials_per_task=version.min_trials_per_task,
        description_only=frozenset(name for name, _, environment, tests in rows if not (environment and tests)),
    )


def _known(trials: list[trajectories.SubmittedTrial]) -> checks.Known:
    names = [t.folder.trial_name for t in trials if t.folder]
    ids = [t.folder.trial_id for t in trials if t.folder and t.folder.trial_id]
    digests = [t.folder.trajectory_sha256 for t in trials if t.folder and t.folder.trajectory_sha256]
    return checks.Known(
        trial_ids=frozenset(Rollout.objects.filter(trial_id__in=ids).values_list("trial_id", flat=True)),
        trial_names=frozenset(Rollout.objects.filter(trial_name__in=names).values_list("trial_name", flat=True)),
        trajectory_digests=frozenset(
            Rollout.objects.filter(trajectory_sha256__in=digests).values_list("trajectory_sha256", flat=True)
        ),
    )


def _hacking_flags(rollout_ids: list[int]) -> dict[str, tuple[str, ...]]:
    """Trial name -> the reward-hacking flags of the failure rules and of any review of the imported rollouts."""
    flags: dict[str, list[str]] = defaultdict(list)
    for name, cause in Rollout.objects.filter(pk__in=rollout_ids, failure_cause__in=HACKING_CAUSES).values_list(
        "trial_name", "failure_cause"
    ):
        flags[name].append(f"failure rule: {cause}")
    for name in ReviewCheck.objects.filter(
        review__rollout_id__in=rollout_ids, name=HACKING_REVIEW_CHECK, outcome=ReviewCheck.Outcome.FAIL,
    ).values_list("review__rollout__trial_name", flat=True):
        flags[name].append("review: reward_hacking fail")
    return {name: tuple(found) for name, found in flags.items()}


def check(submission: Submission) -> Submission:
    """Unpack, check, and (all passing) import held back, in one transaction; the submission checked or failed_checks."""
    try:
        with trajectories.unpacked_archive(stored_file(submission)) as folder:
            return _check_folder(submission, folder)
    except trajectories.ARCHIVE_ERROR as exc:
        result = checks.CheckResult(checks.READABLE, False, f"the archive was refused: {exc}")
        return _change(submission, states.FAILED_CHECKS, note=result.reason, checks=[result.as_dict()])
    finally:
        shutil.rmtree(stored_file(submission).parent, ignore_errors=True)


def _check_folder(submission: Submission, folder: Path) -> Submission:
    trials = trajectories.read_submitted_trials(folder)
    facts = [_facts(t, {}) for t in trials]
    results = checks.run_checks(facts, _rules(submission.version), _known(trials))
    if any(r.blocks for r in results):
        return _failed(submission, results)
    try:
        with transaction.atomic():
            report = trajectories.import_path(folder, version=submission.version.name, store_files=True)
            made = [o for o in report.outcomes if o.outcome == "created" and o.rollout_id is not None]
            if report.errors or len(made) != len(report.outcomes) or len(made) != len(trials):
                problems = report.errors + [f"{o.trial_name or o.path}: {o.outcome} {o.error}".strip() for o in report.outcomes if o not in made]
                raise ImportRefused([checks.CheckResult(checks.READABLE, False, f"the import failed: {'; '.join(problems)[:2000]}")])
            ids = [o.rollout_id for o in made]
            trajectories.hold_back(ids, True)
            flags = _hacking_flags(ids)
            results = checks.run_checks([_facts(t, flags) for t in trials], _rules(submission.version), checks.Known())
            # Duplicates were judged before the import (the import itself makes every trial "known").
            results = [r for r in results if r.name != checks.DUPLICATES] + [
                checks.CheckResult(checks.DUPLICATES, True, "no trial or trajectory already on the site")
            ]
            if any(r.blocks for r in results):
                raise ImportRefused(results)
            rewards = dict(Rollout.objects.filter(pk__in=ids).values_list("pk", "reward"))
            return _change(
                submission, states.CHECKED, note=f"{len(ids)} trials imported, held back until staff publish",
                checks=[r.as_dict() for r in results], rollout_ids=ids,
                submitted_rewards={str(pk): reward for pk, reward in rewards.items()},
            )
    except ImportRefused as refused:
        submission.refresh_from_db()
        return _failed(submission, refused.results)


def _failed(submission: Submission, results: list[checks.CheckResult]) -> Submission:
    reasons = "; ".join(r.reason for r in results if r.blocks)
    return _change(submission, states.FAILED_CHECKS, note=reasons, checks=[r.as_dict() for r in results])


# -- staff: regrade a sample, then verified or self-reported ---------------------------------------------

def sample(submission: Submission, per_task: int = 1, seed: int | None = None) -> list[Rollout]:
    """`per_task` of the submission's rollouts of each task, chosen at random."""
    by_task: dict[int, list[Rollout]] = defaultdict(list)
    for rollout in Rollout.objects.filter(pk__in=submission.rollout_ids).select_related("task__version").order_by("pk"):
        by_task[rollout.task_id].append(rollout)
    chooser = random.Random(seed if seed is not None else submission.pk)
    return [r for rollouts in by_task.values() for r in chooser.sample(rollouts, min(per_task, len(rollouts)))]


def request_regrade(submission: Submission, *, by, per_task: int = 1, backend: str = "", sync: bool = False) -> regrades.Report:
    """Regrade a sample, sealed, through the existing regrade path (staff only: it runs the verifier); backend ""
    is each rollout's own (bubblewrap for a submitted one, which has no campaign)."""
    return regrades.request(sample(submission, per_task), requested_by=by, backend=backend, sync=sync)


def compare_regrades(submission: Submission) -> dict[str, dict]:
    """Each regraded rollout's submitted reward beside its latest done regrade, and whether they agree."""
    tolerance = submission.version.regrade_tolerance
    out: dict[str, dict] = {}
    latest: dict[int, Grade] = {}
    for grade in Grade.objects.filter(
        rollout_id__in=submission.rollout_ids, kind=Grade.Kind.REGRADE, state=Grade.State.DONE,
    ).order_by("graded_at", "pk"):
        latest[grade.rollout_id] = grade
    for rollout_id, grade in latest.items():
        submitted = submission.submitted_rewards.get(str(rollout_id))
        agrees = (
            submitted is not None and grade.reward is not None and abs(float(submitted) - float(grade.reward)) <= tolerance
        )
        out[str(rollout_id)] = {"submitted": submitted, "regraded": grade.reward, "agrees": agrees}
    return out


def verify(submission: Submission, *, by) -> tuple[bool, str]:
    """Mark verified when a regraded sample covers every task and agrees within the verifier's noise."""
    comparison = compare_regrades(submission)
    submission.regrade = comparison
    submission.save(update_fields=["regrade", "updated_at"])
    if submission.state != states.CHECKED:
        return False, f"a submission {states.LABELS[submission.state]} cannot be verified"
    if not comparison:
        return False, "no regrade has finished yet: regrade a sample first"
    tasks = set(Rollout.objects.filter(pk__in=submission.rollout_ids).values_list("task_id", flat=True))
    regraded = set(Rollout.objects.filter(pk__in=[int(k) for k in comparison]).values_list("task_id", flat=True))
    if tasks - regraded:
        return False, f"{len(tasks - regraded)} tasks have no finished regrade yet"
    disagree = {k: v for k, v in comparison.items() if not v["agrees"]}
    if disagree:
        detail = ", ".join(f"rollout {k}: submitted {v['submitted']}, regraded {v['regraded']}" for k, v in disagree.items())
        return False, (
            f"the regrade disagrees with the submitted reward beyond the verifier's noise "
            f"({submission.version.regrade_tolerance:g}): {detail}; not verified"
        )
    _change(submission, states.VERIFIED, by=by, note=f"{len(comparison)} regraded trials agree", mark=states.MARK_VERIFIED)
    return True, "verified"


def self_report(submission: Submission, *, by) -> tuple[bool, str]:
    """Take the submission as sent (checks passed, not regraded); refused when its grading must be regraded."""
    if any(c.get("requires_regrade") and not c.get("passed") for c in submission.checks):
        return False, "its trials were graded in the agent's sandbox: only a sealed regrade can make it count"
    _change(submission, states.SELF_REPORTED, by=by, mark=states.MARK_SELF_REPORTED)
    return True, "self-reported"


def publish(submission: Submission, *, by) -> Submission:
    """Release its rollouts onto the board with its mark; a self-reported entry is out of Dominance until staff include it."""
    with transaction.atomic():
        _change(submission, states.PUBLISHED, by=by)
        trajectories.hold_back(submission.rollout_ids, False)
        pairs = set(Rollout.objects.filter(pk__in=submission.rollout_ids).values_list("model_id", "harness_id"))
        for model_id, harness_id in pairs:
            entry, _ = Entry.objects.get_or_create(model_id=model_id, harness_id=harness_id, version=submission.version)
            entry.submission_id = submission.pk
            entry.submission_mark = submission.mark
            if submission.mark == states.MARK_SELF_REPORTED:
                entry.in_comparison = False
            entry.save()
    invalidate(submission.version_id)
    return submission


def reject(submission: Submission, *, by, reason: str) -> Submission:
    """Reject it; its held-back rollouts, never shown, are deleted."""
    with transaction.atomic():
        Rollout.objects.filter(pk__in=submission.rollout_ids, held_back=True).delete()
        _change(submission, states.REJECTED, by=by, note=reason)
    return submission
