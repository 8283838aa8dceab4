"""trajectories.trial_folder details that the import tests do not pin down."""
from __future__ import annotations

import json

from trajectories.trial_folder import _subtrajectory_files, read_trial_folder

from .trialdata import make_trial, trajectory


def test_subtrajectory_files_are_those_glob_finds_in_name_order(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    names = [
        "trajectory.json", "trajectory..json", "trajectory.b.json", "trajectory.a.json", "trajectory.json.json",
        "trajectory.x.JSON", "Trajectory.y.json", "trajectory.z.json.bak", "xtrajectory.q.json",
    ]
    for name in names:
        (agent / name).write_text("{}")
    (agent / "trajectory.dir.json").mkdir()
    assert _subtrajectory_files(agent) == sorted(agent.glob("trajectory.*.json"))
    assert _subtrajectory_files(tmp_path / "missing") == []


def test_finished_follows_result_json(tmp_path):
    running = make_trial(tmp_path, "lib__demo_task__run1234", finished=False)
    assert read_trial_folder(running).finished is False
    done = make_trial(tmp_path, "lib__demo_task__done123")
    assert read_trial_folder(done).finished is True
    (done / "agent" / "trajectory.summarization-1-summary.json").write_text(json.dumps(trajectory(1)))
    assert list(read_trial_folder(done).subtrajectory_files) == ["trajectory.summarization-1-summary.json"]
