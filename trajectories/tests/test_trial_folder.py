"""trajectories.trial_folder details that the import tests do not pin down."""
from __future__ import annotations

import json

import pytest

from trajectories.trial_folder import TrialFolderError, _subtrajectory_files, folder_checksum, read_trial_folder

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


def test_read_after_checksum_parses_the_bytes_the_checksum_covers(tmp_path):
    """An import's checksum-then-read reads each JSON file once, and the same bytes."""
    trial = make_trial(tmp_path)
    before = read_trial_folder(trial)
    checksum = folder_checksum(trial)
    (trial / "agent" / "trajectory.json").write_text("{ not json")
    folder = read_trial_folder(trial, checksum=checksum)
    assert folder.checksum == checksum
    assert len(folder.trajectory.steps) == len(before.trajectory.steps) == 3
    # The kept bytes serve one read; a later read sees the folder as it is.
    with pytest.raises(TrialFolderError, match="trajectory.json: is not valid JSON"):
        read_trial_folder(trial, checksum=checksum)


def test_kept_bytes_are_for_their_folder_and_checksum_only(tmp_path):
    first = make_trial(tmp_path, "lib__demo_task__one1234")
    second = make_trial(tmp_path, "lib__demo_task__two1234", n_agent_steps=4)
    folder_checksum(first)
    assert len(read_trial_folder(second, checksum="x").trajectory.steps) == 5
    checksum = folder_checksum(first)
    (first / "agent" / "trajectory.json").write_text(json.dumps(trajectory(5)))
    assert len(read_trial_folder(first, checksum=checksum + "0").trajectory.steps) == 6


def test_a_live_trajectory_caught_mid_write_is_read_again(tmp_path):
    trial = make_trial(tmp_path, finished=False)
    whole = (trial / "agent" / "trajectory.json").read_text()
    (trial / "agent" / "trajectory.json").write_text(whole[: len(whole) // 2])
    checksum = folder_checksum(trial)
    (trial / "agent" / "trajectory.json").write_text(whole)
    folder = read_trial_folder(trial, checksum=checksum)
    assert len(folder.trajectory.steps) == 3 and folder.finished is False


def test_a_folder_without_a_trial_is_refused_before_any_walk(tmp_path, monkeypatch):
    import trajectories.trial_folder as trial_folder

    (tmp_path / "deep" / "tree").mkdir(parents=True)
    monkeypatch.setattr(trial_folder, "tree_checksum", lambda *args, **kwargs: pytest.fail("walked"))
    with pytest.raises(TrialFolderError, match="is not a Harbor trial folder"):
        read_trial_folder(tmp_path)
