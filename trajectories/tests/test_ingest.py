"""Importing Harbor trial folders into rollouts, steps, tool calls and observations."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone

import pytest
from django.db import connection

from agents.models import AgentModel, Harness
from agents.services import ensure_harness, ensure_model, normalise_model_name
from trajectories.models import Observation, Rollout, RolloutStatus, Step, SubTrajectory, ToolCall
from trajectories.services import import_path, import_trial_dir

from .trialdata import make_task, make_trial, trajectory, write_json

pytestmark = pytest.mark.django_db

OPUS = "opus4.6__2026-04-26__2TyoFTQ"
GROK = "grok4.20__2026-04-27__dJkbgCB"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


# -- The real AutoLab trials -----------------------------------------------------


@pytest.fixture
def real_import(shared_trials_dir):
    make_task("flux2_klein_lora")
    report = import_path(shared_trials_dir)
    return shared_trials_dir, report


def test_real_trials_import_as_two_rollouts(real_import):
    _, report = real_import
    assert report.ok, report.as_dict()
    assert [o.outcome for o in report.outcomes] == ["created", "created"]
    assert Rollout.objects.count() == 2
    assert {r.task.name for r in Rollout.objects.all()} == {"flux2_klein_lora"}


def test_opus_rollout_matches_its_files(real_import):
    trials, _ = real_import
    rollout = Rollout.objects.get(trial_name="musubi-tuner__flux2_klein_lora__2TyoFTQ")
    assert rollout.model.name == "claude-opus-4.6"
    # Called through an OpenAI-compatible gateway, made by Anthropic, weights closed.
    assert rollout.model.litellm_model == "openai/claude-opus-4.6"
    assert (rollout.model.provider, rollout.model.open_weight) == ("anthropic", False)
    grok = Rollout.objects.get(trial_name="musubi-tuner__flux2_klein_lora__dJkbgCB").model
    assert (grok.provider, grok.open_weight) == ("xai", False)
    assert (rollout.harness.name, rollout.harness.version) == ("terminus-2", "2.0.0")
    assert rollout.status == RolloutStatus.FINISHED
    assert rollout.reward == pytest.approx(0.9102)
    assert rollout.verifier_fields["baseline_score_measured"] == pytest.approx(0.4918)
    assert rollout.n_episodes == 138
    assert (rollout.n_input_tokens, rollout.n_cache_tokens, rollout.n_output_tokens) == (14_491_493, 0, 21_042)
    assert rollout.cost_usd is None
    assert rollout.agent_started_at == utc("2026-04-26T12:51:11.467245Z")
    assert rollout.agent_finished_at == utc("2026-04-26T15:11:10.596312Z")
    assert rollout.environment_setup_started_at == utc("2026-04-26T12:33:32.102569Z")
    assert rollout.verifier_finished_at == utc("2026-04-26T15:21:17.106894Z")
    assert rollout.trial_id == "cdb309d4-2d9d-4c15-8068-407e865d5458"
    assert rollout.job_id == "1e3d2bdd-a9a6-49f3-a696-11ffe70eb935"
    assert rollout.schema_version == "ATIF-v1.6"
    assert rollout.validation_warnings == []
    assert len(rollout.api_request_times_msec) == 138
    assert "FLUX.2 klein LoRA Quality Verifier" in rollout.verifier_stdout
    assert rollout.config["agent"]["model_name"] == "openai/claude-opus-4.6"
    assert len(rollout.checksum) == 64
    assert rollout.source_path == str(trials / OPUS)
    assert rollout.index == 0
    # What it changed overall: batch size 2 -> 1, and train.sh in three steps.
    assert [(f["path"], f["step_ids"], f["start_known"], f["end_known"]) for f in rollout.files_changed] == [
        ("/app/dataset.toml", [9], True, True),
        ("/app/train.sh", [9, 11, 14], True, True),
    ]
    assert "-batch_size = 2\n+batch_size = 1\n" in rollout.files_changed[0]["diff"]


def test_opus_steps_match_the_trajectory_file(real_import):
    trials, _ = real_import
    data = json.loads((trials / OPUS / "agent" / "trajectory.json").read_text())
    rollout = Rollout.objects.get(trial_name="musubi-tuner__flux2_klein_lora__2TyoFTQ")
    steps = list(rollout.steps.filter(subtrajectory=None).order_by("position"))
    assert rollout.n_steps == len(steps) == len(data["steps"]) == 139
    for row, raw in zip(steps, data["steps"]):
        assert row.step_id == raw["step_id"]
        assert row.timestamp == utc(raw["timestamp"])
        assert row.source == raw["source"]
        metrics = raw.get("metrics", {})
        assert row.prompt_tokens == metrics.get("prompt_tokens")
        assert row.completion_tokens == metrics.get("completion_tokens")
        assert row.message == raw["message"]
    assert steps[0].elapsed_sec == pytest.approx((utc(data["steps"][0]["timestamp"]) - rollout.agent_started_at).total_seconds())
    assert sum(s.completion_tokens or 0 for s in steps) == data["final_metrics"]["total_completion_tokens"]
    n_calls = sum(len(s.get("tool_calls") or []) for s in data["steps"])
    n_results = sum(len((s.get("observation") or {}).get("results", [])) for s in data["steps"])
    assert ToolCall.objects.filter(step__rollout=rollout).count() == n_calls
    assert Observation.objects.filter(step__rollout=rollout).count() == n_results
    first_call = ToolCall.objects.filter(step__rollout=rollout).order_by("step__position", "position").first()
    assert first_call.function_name == "bash_command"
    assert first_call.arguments == data["steps"][1]["tool_calls"][0]["arguments"]


def test_grok_rollout_keeps_the_non_numeric_verifier_reason(real_import):
    rollout = Rollout.objects.get(trial_name="musubi-tuner__flux2_klein_lora__dJkbgCB")
    assert rollout.reward == 0.0
    assert rollout.verifier_fields == {"reward": 0.0, "reason": "no_lora_file"}
    assert rollout.n_steps == rollout.steps.count() == 14
    assert rollout.model.name == "xai-grok-4-20-reasoning"
    assert (rollout.n_input_tokens, rollout.n_cache_tokens, rollout.n_output_tokens) == (251_465, 196_822, 5_356)
    assert rollout.n_episodes == 13
    assert rollout.steps.get(step_id=2).reasoning.startswith("The task is to train a LoRA")


def test_real_reimport_is_unchanged(real_import):
    trials, _ = real_import
    before = {r.pk: r.checksum for r in Rollout.objects.all()}
    n_steps = Step.objects.count()
    report = import_path(trials)
    assert [o.outcome for o in report.outcomes] == ["unchanged", "unchanged"]
    assert {r.pk: r.checksum for r in Rollout.objects.all()} == before
    assert Step.objects.count() == n_steps


# -- Synthetic trials --------------------------------------------------------------


@pytest.fixture
def task(db):
    return make_task("demo_task")


def test_import_one_trial_folder(tmp_path, task):
    folder = make_trial(tmp_path, reward={"reward": 0.25, "correctness": True, "metric": None})
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get(pk=outcome.rollout_id)
    assert rollout.task == task
    assert rollout.model.name == "test-model"
    assert rollout.verifier_fields == {"reward": 0.25, "correctness": True, "metric": None}
    assert rollout.n_steps == 3
    assert rollout.cost_usd == 0.25
    assert rollout.verifier_stdout == "verifier says hello\n"
    step = rollout.steps.get(step_id=2)
    assert step.elapsed_sec == 60.0
    assert (step.prompt_tokens, step.completion_tokens, step.cached_tokens) == (100, 10, 0)
    observation = step.observations.get()
    assert observation.tool_call == step.tool_calls.get()
    assert observation.content == "time: 10.0 ms"


def test_analysis_results_are_stored_on_steps_and_rollout(tmp_path, task):
    """The real analysis of a small trial, with figures worked out by hand.

    Log-stretch from baseline 20 ms to reference 5 ms: 10 ms scores
    0.5 * ln(20/10) / ln(20/5) = 0.25, 9 ms 0.5 * ln(20/9) / ln(4) = 0.2880.
    """
    task.baseline_score, task.reference_score, task.benchmark_pattern = 20.0, 5.0, r"python3 bench\.py"
    task.save()
    data = trajectory(2)
    # Step 2 writes a file, then runs the benchmark (10 ms); step 3 runs it again (9 ms).
    data["steps"][1]["tool_calls"][0]["arguments"]["keystrokes"] = (
        "cat > /app/fast.py <<'EOF'\nprint(1)\nEOF\npython3 bench.py --run 0\n"
    )
    import_trial_dir(make_trial(tmp_path, trajectory_data=data))
    rollout = Rollout.objects.get()
    assert (rollout.n_benchmark_calls, rollout.n_edits, rollout.best_metric) == (2, 1, 9.0)
    assert rollout.best_score == pytest.approx(0.2880, abs=1e-4)
    assert (rollout.first_benchmark_sec, rollout.last_improvement_sec) == (60.0, 120.0)
    assert rollout.budget_used_fraction == pytest.approx(120 / 7200)
    assert [(p["step_id"], p["t"], p["metric"], p["best_metric"], p["improved"]) for p in rollout.curve] == [
        (2, 60.0, 10.0, 10.0, True),
        (3, 120.0, 9.0, 9.0, True),
    ]
    assert rollout.curve[0]["score"] == pytest.approx(0.25)
    step = rollout.steps.get(step_id=2)
    assert step.kinds == " benchmark edit " and step.kind_list == ["benchmark", "edit"]
    assert (step.metric_value, step.metric_unit, step.metric_score, step.metric_status) == (10.0, "ms", pytest.approx(0.25), "parsed")
    assert "--- /dev/null\n+++ b/app/fast.py\n@@ -0,0 +1 @@\n+print(1)\n" in step.diff
    [fast] = rollout.files_changed
    assert (fast["path"], fast["step_ids"], fast["start_known"], fast["end_known"]) == ("/app/fast.py", [2], False, True)
    assert step.tool_calls.get().kinds == " benchmark edit "
    assert rollout.steps.get(step_id=3).kinds == " benchmark "
    assert Step.objects.filter(kinds__contains=" edit ").count() == 1
    assert rollout.steps.get(step_id=1).kinds == ""


def test_changed_files_are_stored_within_their_share_of_characters(monkeypatch):
    from trajectories.storing import ingest
    from trajectories.reading.parsed import FileChange

    monkeypatch.setattr(ingest, "FILES_CHANGED_CHARS", 100)
    small = FileChange("/app/a.py", [2], "--- a/app/a.py\n+++ b/app/a.py\n@@ -1 +1 @@\n-x\n+y\n", True, True)
    big = FileChange("/app/data.csv", [3, 4], "".join(f"+row {n}\n" for n in range(40)), True, False)
    later = FileChange("/app/z.py", [5], "+z\n", True, True)
    stored = ingest.files_changed([small, big, later])
    assert stored[0] == {"path": "/app/a.py", "step_ids": [2], "diff": small.diff, "end_known": True, "start_known": True}
    assert stored[1]["diff"].startswith("+row 0\n") and stored[1]["diff"].endswith(
        "# ... cut: the net diff of /app/data.csv has 310 characters\n"
    )
    assert len(stored[1]["diff"].splitlines()) < 40
    assert stored[2]["diff"] == "# ... cut: the net diff of /app/z.py has 3 characters\n"
    assert [row["step_ids"] for row in stored] == [[2], [3, 4], [5]]


def test_a_failing_analysis_still_imports_with_a_warning(tmp_path, task, monkeypatch):
    from trajectories.storing import ingest

    def broken(*args):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(ingest.analysis, "analyse_rollout", broken)
    assert import_trial_dir(make_trial(tmp_path)).outcome == "created"
    rollout = Rollout.objects.get()
    assert rollout.n_steps == 3 and any("analysis failed" in w for w in rollout.validation_warnings)


def test_same_trial_twice_is_unchanged(tmp_path, task):
    folder = make_trial(tmp_path)
    first = import_trial_dir(folder)
    second = import_trial_dir(folder)
    assert (first.outcome, second.outcome) == ("created", "unchanged")
    assert second.rollout_id == first.rollout_id
    assert Step.objects.count() == 3


def test_rerun_trial_replaces_steps_and_keeps_the_row(tmp_path, task):
    folder = make_trial(tmp_path, n_agent_steps=2)
    first = import_trial_dir(folder)
    old_step_ids = set(Step.objects.values_list("id", flat=True))
    # A re-run: same trial name, new content from its first step on.
    make_trial(tmp_path, n_agent_steps=4, reward={"reward": 0.75}, start=datetime(2026, 5, 1, tzinfo=timezone.utc))
    second = import_trial_dir(folder)
    assert second.outcome == "updated"
    assert second.rollout_id == first.rollout_id
    rollout = Rollout.objects.get()
    assert rollout.n_steps == 5 and rollout.steps.count() == 5
    assert rollout.reward == 0.75
    assert not old_step_ids & set(Step.objects.values_list("id", flat=True))


def test_unknown_task_is_reported_not_guessed(tmp_path, task):
    folder = make_trial(tmp_path, "lib__other_task__x1", task_name="lib__other_task")
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "failed"
    assert "no registered task matches 'lib__other_task'" in outcome.error
    assert "'other_task'" in outcome.error
    assert not Rollout.objects.exists()


def test_malformed_trajectory_leaves_nothing(tmp_path, task):
    folder = make_trial(tmp_path)
    (folder / "agent" / "trajectory.json").write_text('{"steps": [ {"step_id": 1,')
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "failed"
    assert "trajectory.json" in outcome.error and "not valid JSON" in outcome.error
    assert not Rollout.objects.exists() and not Step.objects.exists()


def test_trajectory_without_steps_list_is_an_error_naming_the_file(tmp_path, task):
    folder = make_trial(tmp_path)
    write_json(folder / "agent" / "trajectory.json", {"schema_version": "ATIF-v1.6", "steps": "none"})
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "failed"
    assert "trajectory.json" in outcome.error and "no list of steps" in outcome.error


def test_malformed_result_json_names_the_file(tmp_path, task):
    folder = make_trial(tmp_path)
    (folder / "result.json").write_text("[1, 2")
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "failed"
    assert "result.json" in outcome.error
    assert not Rollout.objects.exists()


def test_a_failure_while_storing_rolls_back_the_whole_trial(tmp_path, task, monkeypatch):
    folder = make_trial(tmp_path)
    from trajectories.storing import ingest

    real = ingest.insert_rows

    def explode(model, rows):
        if model is Observation:
            raise RuntimeError("disk full")
        real(model, rows)

    monkeypatch.setattr(ingest, "insert_rows", explode)
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "failed" and "disk full" in outcome.error
    assert not Rollout.objects.exists() and not Step.objects.exists() and not ToolCall.objects.exists()


def test_failed_update_keeps_the_old_rollout(tmp_path, task):
    folder = make_trial(tmp_path)
    import_trial_dir(folder)
    (folder / "agent" / "trajectory.json").write_text("not json")
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "failed"
    assert Rollout.objects.get().n_steps == 3 and Step.objects.count() == 3


def test_invalid_trajectory_imports_with_warnings(tmp_path, task):
    data = trajectory(2)
    data["steps"][1]["source"] = "robot"
    data["steps"][2]["bogus"] = 1
    folder = make_trial(tmp_path, trajectory_data=data)
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created"
    rollout = Rollout.objects.get()
    assert rollout.n_steps == 3
    assert any("source" in w for w in rollout.validation_warnings)
    assert rollout.steps.get(step_id=3).extra["unknown"] == {"bogus": 1}


def test_exception_info_and_failed_status(tmp_path, task):
    exception = {
        "exception_type": "AgentTimeoutError",
        "exception_message": "Agent timed out after 7200s",
        "exception_traceback": "Traceback ...",
        "occurred_at": "2026-01-02T12:00:00Z",
    }
    folder = make_trial(tmp_path, exception=exception, reward={"reward": 0.1})
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    assert (rollout.exception_type, rollout.exception_message) == ("AgentTimeoutError", "Agent timed out after 7200s")
    assert rollout.status == RolloutStatus.FINISHED  # a reward was still given

    shutil.rmtree(folder / "verifier")
    result = json.loads((folder / "result.json").read_text())
    result["verifier_result"] = None
    write_json(folder / "result.json", result)
    import_trial_dir(folder)
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.FAILED and rollout.reward is None


def test_a_rollout_keeps_the_number_it_was_given_for_good(tmp_path, task):
    """Numbers were recomputed in run order at each import: an earlier trial imported later took "#1" from another."""
    late = make_trial(tmp_path, "lib__demo_task__b", start=datetime(2026, 3, 1, tzinfo=timezone.utc))
    early = make_trial(tmp_path, "lib__demo_task__c", start=datetime(2026, 2, 1, tzinfo=timezone.utc))
    import_trial_dir(late)
    assert Rollout.objects.get(trial_name="lib__demo_task__b").index == 0
    import_trial_dir(early)
    indexes = dict(Rollout.objects.values_list("trial_name", "index"))
    assert indexes == {"lib__demo_task__b": 0, "lib__demo_task__c": 1}
    (late / "result.json").write_text((late / "result.json").read_text().replace("}", ", \"note\": 1}", 1))
    import_trial_dir(late)  # changed: imported again
    assert dict(Rollout.objects.values_list("trial_name", "index")) == indexes  # again: the same numbers
    other_model = make_trial(tmp_path, "lib__demo_task__a", model="openai/other-model")
    import_trial_dir(other_model)
    assert Rollout.objects.get(trial_name="lib__demo_task__a").index == 0


def test_job_folder_and_folder_of_jobs(tmp_path, task):
    for job in ("job-a", "job-b"):
        for n in range(2):
            make_trial(tmp_path / "jobs" / job, f"lib__demo_task__{job}{n}")
    report = import_path(tmp_path / "jobs")
    assert report.total == 4 and report.counts["created"] == 4
    report = import_path(tmp_path / "jobs" / "job-a")
    assert report.counts["unchanged"] == 2


def test_harbor_job_folder_with_its_own_config_and_result(tmp_path, task):
    job = tmp_path / "2026-01-02__10-00-00"
    write_json(job / "config.json", {"job_name": "2026-01-02__10-00-00", "jobs_dir": "jobs", "n_attempts": 1})
    write_json(job / "result.json", {"id": "x", "started_at": "2026-01-02T10:00:00Z", "n_total_trials": 2, "stats": {}})
    make_trial(job, "lib__demo_task__one")
    make_trial(job, "lib__demo_task__two")
    report = import_path(job)
    assert report.ok, report.as_dict()
    assert report.total == 2
    assert sorted(Rollout.objects.values_list("trial_name", flat=True)) == ["lib__demo_task__one", "lib__demo_task__two"]


def test_trial_that_failed_before_the_agent_ran(tmp_path, task):
    exception = {
        "exception_type": "EnvironmentStartTimeoutError",
        "exception_message": "environment did not start",
        "exception_traceback": "Traceback (most recent call last): ...",
        "occurred_at": "2026-01-02T10:00:00Z",
    }
    folder = make_trial(tmp_path, exception=exception, reward={})
    (folder / "agent" / "trajectory.json").unlink()
    shutil.rmtree(folder / "verifier")
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get()
    assert rollout.n_steps == 0 and rollout.status == RolloutStatus.FAILED
    assert rollout.exception_type == "EnvironmentStartTimeoutError" and rollout.reward is None


def test_exception_txt_without_result(tmp_path, task):
    folder = make_trial(tmp_path, finished=False)
    (folder / "exception.txt").write_text("Traceback (most recent call last):\n  File x\nharbor.errors.AgentTimeoutError: too slow\n")
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    assert rollout.exception_type == "AgentTimeoutError" and "too slow" in rollout.exception_traceback


def test_empty_folder_is_an_error(tmp_path, task):
    report = import_path(tmp_path)
    assert not report.ok
    assert "no Harbor trial folders" in report.errors[0]


def test_should_stop_ends_between_trials_and_a_rerun_continues(tmp_path, task):
    for n in range(3):
        make_trial(tmp_path, f"lib__demo_task__{n}")
    seen = []
    report = import_path(tmp_path, on_progress=lambda rep, out: seen.append(out.trial_name), should_stop=lambda: len(seen) >= 1)
    assert report.interrupted and report.done == 1 and not report.ok
    report = import_path(tmp_path)
    assert report.counts == {"created": 2, "updated": 0, "unchanged": 1, "failed": 0}


def test_live_trial_then_completed(tmp_path, task):
    folder = make_trial(tmp_path, finished=False, n_agent_steps=1)
    outcome = import_trial_dir(folder, live=True)
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get()
    # Not our runner's: a trial without result.json is incomplete, never "running".
    assert rollout.status == RolloutStatus.INCOMPLETE
    assert rollout.n_steps == 2 and rollout.reward is None
    # Tokens so far come from the trajectory's running totals.
    assert rollout.n_input_tokens == 100 and rollout.n_output_tokens == 10
    assert rollout.agent_started_at is not None

    make_trial(tmp_path, finished=False, n_agent_steps=3)
    assert import_trial_dir(folder, live=True).outcome == "updated"
    rollout.refresh_from_db()
    assert rollout.n_steps == rollout.steps.count() == 4

    make_trial(tmp_path, finished=True, n_agent_steps=4)
    outcome = import_trial_dir(folder)
    rollout.refresh_from_db()
    assert outcome.rollout_id == rollout.pk
    assert rollout.status == RolloutStatus.FINISHED
    assert rollout.n_steps == 5 and rollout.reward == 0.5 and rollout.n_input_tokens == 1000


def test_growing_trajectory_keeps_stored_steps_and_revises_their_analysis(tmp_path, task, monkeypatch):
    from trajectories.storing import ingest

    real = ingest.analysis.analyse_rollout

    def analyse(steps, spec, agent_started_at):
        # Like the real analysis, a later step can revise an earlier one.
        result = real(steps, spec, agent_started_at)
        result.steps[1].kinds = ["benchmark"] if len(steps) > 2 else ["edit"]
        result.steps[1].call_kinds = [["benchmark"]] if len(steps) > 2 else [[]]
        return result

    monkeypatch.setattr(ingest.analysis, "analyse_rollout", analyse)
    folder = make_trial(tmp_path, finished=False, n_agent_steps=1)
    import_trial_dir(folder, live=True)
    before = dict(Step.objects.values_list("step_id", "id"))
    assert Step.objects.get(step_id=2).kinds == " edit "

    make_trial(tmp_path, finished=False, n_agent_steps=3)
    assert import_trial_dir(folder, live=True).outcome == "updated"
    after = dict(Step.objects.values_list("step_id", "id"))
    assert {k: after[k] for k in before} == before  # stored steps kept their rows
    assert sorted(after) == [1, 2, 3, 4]
    step = Step.objects.get(step_id=2)
    assert step.kinds == " benchmark " and step.tool_calls.get().kinds == " benchmark "
    assert Observation.objects.filter(step__step_id=4).count() == 1
    assert Observation.objects.get(step__step_id=4).tool_call == ToolCall.objects.get(step__step_id=4)

    # A step rewritten in place (not a pure append) replaces everything.
    data = trajectory(3)
    data["steps"][1]["message"] = "something else"
    make_trial(tmp_path, finished=False, trajectory_data=data)
    import_trial_dir(folder, live=True)
    assert Step.objects.get(step_id=2).message == "something else"
    assert not set(before.values()) & set(Step.objects.values_list("id", flat=True))


def test_runner_rollout_is_updated_in_place(tmp_path, task):
    """The runner imports its running rollout's folder into that rollout, which keeps its status (the runner's)."""
    model = ensure_model("openai/test-model")
    harness = ensure_harness("terminus-2", "2.0.0")
    rollout = Rollout.objects.create(
        task=task, model=model, harness=harness, trial_name="lib__demo_task__abc1234", status=RolloutStatus.RUNNING,
    )
    folder = make_trial(tmp_path, finished=False)
    outcome = import_trial_dir(folder, rollout=rollout, live=True)
    assert outcome.rollout_id == rollout.pk
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.RUNNING and rollout.events.count() == 0
    assert rollout.n_steps == 3

    make_trial(tmp_path, finished=True)
    import_trial_dir(folder, rollout=rollout)
    rollout.refresh_from_db()
    # The import brings the trial's data; the runner's status is evaluations.running.lifecycle's to change.
    assert rollout.status == RolloutStatus.RUNNING and rollout.events.count() == 0
    assert rollout.reward is not None and rollout.n_steps == 3
    assert Rollout.objects.count() == 1


def test_live_read_retries_a_half_written_trajectory(tmp_path, task, monkeypatch):
    folder = make_trial(tmp_path, finished=False)
    good = (folder / "agent" / "trajectory.json").read_bytes()
    (folder / "agent" / "trajectory.json").write_bytes(good[: len(good) // 2])
    from trajectories.reading import json_data

    real_sleep = json_data.time.sleep

    def sleep_and_finish_writing(seconds):
        (folder / "agent" / "trajectory.json").write_bytes(good)
        real_sleep(0)

    monkeypatch.setattr(json_data.time, "sleep", sleep_and_finish_writing)
    outcome = import_trial_dir(folder, live=True)
    assert outcome.outcome == "created", outcome.error
    assert Rollout.objects.get().n_steps == 3


def test_summarisation_and_embedded_subagents(tmp_path, task):
    data = trajectory(3)
    data["schema_version"] = "ATIF-v1.7"
    data["steps"][2]["observation"]["results"].append(
        {"subagent_trajectory_ref": [
            {"session_id": "s-sum", "trajectory_path": "trajectory.summarization-1-summary.json"},
            {"trajectory_id": "embedded-1"},
        ]}
    )
    sub = trajectory(1)
    sub["trajectory_id"] = "embedded-1"
    data["subagent_trajectories"] = [sub]
    folder = make_trial(tmp_path, trajectory_data=data)
    summary = trajectory(1)
    summary["agent"]["name"] = "terminus-2-summarization-summary"
    write_json(folder / "agent" / "trajectory.summarization-1-summary.json", summary)
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get()
    assert rollout.validation_warnings == []
    subs = {s.name: s for s in SubTrajectory.objects.filter(rollout=rollout)}
    assert set(subs) == {"trajectory.summarization-1-summary.json", "embedded-1"}
    spawner = rollout.steps.get(subtrajectory=None, step_id=3)
    assert subs["embedded-1"].parent_step == spawner
    assert subs["trajectory.summarization-1-summary.json"].parent_step == spawner
    assert subs["trajectory.summarization-1-summary.json"].agent_name == "terminus-2-summarization-summary"
    assert subs["embedded-1"].steps.count() == 2
    assert rollout.n_steps == 4 and rollout.steps.filter(subtrajectory=None).count() == 4


def test_multimodal_message_keeps_text_and_parts(tmp_path, task):
    data = trajectory(1)
    data["steps"][0]["message"] = [
        {"type": "text", "text": "Look at this"},
        {"type": "image", "source": {"media_type": "image/png", "path": "images/a.png"}},
    ]
    folder = make_trial(tmp_path, trajectory_data=data)
    assert import_trial_dir(folder).outcome == "created"
    step = Step.objects.get(step_id=1)
    assert step.message == "Look at this"
    assert step.extra["message_parts"][0]["type"] == "image"


def test_model_name_normalisation():
    assert normalise_model_name("openai/claude-opus-4.6") == "claude-opus-4.6"
    assert normalise_model_name("openrouter/anthropic/claude-opus-4.6") == "claude-opus-4.6"
    assert normalise_model_name("meta-llama/Llama-3-70b") == "meta-llama/Llama-3-70b"
    assert normalise_model_name("gpt-5") == "gpt-5"
    assert ensure_model("openai/gpt-5", provider="openai") == ensure_model("gpt-5")
    assert AgentModel.objects.get().provider == "openai"
    assert ensure_harness("terminus-2", "2.0.0") == ensure_harness("terminus-2", "2.0.0")
    assert Harness.objects.count() == 1


def test_model_name_from_config_when_result_has_none(tmp_path, task):
    folder = make_trial(tmp_path)
    result = json.loads((folder / "result.json").read_text())
    result["agent_info"]["model_info"] = None
    write_json(folder / "result.json", result)
    import_trial_dir(folder)
    assert Rollout.objects.get().model.name == "test-model"
    # "openai/" in the config is how it was called, not who made it: unknown.
    assert Rollout.objects.get().model.provider == ""
    assert Rollout.objects.get().model.litellm_model == "openai/test-model"


def test_overlong_names_are_cut_to_fit(tmp_path, task):
    name = "lib__demo_task__" + "x" * 400
    folder = make_trial(tmp_path, name[:200], model="openai/" + "m" * 300)
    for file in ("config.json", "result.json"):
        data = json.loads((folder / file).read_text())
        data["trial_name"] = name
        write_json(folder / file, data)
    assert import_trial_dir(folder).outcome == "created"
    assert import_trial_dir(folder).outcome == "unchanged"
    rollout = Rollout.objects.get()
    assert rollout.trial_name == name[:300] and rollout.model.name == "m" * 200


def test_version_restricts_task_lookup(tmp_path, task):
    folder = make_trial(tmp_path)
    outcome = import_trial_dir(folder, version="9.9")
    assert outcome.outcome == "failed" and "9.9" in outcome.error
    assert import_trial_dir(folder, version="1.1").outcome == "created"


# -- Property: any mutated trajectory either imports or is reported -----------------


def test_mutated_trajectories_import_or_are_reported(tmp_path, task):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from trajectories.reading.atif import AtifError, parse_trajectory_data

    from .test_atif import _mutate

    folder = make_trial(tmp_path)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.data())
    def check(data):
        document = _mutate(trajectory(2), data)
        write_json(folder / "agent" / "trajectory.json", document)
        outcome = import_trial_dir(folder)
        try:
            parse_trajectory_data(document)
        except AtifError:
            assert outcome.outcome == "failed" and "trajectory.json" in outcome.error
            return
        assert outcome.outcome in ("created", "updated", "unchanged"), outcome.error
        rollout = Rollout.objects.get(pk=outcome.rollout_id)
        assert rollout.steps.filter(subtrajectory=None).count() == rollout.n_steps

    check()


def test_insert_rows_sets_ids_and_fills_left_out_fields(tmp_path, task):
    """insert_rows takes plain dicts (COPY on PostgreSQL, bulk_create elsewhere)."""
    from trajectories.storing.bulk_rows import insert_rows

    import_trial_dir(make_trial(tmp_path))
    step = Step.objects.order_by("pk").first()
    rows = [
        {"step_id": step.pk, "position": 10, "content": "tab\there\nand a \\ backslash", "extra": {"k": ["é", None]}},
        {"step_id": step.pk, "position": 11},
    ]
    insert_rows(Observation, rows)
    stored = {o.pk: o for o in Observation.objects.filter(pk__in=[row["id"] for row in rows])}
    first, second = stored[rows[0]["id"]], stored[rows[1]["id"]]
    assert (first.content, first.extra, first.position) == ("tab\there\nand a \\ backslash", {"k": ["é", None]}, 10)
    assert (second.content, second.extra, second.source_call_id, second.tool_call_id) == ("", {}, "", None)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="COPY and pipeline mode are PostgreSQL's")
@pytest.mark.parametrize(
    "content, extra",
    [
        ("tab\there\nand a \\ backslash", {"k": ["é", None]}),
        ("it's \"quoted\" %s %(name)s", {}),
        ("", {"nested": {"n": 1.5, "t": True}}),
        ("ünïcödé 🙂 \r\n", {"s": "\\N"}),
    ],
)
def test_insert_rows_without_copy_stores_what_copy_does_and_goes_in_a_pipeline(tmp_path, task, content, extra):
    """copy=False: one INSERT, which pipeline mode sends without waiting (COPY it refuses): the
    serial import stores a new rollout's chunks so while the server stores the rest. The same
    rows either way, left-out fields given their defaults."""
    from trajectories.storing.bulk_rows import insert_rows

    import_trial_dir(make_trial(tmp_path))
    step = Step.objects.order_by("pk").first()

    def rows(position):
        return [
            {"step_id": step.pk, "position": position, "content": content, "extra": extra},
            {"step_id": step.pk, "position": position + 1},
        ]

    insert_rows(Observation, rows(100), ids=False)
    with connection.connection.pipeline():
        insert_rows(Observation, rows(200), ids=False, copy=False)
    fields = ("position", "content", "extra", "source_call_id", "tool_call_id", "cut_at")
    by_copy = list(Observation.objects.filter(position__in=[100, 101]).order_by("position").values_list(*fields))
    by_insert = list(Observation.objects.filter(position__in=[200, 201]).order_by("position").values_list(*fields))
    assert [(row[0] + 100, *row[1:]) for row in by_copy] == by_insert
    assert by_insert[0][1:3] == (content, extra) and by_insert[1][1:4] == ("", {}, "")
    with pytest.raises(ValueError, match="ids=False"):
        insert_rows(Observation, rows(300), copy=False)  # an INSERT sent without waiting reads no id back


def test_insert_rows_without_ids_lets_the_database_number_them(tmp_path, task):
    """ids=False: no id is reserved first (a round trip on PostgreSQL), and the rows are stored all the same, defaults filled."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from trajectories.models import StepChunk
    from trajectories.storing.bulk_rows import insert_rows

    rollout = Rollout.objects.get(pk=import_trial_dir(make_trial(tmp_path)).rollout_id)
    StepChunk.objects.filter(rollout=rollout).delete()
    rows = [{"rollout_id": rollout.pk, "first": 0, "last": 15, "words": "'a' 'b'", "words_text": "'a' 'b'"}, {"rollout_id": rollout.pk, "first": 16, "last": 20}]
    with CaptureQueriesContext(connection) as queries:
        insert_rows(StepChunk, rows, ids=False)
    assert not [q["sql"] for q in queries.captured_queries if "nextval" in q["sql"]]
    stored = list(StepChunk.objects.filter(rollout=rollout).order_by("first").values_list("first", "last", "words_text"))
    assert stored == [(0, 15, "'a' 'b'"), (16, 20, "")]
    assert len(set(StepChunk.objects.filter(rollout=rollout).values_list("pk", flat=True))) == 2


