"""A forged reward graded in the agent's own sandbox, caught by a real sealed regrade (bubblewrap, no container).

The example task sort8_network is solved by the oracle (the existing regrade
tests' run); its recorded trial is then sent as a team's submission graded in
Harbor's shared mode, its workspace put back to the unsolved network and its
reward left at 1.0: what an agent that writes its own reward would send.
The checks pass but ask for a regrade; staff regrade it through the existing
regrade path, sealed, on the recorded outputs; the verifier gives 0, the
verified mark is refused, and the board is unchanged.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from evaluations.boards import serving
from submissions import services, states
from submissions.models import Team
from trajectories import services as trajectories
from trajectories.models import Grade, Rollout

from evaluations.tests.runner_helpers import runner_settings
from evaluations.tests.sandbox_helpers import require_sandbox
from evaluations.tests.test_regrade import oracle_rollout
from submissions.tests.helpers import tar_gz
from trajectories.tests import trialdata

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


def forged_job(rollout: Rollout, task_dir: Path, dest: Path) -> Path:
    """The oracle's recorded trial as a shared-mode submission: unsolved workspace, reward 1.0 as if the agent wrote it."""
    job = dest / "job"
    trial = job / rollout.trial_name
    trial.mkdir(parents=True)
    trajectories.restore_trial_files(rollout, trial, lambda path: True)
    solved = [p for p in trial.rglob("network.json") if p.is_file()]
    assert solved, sorted(str(p.relative_to(trial)) for p in trial.rglob("*"))
    for path in solved:
        shutil.copy(task_dir / "environment" / "network.json", path)
    result = json.loads((trial / "result.json").read_text())
    result["verifier_environment_mode"] = "shared"
    result["verifier_result"] = {"rewards": {"reward": 1.0}}
    (trial / "result.json").write_text(json.dumps(result))
    (trial / "verifier").mkdir(exist_ok=True)
    (trial / "verifier" / "reward.json").write_text(json.dumps({"reward": 1.0}))
    # The oracle writes no trajectory; the team's agent did (a short one of the importer's tests).
    (trial / "agent").mkdir(exist_ok=True)
    (trial / "agent" / "trajectory.json").write_text(json.dumps(trialdata.trajectory(2)))
    config = json.loads((trial / "config.json").read_text())
    config.setdefault("agent", {})["model_name"] = rollout.model.name  # Harbor's oracle names none; the team's model does
    (trial / "config.json").write_text(json.dumps(config))
    (trial / "lock.json").write_text(json.dumps({
        "schema_version": 2,
        "task": {"name": rollout.task.name, "type": "local", "digest": f"sha256:{rollout.task.harbor_digest}", "path": str(task_dir)},
        "timeout_multiplier": 1.0, "agent": config.get("agent", {}), "environment": config.get("environment", {}),
        "verifier": {"disable": False, "environment_mode": "shared"},
        "harbor": {"version": "0.26.0"},
    }))
    return job


def test_a_forged_reward_is_regraded_sealed_to_zero_and_refused_the_verified_mark(settings, tmp_path):
    require_sandbox()
    runner_settings(settings, tmp_path)
    settings.UPLOADS_DIR = tmp_path / "uploads"
    settings.SUBMISSIONS_DIR = tmp_path / "submissions"
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "artifacts")},
    }}
    oracle, task_dir = oracle_rollout(tmp_path, "bubblewrap")
    assert oracle.reward == pytest.approx(1.0)
    job = forged_job(oracle, task_dir, tmp_path / "sent")
    version = oracle.task.version
    Rollout.objects.filter(pk=oracle.pk).delete()  # the team's run, not ours: the board starts empty
    before = [(e.key, e.overall) for e in serving.build(version).entries]

    User = get_user_model()
    team = Team.objects.create(name="Outside Lab")
    member, staff = User.objects.create_user("member"), User.objects.create_user("staff", is_staff=True)
    team.members.add(member)
    submission = services.receive(
        team=team, user=member, version=version, upload=tar_gz(job), file_name="job.tar.gz",
        model_name="oracle", harness_name="oracle", contact="lab@example.org",
    )
    services.check(submission)
    submission.refresh_from_db()
    assert submission.state == states.CHECKED, submission.checks
    sealed = next(c for c in submission.checks if c["name"] == "verifier_sealed")
    assert sealed["requires_regrade"] and not sealed["passed"]
    (rollout_id,) = submission.rollout_ids
    assert submission.submitted_rewards == {str(rollout_id): 1.0}

    report = services.request_regrade(submission, by=staff, per_task=1, sync=True)
    assert not report.refused, report.lines()
    regrade = Grade.objects.get(rollout_id=rollout_id, kind=Grade.Kind.REGRADE)
    assert regrade.state == Grade.State.DONE, regrade.message
    assert regrade.reward == pytest.approx(0.0)

    ok, why = services.verify(submission, by=staff)
    assert not ok and "disagrees with the submitted reward" in why
    submission.refresh_from_db()
    assert (submission.state, submission.mark) == (states.CHECKED, "")
    assert Rollout.objects.get(pk=rollout_id).held_back
    assert [(e.key, e.overall) for e in serving.build(version).entries] == before
