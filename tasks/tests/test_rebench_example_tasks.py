"""The RE-Bench-style example tasks (examples/tasks/rebench/) run end to end on the host, in seconds."""
from __future__ import annotations

import json
import shutil
import time

import pytest

from tasks.score_record import ScoreRecord
from tasks.scoring import BEST_OF_SCORE_LOG, normalised_score, run_score
from tasks.spec import TaskSpec
from tasks.taskdir import parse_task_dir

from .test_example_tasks import EXAMPLES, Sandbox

REBENCH = EXAMPLES / "rebench"


def spec_of(name: str) -> TaskSpec:
    parsed = parse_task_dir(REBENCH / name)
    return TaskSpec(
        name=parsed.name, metric=parsed.metric, direction=parsed.direction, baseline_score=parsed.baseline_score,
        reference_score=parsed.reference_score, scoring_rule=parsed.scoring_rule, transform=parsed.transform,
        transform_offset=parsed.transform_offset, final_only=parsed.final_only, clip=False,
    )


def test_both_tasks_declare_rebench_scoring():
    window, scaling = parse_task_dir(REBENCH / "window_sums"), parse_task_dir(REBENCH / "scaling_forecast")
    assert (window.scoring_rule, window.transform, window.transform_offset, window.final_only) == ("rebench", "log", 0.0, False)
    assert (scaling.scoring_rule, scaling.transform, scaling.transform_offset, scaling.final_only) == ("rebench", "log", 1.5, True)
    for task in (window, scaling):
        assert task.has_environment and task.has_tests and task.has_solution and task.budget_sec <= 900


def record_call(sandbox: Sandbox, record: ScoreRecord) -> None:
    """What the runner does at a call of the scoring tool: a snapshot of /app/solve.py, recorded now."""
    fetched = record.folder / "fetching"
    (fetched / "app").mkdir(parents=True)
    shutil.copy(sandbox.app / "solve.py", fetched / "app" / "solve.py")
    record.add(time.time(), fetched)


def test_window_sums_rescores_the_runners_record_of_its_scoring_calls(tmp_path):
    sandbox = Sandbox(REBENCH / "window_sums", tmp_path)
    record = ScoreRecord(sandbox.logs / "scoring")
    before = time.time()
    started = sandbox.run("python3", str(sandbox.app / "score.py"))
    assert started.returncode == 0 and "runtime_ms:" in started.stdout, started.stdout + started.stderr
    # The tool asks for its call to be recorded (a line, whatever it says); the runner answers it.
    assert (sandbox.logs / "agent" / "score_requests.jsonl").read_text().count("\n") == 1
    record_call(sandbox, record)
    record_call(sandbox, record)  # a call that changed nothing: the same snapshot, measured once
    sandbox.solve()  # the reference solution, which calls the scoring tool once more
    record_call(sandbox, record)
    # What the agent writes where the old tool logged its scores counts for nothing.
    (sandbox.logs / "agent" / "score_log.jsonl").write_text('{"at": 1, "raw": 1e-300, "score": 176.99}\n')
    fields, _ = sandbox.verify()
    log = json.loads((sandbox.logs / "verifier" / "score_log.json").read_text())["entries"]
    assert len(log) == 3 and fields["score_log_entries"] == 3
    assert [entry["at"] for entry in log] == [entry["at"] for entry in record.entries]
    assert all(before <= entry["at"] <= time.time() for entry in log)
    assert log[0]["raw"] == log[1]["raw"]
    spec = spec_of("window_sums")
    for entry in log:
        assert normalised_score(spec, entry["raw"]) == pytest.approx(entry["score"], abs=1e-5)
    # The starting solution scores about 0, the running sum about 1 or more (timing is noisy: generous bounds).
    assert log[0]["score"] < 0.35 and log[2]["score"] > 0.3
    assert fields["correctness"] is True and fields["reward"] > 0.3
    assert normalised_score(spec, fields["metric"]) == pytest.approx(fields["reward"], abs=1e-5)
    assert run_score(BEST_OF_SCORE_LOG, fields["reward"], [e["score"] for e in log]) >= fields["reward"]


def test_window_sums_scores_no_log_without_the_runners_record(tmp_path):
    """A score log the agent wrote, and no call the runner recorded: no entries."""
    sandbox = Sandbox(REBENCH / "window_sums", tmp_path)
    (sandbox.logs / "agent").mkdir()
    (sandbox.logs / "agent" / "score_log.jsonl").write_text('{"at": 1, "raw": 1e-300, "score": 176.99}\n')
    (sandbox.logs / "agent" / "score_requests.jsonl").write_text('{"at": 1, "raw": 1e-300}\n')
    fields, _ = sandbox.verify()
    assert json.loads((sandbox.logs / "verifier" / "score_log.json").read_text()) == {"entries": []}
    assert fields["score_log_entries"] == 0 and fields["reward"] == 0.0


def test_window_sums_wrong_solution_scores_zero(tmp_path):
    sandbox = Sandbox(REBENCH / "window_sums", tmp_path)
    (sandbox.app / "solve.py").write_text("def window_sums(values, width):\n    return []\n")
    fields, _ = sandbox.verify()
    assert fields["reward"] == 0.0 and fields["reason"] == "incorrect_result"


def test_scaling_forecast_scores_its_final_answer_only(tmp_path):
    sandbox = Sandbox(REBENCH / "scaling_forecast", tmp_path)
    fields, _ = sandbox.verify()
    assert fields["reward"] == pytest.approx(0.0, abs=1e-3)  # the starting answer
    done = sandbox.run("python3", str(sandbox.app / "experiment.py"), "--width", "1024", "--lr", "0.001")
    assert "small_scale_loss: 1.8500" in done.stdout
    sandbox.solve()
    fields, _ = sandbox.verify()
    assert fields["reward"] == pytest.approx(1.0, abs=1e-3) and fields["metric"] == pytest.approx(1.8079, abs=1e-4)
    assert normalised_score(spec_of("scaling_forecast"), fields["metric"]) == pytest.approx(fields["reward"], abs=1e-5)
    assert not (sandbox.logs / "verifier" / "score_log.json").exists()
    (sandbox.app / "answer.json").write_text('{"width": "wide"}')
    fields, _ = sandbox.verify()
    assert fields["reward"] == 0.0 and fields["reason"] == "invalid_answer"