def test_import_classifies_as_a_rerun_from_the_stored_steps_does(real_import):
    """The importer classifies from the steps in memory; the stored steps must agree."""
    from trajectories.failures import service as failure_service

    fields = ("outcome", "failure_cause", "failure_secondary", "failure_evidence", "behaviour_flags", "infra_error")
    imported = {r.pk: [getattr(r, f) for f in fields] for r in Rollout.objects.all()}
    assert sorted(values[1] for values in imported.values()) == ["", "no_artifact"]
    for rollout in Rollout.objects.select_related("task"):
        failure_service.classify_and_store(rollout)
    assert {r.pk: [getattr(r, f) for f in fields] for r in Rollout.objects.all()} == imported


def test_real_verifier_score_files_are_kept(real_import):
    opus = Rollout.objects.get(trial_name__contains="2TyoFTQ")
    grok = Rollout.objects.get(trial_name__contains="dJkbgCB")
    # AutoLab's measured anchors: the baseline the verifier measured, and the agent's.
    assert opus.verifier_outputs["baseline_score.json"]["score"] == 0.4918
    assert opus.verifier_outputs["optimized_score.json"]["score"] == 0.5643
    assert opus.verifier_outputs["optimized_score.json"]["num_prompts"] == 8
    assert grok.verifier_outputs == {}


