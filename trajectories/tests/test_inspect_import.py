"""Inspect AI logs in: real .eval/.json logs made here by running a tiny task on mockllm."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from trajectories.storing.inspect_import import import_inspect_log
from trajectories.reading.inspect_log import InspectLogError, read_log
from trajectories.models import Rollout, Step

from .inspect_runs import make_eval_log, normalised

REBENCH_TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench"
RUNTIMES = [4.0, 0.5, 0.2]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect-logs")
    return {
        "eval": make_eval_log(folder / "eval", RUNTIMES, final_runtime=0.3, samples=2),
        "json": make_eval_log(folder / "json", [2.0], log_format="json"),
        "other_task": make_eval_log(folder / "other", [1.0], task_name="no_such_task"),
    }


@pytest.fixture
def version(db):
    report = import_tasks(REBENCH_TASKS, version="rebench-examples")
    assert report.ok, report.summary()
    return BenchmarkVersion.objects.get(name="rebench-examples")


def test_the_reader_gives_one_folder_per_sample_with_its_score_log(logs):
    folders = read_log(logs["eval"])
    assert len(folders) == 2
    folder = folders[0]
    assert folder.task_name == "window_sums" and folder.model_provider == "mockllm" and folder.agent_name == "scored_agent"
    # The intermediate scores: one per call of the scoring tool (not for ls).
    assert [e["raw"] for e in folder.score_log] == RUNTIMES
    assert [e["score"] for e in folder.score_log] == pytest.approx([round(normalised(r), 6) for r in RUNTIMES])
    times = [e["t"] for e in folder.score_log]
    assert times == sorted(times) and times[0] >= 0
    assert folder.reward == pytest.approx(round(normalised(0.3), 6))  # the final score
    assert folder.verifier_fields["metric"] == 0.3
    assert (folder.n_input_tokens, folder.n_output_tokens, folder.cost_usd) == (606, 85, pytest.approx(0.05))
    agent = [s for s in folder.trajectory.steps if s.source == "agent"]
    assert [c.arguments for s in agent for c in s.tool_calls][1] == {"cmd": "python3 /app/score.py --runtime 4.0"}
    assert "runtime_ms: 4.0000" in agent[1].observations[0].content


@pytest.mark.django_db
def test_import_makes_rollouts_with_analysed_steps(logs, version):
    outcomes = import_inspect_log(logs["eval"])
    assert [o.outcome for o in outcomes] == ["created", "created"], [o.error for o in outcomes]
    rollout = Rollout.objects.get(pk=outcomes[0].rollout_id)
    assert rollout.task.name == "window_sums" and rollout.task.version == version
    assert str(rollout.harness) == "scored_agent" and rollout.model.name == "model"
    assert rollout.reward == pytest.approx(normalised(0.3), abs=1e-6)
    assert [e["raw"] for e in rollout.score_log] == RUNTIMES
    assert (rollout.n_input_tokens, rollout.n_output_tokens) == (606, 85) and rollout.cost_usd == pytest.approx(0.05)
    # The same analysis as Harbor steps: the scoring calls are benchmark calls with their metric.
    benchmarks = Step.objects.filter(rollout=rollout, kinds__contains=" benchmark ").order_by("position")
    assert [s.metric_value for s in benchmarks] == RUNTIMES
    assert rollout.n_benchmark_calls == 3
    assert rollout.best_metric == 0.2
    assert benchmarks[0].metric_score == pytest.approx(normalised(4.0), abs=1e-6)
    assert Step.objects.filter(rollout=rollout, kinds__contains=" inspect ").exists()  # ls /app
    assert [r.index for r in Rollout.objects.order_by("trial_name")] == [0, 1]


@pytest.mark.django_db
def test_import_again_changes_nothing(logs, version):
    first = import_inspect_log(logs["eval"])
    before = list(Rollout.objects.order_by("id").values_list("id", "updated_at"))
    again = import_inspect_log(logs["eval"])
    assert [o.outcome for o in again] == ["unchanged", "unchanged"]
    assert [o.rollout_id for o in again] == [o.rollout_id for o in first]
    assert list(Rollout.objects.order_by("id").values_list("id", "updated_at")) == before


@pytest.mark.django_db
def test_json_logs_import_too(logs, version):
    outcomes = import_inspect_log(logs["json"])
    assert [o.outcome for o in outcomes] == ["created"]
    assert Rollout.objects.get().score_log[-1]["raw"] == 2.0


@pytest.mark.django_db
def test_a_damaged_log_fails_alone_with_a_clear_message(logs, version, tmp_path):
    damaged = tmp_path / "damaged.eval"
    damaged.write_bytes(logs["eval"].read_bytes()[:300])
    outcomes = import_inspect_log(damaged)
    assert len(outcomes) == 1 and not outcomes[0].ok
    assert str(damaged) in outcomes[0].error and "not a readable Inspect log" in outcomes[0].error
    assert Rollout.objects.count() == 0
    with pytest.raises(InspectLogError):
        read_log(damaged)
    # The good log beside it still imports, through the command.
    (tmp_path / "good.eval").write_bytes(logs["eval"].read_bytes())
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 log"):
        call_command("import_inspect", str(tmp_path), stdout=out)
    assert "failed: " in out.getvalue() and "2 created" in out.getvalue()
    assert Rollout.objects.count() == 2


@pytest.mark.django_db
def test_a_sample_that_cannot_be_stored_rolls_back_its_whole_log(logs, version):
    outcomes = import_inspect_log(logs["other_task"])
    assert len(outcomes) == 1 and "no_such_task" in outcomes[0].error and "nothing of this log" in outcomes[0].error
    assert Rollout.objects.count() == 0


@pytest.mark.django_db
def test_a_human_cohort_run(logs, version):
    outcomes = import_inspect_log(logs["json"], human_cohort="Human experts, 8 h")
    rollout = Rollout.objects.get(pk=outcomes[0].rollout_id)
    assert rollout.model.kind == "human" and rollout.model.name == "Human experts, 8 h" and str(rollout.harness) == "human"


@pytest.mark.django_db
def test_import_trials_takes_an_inspect_log_too(logs, version):
    out = io.StringIO()
    call_command("import_trials", str(logs["eval"]), stdout=out)
    assert Rollout.objects.count() == 2
    call_command("import_trials", str(logs["eval"]), stdout=out)
    assert Rollout.objects.count() == 2 and "2 unchanged" in out.getvalue()


@pytest.fixture(scope="module")
def qa_logs(tmp_path_factory):
    from .inspect_runs import make_qa_log

    folder = tmp_path_factory.mktemp("inspect-qa")
    return {
        "graded": make_qa_log(folder / "graded", {"q1": "Paris", "q2": "Lyon", "q3": None}, errors=("q3",)),
        "parallel": make_qa_log(folder / "parallel", {"p1": "Paris"}, parallel_submit=True),
    }


def test_letter_scores_are_read_as_inspect_reads_them_and_an_errored_sample_is_left_out(qa_logs):
    """includes() scores "C"/"I": every such rollout had reward null (Avg@k 0), and the errored one counted 0."""
    by_id = {f.config["inspect"]["sample_id"]: f for f in read_log(qa_logs["graded"])}
    assert (by_id["q1"].reward, by_id["q1"].verifier_fields["includes"]) == (1.0, "C")
    assert (by_id["q2"].reward, by_id["q2"].verifier_fields["includes"]) == (0.0, "I")
    errored = by_id["q3"]
    assert errored.reward is None and "the sandbox went away" in errored.excluded
    assert not by_id["q1"].excluded


@pytest.mark.parametrize("value, expected", [("C", 1.0), ("I", 0.0), ("P", 0.5), ("N", 0.0), (0.25, 0.25), (True, 1.0),
                                             ({"a": 1}, None), (None, None)])
def test_score_values_as_inspects_value_to_float(value, expected):
    from trajectories.reading.inspect_log import score_value

    assert score_value(value) == expected


@pytest.mark.django_db
def test_submit_beside_another_call_is_a_step_of_its_own_and_steps_keep_the_working_clock(qa_logs):
    from tasks.models import Task

    (folder,) = read_log(qa_logs["parallel"])
    agent = [s for s in folder.trajectory.steps if s.source == "agent"]
    assert [[c.function_name for c in s.tool_calls] for s in agent[:2]] == [["bash"], ["submit"]]
    offsets = [(s.timestamp - folder.started_at).total_seconds() for s in agent]
    assert all(0 <= t <= 60 for t in offsets) and offsets == sorted(offsets)
    version = BenchmarkVersion.objects.create(name="qa")
    Task.objects.create(version=version, name="capitals", category="qa", metric="accuracy", direction="higher",
                        baseline_score=0.0, reference_score=1.0)
    import_inspect_log(qa_logs["parallel"], version="qa")
    kinds = [step.kinds for step in Step.objects.filter(rollout__trial_name__contains="__p1__", source="agent")
             .order_by("position")]
    assert "submit" in kinds[1] and "submit" not in kinds[0], kinds


@pytest.mark.django_db
def test_a_log_imported_again_into_another_version_is_refused_in_one_line(qa_logs):
    """It said "3 unchanged", exited 0 and left the samples in the first version."""
    from tasks.models import Task

    for name in ("qa", "qa-2"):
        version = BenchmarkVersion.objects.create(name=name)
        Task.objects.create(version=version, name="capitals", category="qa", metric="accuracy", direction="higher",
                            baseline_score=0.0, reference_score=1.0)
    call_command("import_inspect", str(qa_logs["graded"]), "--version", "qa", stdout=io.StringIO())
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 log"):
        call_command("import_inspect", str(qa_logs["graded"]), "--version", "qa-2", stdout=out)
    (line,) = [line for line in out.getvalue().splitlines() if line.startswith("failed:")]
    assert "already imported into version qa as rollout" in line and "nothing of this log was imported" in line
    assert set(Rollout.objects.values_list("task__version__name", flat=True)) == {"qa"}
    # Into its own version again, it is unchanged, as before.
    call_command("import_inspect", str(qa_logs["graded"]), "--version", "qa", stdout=out)
    assert "3 unchanged" in out.getvalue()
