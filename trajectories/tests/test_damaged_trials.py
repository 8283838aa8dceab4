"""Damaged and partial trial folders: nothing is silently lost or silently counted.

A trial without an ATIF trajectory (no agent/ folder, or only its
harness's native logs), a trial without result.json, a native log given
instead of its trial folder, and Harbor 0.26's result.json beside 0.25's.
"""
from __future__ import annotations

import json
import shutil

import pytest
from django.urls import reverse

from trajectories import statuses
from trajectories.models import Rollout, RolloutStatus
from trajectories.services import import_path, import_trial_dir

from . import native_logs
from .harness_trajectories import DIFF_LINES
from .trialdata import make_task, make_trial, write_json


@pytest.fixture
def task(db):
    task = make_task("demo_task")
    task.baseline_score, task.reference_score, task.benchmark_pattern = 20.0, 5.0, r"python3 bench\.py"
    task.save()
    return task


# -- no ATIF trajectory ----------------------------------------------------------------


def test_trial_without_agent_folder_is_marked_no_trajectory(tmp_path, task, client):
    folder = make_trial(tmp_path)
    shutil.rmtree(folder / "agent")
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    assert outcome.trajectory == "none"
    assert any("no trajectory: there is no agent/ folder" in w for w in outcome.warnings)
    rollout = Rollout.objects.get()
    assert (rollout.trajectory_format, rollout.n_steps, rollout.reward, rollout.status) == ("none", 0, 0.5, "finished")
    assert rollout.has_no_trajectory
    # On the pages and in the API.
    assert "no trajectory" in client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert "no trajectory" in client.get(reverse("trajectories:rollout_list")).content.decode()
    [row] = client.get("/api/v1/rollouts/").json()["results"]
    assert row["trajectory"] == "none"


def test_no_trajectory_is_not_evidence_of_stopping_early(tmp_path, task):
    """Zero steps of a trial without a trajectory are unknown steps: no cause or flag is read from them."""
    folder = make_trial(tmp_path, reward={"reward": 0.0})
    shutil.rmtree(folder / "agent")
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    assert rollout.outcome == "zero"
    assert rollout.failure_cause != "premature_termination" and "premature_termination" not in rollout.failure_secondary
    assert "never_called_benchmark" not in rollout.behaviour_flags


@pytest.mark.parametrize(
    ("harness", "fmt"),
    [
        ("mini-swe-agent", "mini-swe-agent trajectory"),
        ("gemini-cli", "gemini-cli session"),
        ("claude-code", "claude-code session JSONL"),
        ("openhands", "OpenHands event list"),
        ("codex", "Codex session JSONL"),
    ],
)
def test_native_agent_log_is_converted_with_harbors_converter(tmp_path, task, harness, fmt):
    folder = make_trial(tmp_path)
    (folder / "agent" / "trajectory.json").unlink()
    native_logs.write_native(folder / "agent", harness)
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    assert outcome.trajectory == f"converted from {fmt}"
    assert any(f"converted from the {fmt} by Harbor" in w for w in outcome.warnings)
    rollout = Rollout.objects.get()
    assert rollout.trajectory_format == f"converted from {fmt}"
    # Harbor's Codex converter bundles one model request's calls into one step.
    kinds = [s.kind_list for s in rollout.steps.order_by("position") if s.kind_list]
    if harness == "codex":
        assert kinds[0] == ["benchmark", "edit", "inspect"]
    else:
        assert kinds[:3] == [["inspect"], ["edit"], ["benchmark"]]
    edit = rollout.steps.get(kinds__contains=" edit ")
    assert DIFF_LINES in edit.diff
    assert rollout.steps.get(kinds__contains=" benchmark ").metric_value == 8.0


def test_native_log_that_cannot_be_converted_is_no_trajectory_with_the_reason(tmp_path, task):
    folder = make_trial(tmp_path)
    (folder / "agent" / "trajectory.json").unlink()
    (folder / "agent" / "gemini-cli.trajectory.json").write_text("")
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created" and outcome.trajectory == "none"
    [warning] = [w for w in outcome.warnings if w.startswith("no trajectory")]
    assert "gemini-cli session" in warning and "could not be converted" in warning


def test_agent_folder_with_unknown_logs_is_no_trajectory(tmp_path, task):
    folder = make_trial(tmp_path)
    (folder / "agent" / "trajectory.json").unlink()
    (folder / "agent" / "my-agent.log").write_text("hello")
    outcome = import_trial_dir(folder)
    assert outcome.trajectory == "none"
    assert any("agent/ holds no trajectory.json and no agent log we know" in w for w in outcome.warnings)