def test_a_continued_trajectory_imports_as_one_main_trajectory(tmp_path):
    from .test_trial_folder import continued

    make_task("demo_task")
    trial, first, fresh = continued(tmp_path)
    outcome = import_trial_dir(trial)
    assert outcome.ok, outcome.error
    rollout = Rollout.objects.get(pk=outcome.rollout_id)
    main = list(rollout.steps.filter(subtrajectory__isnull=True).order_by("position"))
    assert rollout.n_steps == len(main) == len(first["steps"]) + len(fresh)
    assert [s.step_id for s in main] == list(range(1, len(main) + 1))
    assert [s.name for s in SubTrajectory.objects.filter(rollout=rollout)] == ["trajectory.summarization-1-summary.json"]
    # The joined steps are analysed with the rest: the curve runs on past the summarisation.
    assert rollout.curve[-1]["step_id"] == main[-1].step_id


@pytest.mark.skipif(connection.vendor != "postgresql", reason="synchronous_commit is PostgreSQL's")
def test_an_import_commits_without_waiting_for_the_disk(tmp_path, task, monkeypatch):
    """The setting shares a statement with the trial's lock (one round trip less), and still holds while rows go in."""
    from trajectories.storing import ingest

    seen = []
    store_analysis = ingest.store_harbor_analysis

    def spy(rollout, folder):
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            seen.append(cursor.fetchone()[0])
        store_analysis(rollout, folder)

    monkeypatch.setattr(ingest, "store_harbor_analysis", spy)
    assert import_trial_dir(make_trial(tmp_path)).outcome == "created"
    assert seen == ["off"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the numbering lock is PostgreSQL's")
@pytest.mark.django_db(transaction=True)  # each import's transaction ends, and its lock with it
def test_the_numbering_lock_is_not_held_while_steps_are_stored(tmp_path, task, monkeypatch):
    """Numbering locked its group from before the steps to the commit: two processes importing
    repeats of one task waited for each other's whole import (2,200 against 2,900 steps/s)."""
    from trajectories.storing import ingest
    from trajectories.storing.numbering import NUMBERING_LOCK

    held_while_storing = []
    real_insert_steps = ingest.insert_steps

    def insert_steps(*args, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND pid = pg_backend_pid()",
                [NUMBERING_LOCK],
            )
            held_while_storing.append(cursor.fetchone()[0])
        return real_insert_steps(*args, **kwargs)

    monkeypatch.setattr(ingest, "insert_steps", insert_steps)
    for name in ("lib__demo_task__a", "lib__demo_task__b"):
        assert import_trial_dir(make_trial(tmp_path, name)).ok
    assert held_while_storing == [0, 0]
    assert sorted(Rollout.objects.values_list("index", flat=True)) == [0, 1]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the messages counted are PostgreSQL's")
@pytest.mark.django_db(transaction=True)  # the import's own transaction, BEGIN to COMMIT
def test_a_new_trials_transaction_sends_few_messages(tmp_path, task):
    """Each message is a wait for the server: the trial's lock and the read of its row go in one,
    and so do the deferred checks, the numbering lock and the number. COPY's rows are not counted
    (Django does not see them); the rest was eight messages before 2026-12-06, six before the
    verifier's output became searchable (one statement more)."""
    from django.test.utils import CaptureQueriesContext

    assert import_trial_dir(make_trial(tmp_path, "lib__demo_task__first")).ok  # task, model and harness exist now
    with CaptureQueriesContext(connection) as queries:
        assert import_trial_dir(make_trial(tmp_path, "lib__demo_task__second")).outcome == "created"
    sent = [query["sql"] for query in queries.captured_queries]
    transaction = sent[sent.index("BEGIN") + 1 : sent.index("COMMIT")]
    # lock and row; rollout; ids; its document; its verifier text (search, issue 46); number; boards' counter
    assert len(transaction) == 7, transaction
    assert "pg_advisory_xact_lock" in transaction[0] and "checksum" in transaction[0]
    assert all(part in transaction[5] for part in ("SET CONSTRAINTS ALL IMMEDIATE", "pg_advisory_xact_lock", "RETURNING index"))
    assert sorted(Rollout.objects.values_list("index", flat=True)) == [0, 1]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plan's rows read are PostgreSQL's EXPLAIN ANALYZE")
def test_a_new_rollouts_number_reads_the_groups_end_not_the_group(task):
    """Numbering read every repeat of the group at each import: 9.6 ms a trial for a group of 6,535
    (scale_bench at a million steps), the import's rate falling with the group."""
    from trajectories.storing.numbering import group_last

    model, harness = ensure_model("openai/many-repeats"), ensure_harness("terminus-2", "2.0.0")
    Rollout.objects.bulk_create(
        [Rollout(task=task, model=model, harness=harness, trial_name=f"repeat-{i}", index=i) for i in range(1500)]
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Rollout._meta.db_table}")
    newest = Rollout.objects.get(trial_name="repeat-1499")
    query = group_last(task.pk, model.pk, harness.pk, excluding=newest.pk)
    assert list(query) == [1498]
    plan = json.loads(query.explain(format="json", analyze=True))

    def rows_read(node):
        here = node.get("Actual Rows", 0) if "Scan" in node["Node Type"] else 0
        return max([here, *(rows_read(child) for child in node.get("Plans", []))])

    assert rows_read(plan[0]["Plan"]) <= 2, plan
