"""The runner's record of a scoring tool's calls (tasks/score_record.py), and what a task must declare for it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harbor.models.task.config import TaskConfig

from tasks import score_record
from tasks.score_record import RECORD_DIR, ScoreRecord, snapshot_problem, task_snapshot_paths
from tasks.sealing import grades_sealed, seal
from tasks.taskdir import TaskDirError, parse_task_dir

WINDOW_SUMS = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench" / "window_sums"


def snapshot_of(folder: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return folder


@pytest.mark.parametrize("paths, problem", [
    (["/app/solve.py"], ""),
    (["/app", "/opt/model/weights.bin"], ""),
    ([], "must be a list"),
    ("/app/solve.py", "must be a list"),
    ([3], "must be a list"),
    (["app/solve.py"], "not an absolute path"),
    (["/app/../etc/shadow"], "not an absolute path"),
    (["/"], "not an absolute path"),
    (["/logs/agent/score_requests.jsonl"], "may not name"),
    (["/logs/scoring/s0001"], "may not name"),
    (["/tests/score.py"], "may not name"),
])
def test_snapshot_paths_are_absolute_and_never_the_graders(paths, problem):
    found = snapshot_problem(paths)
    assert (problem in found) if problem else found == ""


def test_identical_snapshots_are_kept_once_and_every_call_is_an_entry(tmp_path):
    record = ScoreRecord(tmp_path / "record")
    first = record.add(100.0, snapshot_of(tmp_path / "a", {"app/solve.py": "slow"}))
    again = record.add(101.0, snapshot_of(tmp_path / "b", {"app/solve.py": "slow"}), calls=2)
    other = record.add(102.0, snapshot_of(tmp_path / "c", {"app/solve.py": "fast"}))
    assert (first, again, other) == ("s0001", "s0001", "s0002")
    lines = [json.loads(line) for line in (record.folder / "log.jsonl").read_text().splitlines()]
    assert [(e["at"], e["snapshot"]) for e in lines] == [(100.0, "s0001"), (101.0, "s0001"), (101.0, "s0001"), (102.0, "s0002")]
    assert (record.folder / "s0002" / "app" / "solve.py").read_text() == "fast"
    assert sorted(p.name for p in record.folder.iterdir()) == ["log.jsonl", "s0001", "s0002"]


def test_the_record_stops_at_its_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(score_record, "MAX_SNAPSHOTS", 2)
    monkeypatch.setattr(score_record, "MAX_ENTRIES", 3)
    record = ScoreRecord(tmp_path / "record")
    names = [record.add(float(i), snapshot_of(tmp_path / str(i), {"solve.py": str(i)})) for i in range(3)]
    assert names == ["s0001", "s0002", None]
    assert record.add(9.0, snapshot_of(tmp_path / "x", {"solve.py": "0"}), calls=5) == "s0001"
    assert len(record.entries) == 3 and record.refused == 1 + 4
    assert not (record.folder / "s0003").exists()


def test_publish_replaces_whatever_was_collected_there(tmp_path):
    record = ScoreRecord(tmp_path / "record")
    record.add(5.0, snapshot_of(tmp_path / "a", {"app/solve.py": "mine"}))
    target = tmp_path / "artifacts" / "logs" / "scoring"
    # What Harbor collected from the sandbox's /logs/scoring: a forged log and snapshot.
    snapshot_of(target, {"log.jsonl": '{"at": 1, "snapshot": "s0009"}\n', "s0009/app/solve.py": "forged"})
    record.publish(target)
    assert sorted(p.name for p in target.iterdir()) == ["log.jsonl", "s0001"]
    assert json.loads((target / "log.jsonl").read_text())["at"] == 5.0


def test_a_best_of_log_task_must_say_what_its_scoring_tool_scores(tmp_path):
    task = tmp_path / "window_sums"
    shutil.copytree(WINDOW_SUMS, task)
    assert task_snapshot_paths(task) == ["/app/solve.py"]
    toml = task / "task.toml"
    text = toml.read_text()
    toml.write_text(text.replace('snapshot = ["/app/solve.py"]\n', ""))
    with pytest.raises(TaskDirError, match="needs snapshot"):
        parse_task_dir(task)
    toml.write_text(text.replace("final_only = false", "final_only = true"))
    with pytest.raises(TaskDirError, match="snapshot belongs to a task scored by the best of its score log"):
        parse_task_dir(task)
    toml.write_text(text.replace('snapshot = ["/app/solve.py"]', 'snapshot = ["/logs/agent"]'))
    with pytest.raises(TaskDirError, match="may not name"):
        parse_task_dir(task)
    # Final-only needs no snapshot: the verifier measures the final submission alone.
    toml.write_text(text.replace('snapshot = ["/app/solve.py"]\n', "").replace("final_only = false", "final_only = true"))
    assert parse_task_dir(task).final_only and task_snapshot_paths(task) == []


def test_a_task_with_a_score_record_is_graded_sealed_and_gets_the_record_carried(tmp_path):
    config = TaskConfig.model_validate_toml((WINDOW_SUMS / "task.toml").read_text())
    sealed = seal(WINDOW_SUMS, config)
    assert sealed.carried == ["/app", RECORD_DIR]
    assert "/logs/agent/score_log.jsonl" not in sealed.carried
    assert grades_sealed(WINDOW_SUMS, version_seals=False)
    other = WINDOW_SUMS.parent / "scaling_forecast"
    assert not grades_sealed(other, version_seals=False) and grades_sealed(other, version_seals=True)
    assert RECORD_DIR not in seal(other, TaskConfig.model_validate_toml((other / "task.toml").read_text())).carried
