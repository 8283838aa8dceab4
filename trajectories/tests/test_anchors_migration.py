"""Migration 0013 resolves stored rollouts' anchors and re-scores those the verifier scored otherwise."""
import pytest

BEFORE = [("trajectories", "0012_rollout_anchors")]
AFTER = [("trajectories", "0013_resolve_rollout_anchors")]


@pytest.mark.django_db(transaction=True)
def test_flux_like_rollout_is_rescored_against_the_verifiers_anchors(migrate):
    apps = migrate(BEFORE)
    Version = apps.get_model("tasks", "BenchmarkVersion")
    Task = apps.get_model("tasks", "Task")
    AgentModel = apps.get_model("evaluations", "AgentModel")
    Harness = apps.get_model("evaluations", "Harness")
    Rollout = apps.get_model("trajectories", "Rollout")
    Step = apps.get_model("trajectories", "Step")
    task = Task.objects.create(
        version=Version.objects.create(name="9.8"), name="lora", category="model_development", direction="higher",
        baseline_score=0.0, reference_score=0.88,
    )
    model, harness = AgentModel.objects.create(name="m"), Harness.objects.create(name="h")
    point = {"step_id": 2, "t": 60.0, "metric": 0.5643, "score": 0.5643 / 0.88, "best_metric": 0.5643,
             "best_score": 0.5643 / 0.88, "improved": True}
    moved = Rollout.objects.create(
        task=task, model=model, harness=harness, trial_name="moved", reward=0.9102, curve=[point],
        verifier_fields={"reward": 0.9102, "metric": 0.5643, "reference_score": 0.62},
    )
    Step.objects.create(rollout=moved, position=0, step_id=2, source="agent", metric_value=0.5643, metric_score=0.64)
    same = Rollout.objects.create(
        task=task, model=model, harness=harness, trial_name="same", reward=0.5, curve=[{**point, "metric": 0.44}],
        verifier_fields={"reward": 0.5, "metric": 0.44}, index=1,
    )

    apps = migrate(AFTER)
    Rollout = apps.get_model("trajectories", "Rollout")
    moved = Rollout.objects.get(trial_name="moved")
    assert (moved.anchors["baseline"], moved.anchors["reference"], moved.anchors["status"]) == (0.0, 0.62, "reproduced")
    assert moved.curve[0]["best_score"] == pytest.approx(0.9102, abs=5e-4)
    assert moved.best_score == pytest.approx(0.9102, abs=5e-4)
    assert apps.get_model("trajectories", "Step").objects.get(rollout=moved).metric_score == pytest.approx(0.9102, abs=5e-4)
    same = Rollout.objects.get(trial_name="same")
    assert same.anchors["reference"] == 0.88
    assert same.curve[0]["best_score"] == pytest.approx(0.5643 / 0.88)  # left as it was
