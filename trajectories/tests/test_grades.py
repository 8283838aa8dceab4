"""A rollout's grade history (trajectories.grades): a regrade's verdict is the rollout's, and so are its anchors.

The reward is the truth and every curve must agree with it: when a regrade's
verifier scores against other anchors than the run's did (a baseline it
measured again, a reference of its own), the rollout's benchmark calls and
best-so-far curve are scored against the regrade's anchors too.
"""
from __future__ import annotations

import pytest

from tasks import services as tasks
from tasks.scoring import ANCHORED_LINEAR, score_with
from trajectories import services
from trajectories.grades import apply_latest
from trajectories.models import Grade, Rollout, Step
from trajectories.reading.trial_folder import Verification

from .factories import make_rollout, make_task

pytestmark = pytest.mark.django_db

# A flux2_klein_lora-like quality task: task.toml says 0.0 -> 0.88; the run's verifier agreed.
TASK = dict(category="model_development", metric="score", direction="higher", baseline_score=0.0, reference_score=0.88)
METRICS = [0.40, 0.52, 0.5643]  # the benchmark calls' readings, the last the best


def run_score(value: float, reference: float = 0.88) -> float:
    return score_with(ANCHORED_LINEAR, value, 0.0, reference, True)


def graded_run() -> Rollout:
    """A rollout as an import stores it: scored against task.toml's anchors, its curve and calls alike."""
    task = make_task(**TASK)
    reward = round(run_score(METRICS[-1]), 4)
    fields = {"reward": reward, "metric": METRICS[-1]}
    anchors = tasks.rollout_anchors(task, reward, fields, {})
    curve, best = [], None
    for position, value in enumerate(METRICS):
        best = value if best is None or value > best else best
        curve.append({"step": position + 1, "t": 60.0 * position, "metric": value, "score": run_score(value),
                      "best_metric": best, "best_score": run_score(best), "improved": best == value})
    rollout = make_rollout(task, reward=reward, verifier_fields=fields, anchors=anchors.as_dict(), curve=curve,
                           best_metric=best, best_score=run_score(best))
    for position, value in enumerate(METRICS):
        Step.objects.create(rollout=rollout, position=position, step_id=position + 1, source="agent",
                            metric_value=value, metric_score=run_score(value), metric_status="parsed")
    return rollout


def verdict(fields: dict) -> Verification:
    return Verification(reward=fields["reward"], reward_valid=True, fields=fields, stdout="", outputs={},
                        exception_type="", exception_message="", warnings=())


def regrade(rollout: Rollout, fields: dict) -> Rollout:
    grade = services.start_regrade(rollout, backend="bubblewrap")
    services.record_regrade(grade, verdict(fields), verifier_version="v2")
    return Rollout.objects.get(pk=rollout.pk)


def test_a_regrade_against_its_own_reference_rescores_the_curve_and_the_calls():
    """It once kept the run's anchors: the curve's best said 0.64 beside a reward of 0.91."""
    rollout = graded_run()
    assert rollout.anchors["reference"] == 0.88
    # The new verifier scores against a reference of its own, 0.62.
    reward = round(run_score(METRICS[-1], 0.62), 4)
    after = regrade(rollout, {"reward": reward, "metric": METRICS[-1], "reference_score": 0.62})

    assert after.reward == reward
    assert (after.anchors["baseline"], after.anchors["reference"], after.anchors["status"]) == (0.0, 0.62, "reproduced")
    assert after.curve[-1]["best_score"] == pytest.approx(reward, abs=5e-4)  # the curve agrees with the reward
    assert [point["score"] for point in after.curve] == pytest.approx([run_score(v, 0.62) for v in METRICS])
    assert after.best_score == pytest.approx(reward, abs=5e-4)
    scores = list(Step.objects.filter(rollout=after).order_by("position").values_list("metric_score", flat=True))
    assert scores == pytest.approx([run_score(v, 0.62) for v in METRICS])
    # Which point is best, and the metrics themselves, are the run's.
    assert [p["metric"] for p in after.curve] == METRICS and [p["improved"] for p in after.curve] == [True, True, True]


def test_a_regrade_with_the_runs_anchors_leaves_the_scores_as_they_were():
    rollout = graded_run()
    before = (rollout.curve, rollout.best_score, rollout.anchors)
    after = regrade(rollout, dict(rollout.verifier_fields))
    assert (after.curve, after.best_score) == before[:2]
    assert (after.anchors["baseline"], after.anchors["reference"]) == (before[2]["baseline"], before[2]["reference"])


def test_the_latest_grade_decides_back_and_forth():
    """A second regrade that agrees with the run again puts the run's scores back."""
    rollout = graded_run()
    original_curve = rollout.curve
    regrade(rollout, {"reward": round(run_score(METRICS[-1], 0.62), 4), "metric": METRICS[-1], "reference_score": 0.62})
    after = regrade(Rollout.objects.get(pk=rollout.pk), {"reward": rollout.reward, "metric": METRICS[-1]})
    assert after.anchors["reference"] == 0.88
    assert [p["score"] for p in after.curve] == pytest.approx([p["score"] for p in original_curve])
    assert Grade.objects.filter(rollout=rollout).count() == 3  # the original, two regrades


def test_applying_the_latest_grade_again_changes_nothing():
    rollout = graded_run()
    after = regrade(rollout, {"reward": round(run_score(METRICS[-1], 0.62), 4), "metric": METRICS[-1], "reference_score": 0.62})
    apply_latest(after)
    again = Rollout.objects.get(pk=rollout.pk)
    assert (again.curve, again.best_score, again.anchors) == (after.curve, after.best_score, after.anchors)