@pytest.mark.parametrize("harness", ["mini-swe-agent", "gemini-cli", "claude-code", "openhands", "codex"])
def test_a_native_log_given_as_path_names_its_format_and_what_to_do(tmp_path, task, harness):
    folder = make_trial(tmp_path)
    log = native_logs.write_native(folder / "agent", harness)
    report = import_path(log)
    assert not report.ok
    [error] = report.errors
    assert harness.split("-")[0] in error.lower() and "not a trial folder" in error
    assert f"Import the trial folder that holds it ({folder})" in error


def test_an_atif_file_given_as_path_says_so(tmp_path, task):
    folder = make_trial(tmp_path)
    [error] = import_path(folder / "agent" / "trajectory.json").errors
    assert "an ATIF trajectory, not a trial folder" in error and str(folder) in error


# -- no result.json ------------------------------------------------------------------------


def test_trial_without_result_is_incomplete_not_running(tmp_path, task, client):
    folder = make_trial(tmp_path)
    (folder / "result.json").unlink()
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    assert outcome.status == "incomplete" and "no result.json" in outcome.status_reason
    assert any(w.startswith("incomplete: no result.json") for w in outcome.warnings)
    rollout = Rollout.objects.get()
    assert rollout.status == RolloutStatus.INCOMPLETE and not rollout.is_active
    assert rollout.reward == 0.5  # reward.json is there: shown, not counted
    assert statuses.disposition(rollout.status, rollout.superseded, rollout.infra_error) == statuses.Disposition.UNFINISHED
    assert rollout.outcome == "incomplete"
    page = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert 'id="live"' not in page and "live.js" not in page
    assert "no result.json" in page and "incomplete" in page
    # Once result.json is there, it is finished.
    make_trial(tmp_path)
    outcome = import_trial_dir(folder)
    rollout.refresh_from_db()
    assert (rollout.status, rollout.status_reason) == ("finished", "")


def test_import_report_says_incomplete_and_no_trajectory(tmp_path, task):
    from io import StringIO

    from django.core.management import call_command

    (make_trial(tmp_path, "lib__demo_task__a") / "result.json").unlink()
    shutil.rmtree(make_trial(tmp_path, "lib__demo_task__b") / "agent")
    out = StringIO()
    call_command("import_trials", str(tmp_path), stdout=out, stderr=StringIO())
    text = out.getvalue()
    assert "INCOMPLETE: no result.json" in text and "NO TRAJECTORY" in text
    assert "1 without a trajectory" in text and "1 incomplete (no result.json)" in text


# -- Harbor 0.25 and 0.26 result.json --------------------------------------------------------


def harbor_026(folder, *, exception_type: str | None, reward_valid: bool, policy: dict | None = None):
    """Turn make_trial's 0.25 result.json into 0.26's: schema_version, the exception's policy, reward_valid."""
    path = folder / "result.json"
    result = json.loads(path.read_text())
    result["schema_version"] = 1
    result["verifier_environment_mode"] = "shared"
    if exception_type:
        result["exception_info"] = {
            "exception_type": exception_type, "exception_message": "boom", "exception_traceback": "Traceback ...",
            "occurred_at": "2026-01-02T10:30:00Z",
            "policy": policy or {"should_retry": False, "should_grade": True, "has_valid_reward": reward_valid},
        }
    result["reward_valid"] = reward_valid
    write_json(path, result)
    return result


def test_harbor_026_fixture_is_what_harbor_026_reads():
    """Our 0.26 fixture validates with the installed Harbor when it is 0.26."""
    from importlib.metadata import version

    if not version("harbor").startswith("0.26"):
        pytest.skip(f"Harbor {version('harbor')} installed, not 0.26")
    import tempfile
    from pathlib import Path

    from harbor.models.trial.result import TrialResult

    folder = make_trial(Path(tempfile.mkdtemp()))
    data = harbor_026(folder, exception_type="NonZeroAgentExitCodeError", reward_valid=True)
    data["exception_info"].pop("policy")  # computed by Harbor, not read back
    data.pop("reward_valid")
    data["config"]["job_id"] = "6f1c0d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"  # make_trial's is a plain name
    result = TrialResult.model_validate(data)
    assert result.reward_valid is True and result.schema_version == 1


