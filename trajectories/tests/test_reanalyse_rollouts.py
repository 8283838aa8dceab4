"""`manage.py reanalyse_rollouts`: stored curves (and every analysed row) rebuilt from the artifact storage's copy of a
trial, after an upgrade whose analysis changed; before, only a re-import of the trial folder rebuilt them."""
from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from trajectories.models import Rollout

from .test_artifacts import use_folder
from .trialdata import make_task, make_trial, trajectory

pytestmark = pytest.mark.django_db


def benchmarked_trial(root, name: str):
    """A trial whose steps 2 and 3 run the benchmark (10 ms, then 9 ms): a curve of two points."""
    data = trajectory(2)
    data["steps"][1]["tool_calls"][0]["arguments"]["keystrokes"] = "python3 bench.py --run 0\n"
    return make_trial(root, name, trajectory_data=data)


@pytest.fixture
def stored(tmp_path, settings):
    """Two imported rollouts: one with its files in the artifact storage, one without; their folders gone."""
    use_folder(settings, tmp_path / "artifacts")
    task = make_task("demo_task")
    task.baseline_score, task.reference_score, task.benchmark_pattern = 20.0, 5.0, r"python3 bench\.py"
    task.save()
    benchmarked_trial(tmp_path / "kept", "lib__demo_task__kept")
    benchmarked_trial(tmp_path / "gone", "lib__demo_task__gone")
    call_command("import_trials", str(tmp_path / "kept"), "--store-files", stdout=io.StringIO())
    call_command("import_trials", str(tmp_path / "gone"), stdout=io.StringIO())
    shutil.rmtree(tmp_path / "kept")
    shutil.rmtree(tmp_path / "gone")
    return {name: Rollout.objects.get(trial_name=f"lib__demo_task__{name}") for name in ("kept", "gone")}


def as_stored_before(rollout: Rollout) -> None:
    """The rollout as an earlier analysis left it: its curve's points elsewhere, at other times."""
    Rollout.objects.filter(pk=rollout.pk).update(
        curve=[{**point, "step_id": 1, "t": 1.0} for point in rollout.curve], last_improvement_sec=1.0)


def test_a_stored_curve_is_rebuilt_from_the_artifact_storage(stored):
    kept = stored["kept"]
    fresh = kept.curve
    assert [(p["step_id"], p["t"]) for p in fresh] == [(2, 60.0), (3, 120.0)]
    as_stored_before(kept)
    out = io.StringIO()
    call_command("reanalyse_rollouts", "--rollout", str(kept.pk), stdout=out)
    kept.refresh_from_db()
    assert kept.curve == fresh and kept.last_improvement_sec == 120.0
    assert Rollout.objects.filter(trial_name=kept.trial_name).count() == 1 and kept.steps.count() == 3
    assert "Analysed 1 rollout again; 0 skipped, 0 failed." in out.getvalue()


def test_a_rollout_without_stored_files_is_named_and_left_as_it_is(stored):
    gone = stored["gone"]
    as_stored_before(gone)
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("reanalyse_rollouts", "--rollout", str(gone.pk), stdout=out)
    assert f"rollout {gone.pk} (lib__demo_task__gone): skipped, no trajectory in the artifact storage" in out.getvalue()
    assert "import_trials --force" in out.getvalue()
    gone.refresh_from_db()
    assert gone.last_improvement_sec == 1.0
    # Both together: one analysed again, one named; it did what it could, so it succeeds.
    out = io.StringIO()
    call_command("reanalyse_rollouts", "--version", "1.1", stdout=out)
    assert "Analysed 1 rollout again; 1 skipped, 0 failed." in out.getvalue()


def test_nothing_to_do_is_an_error(stored):
    with pytest.raises(CommandError, match="no rollout matches"):
        call_command("reanalyse_rollouts", "--version", "nope", stdout=io.StringIO())