def test_harbor_025_and_026_results_read_alike_when_the_reward_counts(tmp_path, task):
    old = make_trial(tmp_path, "lib__demo_task__025")
    new = make_trial(tmp_path, "lib__demo_task__026")
    harbor_026(new, exception_type=None, reward_valid=True)
    for folder in (old, new):
        assert import_trial_dir(folder).outcome == "created"
    a, b = Rollout.objects.get(trial_name="lib__demo_task__025"), Rollout.objects.get(trial_name="lib__demo_task__026")
    fields = ("status", "reward", "n_steps", "cost_usd", "n_input_tokens", "agent_started_at", "verifier_fields")
    assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]


def test_harbor_026_nonzero_exit_keeps_a_valid_reward(tmp_path, task):
    folder = make_trial(tmp_path)
    harbor_026(folder, exception_type="NonZeroAgentExitCodeError", reward_valid=True)
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    assert (rollout.status, rollout.reward, rollout.exception_type) == ("finished", 0.5, "NonZeroAgentExitCodeError")


def test_harbor_026_invalid_reward_is_kept_but_not_counted(tmp_path, task):
    folder = make_trial(tmp_path)
    harbor_026(folder, exception_type="ApiRateLimitError", reward_valid=False,
               policy={"should_retry": True, "should_grade": True, "has_valid_reward": False})
    outcome = import_trial_dir(folder)
    rollout = Rollout.objects.get()
    assert rollout.reward is None and rollout.verifier_fields["reward"] == 0.5
    assert rollout.status == RolloutStatus.FAILED
    assert any("Harbor marks the reward 0.5 invalid (ApiRateLimitError)" in w for w in outcome.warnings)


def test_harbor_025_exception_with_a_reward_still_counts(tmp_path, task):
    exception = {"exception_type": "AgentTimeoutError", "exception_message": "slow", "exception_traceback": "",
                 "occurred_at": "2026-01-02T10:30:00Z"}
    import_trial_dir(make_trial(tmp_path, exception=exception))
    assert Rollout.objects.get().status == RolloutStatus.FINISHED


def test_harbor_026_valid_reward_is_never_left_out_as_an_infrastructure_error(tmp_path, task):
    """An exception our table calls infrastructure, but Harbor 0.26 says the reward counts: it counts."""
    folder = make_trial(tmp_path, reward={"reward": 0.0})
    harbor_026(folder, exception_type="SandboxCrashedError", reward_valid=True,
               policy={"should_retry": True, "should_grade": True, "has_valid_reward": True})
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    assert (rollout.reward, rollout.reward_valid, rollout.infra_error) == (0.0, True, False)
    assert rollout.outcome == "zero" and "infrastructure_error" in rollout.failure_secondary
    # The same trial from Harbor 0.25 (no verdict) is left out as before.
    other = make_trial(tmp_path, "lib__demo_task__025", reward={"reward": 0.0}, exception={
        "exception_type": "SandboxCrashedError", "exception_message": "boom", "exception_traceback": "",
        "occurred_at": "2026-01-02T10:30:00Z"})
    import_trial_dir(other)
    assert Rollout.objects.get(trial_name="lib__demo_task__025").infra_error is True


@pytest.mark.parametrize(
    ("harness", "fmt"),
    [("mini-swe-agent", "mini-swe-agent trajectory"), ("gemini-cli", "gemini-cli session"),
     ("openhands", "OpenHands event list")],
)
def test_a_native_log_saved_as_trajectory_json_is_converted_not_the_trial_refused(tmp_path, task, harness, fmt):
    """Such a trial failed whole: its reward and result were lost."""
    folder = make_trial(tmp_path)
    content = {"mini-swe-agent": native_logs.mini_swe_agent, "gemini-cli": native_logs.gemini_cli,
               "openhands": native_logs.openhands_events}[harness]()
    (folder / "agent" / "trajectory.json").write_text(json.dumps(content))
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    assert outcome.trajectory == f"converted from {fmt}"
    assert any(f"agent/trajectory.json is a {fmt}, not an ATIF trajectory: converted" in w for w in outcome.warnings)
    rollout = Rollout.objects.get()
    assert rollout.reward is not None
    assert DIFF_LINES in rollout.steps.get(kinds__contains=" edit ").diff


def test_a_native_log_saved_as_trajectory_json_that_does_not_convert_keeps_the_trial(tmp_path, task):
    folder = make_trial(tmp_path)
    (folder / "agent" / "trajectory.json").write_text(json.dumps({"sessionId": "s1", "messages": "not a list"}))
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created" and outcome.trajectory == "none"
    [warning] = [w for w in outcome.warnings if w.startswith("no trajectory")]
    assert "agent/trajectory.json is a gemini-cli session" in warning
    assert Rollout.objects.get().reward is not None
