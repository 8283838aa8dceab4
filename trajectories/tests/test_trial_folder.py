"""trajectories.reading.trial_folder details that the import tests do not pin down."""
from __future__ import annotations

import json
import os

import pytest

from trajectories.reading.trial_folder import TrialFolderError, _subtrajectory_files, read_trial_folder, snapshot_folder

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
    files = [path for path in sorted(agent.glob("trajectory.*.json")) if path.is_file()]
    assert _subtrajectory_files(agent, snapshot_folder(tmp_path)) == files
    assert _subtrajectory_files(tmp_path / "missing", snapshot_folder(tmp_path / "missing")) == []


def test_links_in_a_trial_folder_are_refused_not_read(tmp_path):
    """A sandbox-planted link must not make the importer read a host file (issue 12)."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "reward.json").write_text('{"reward": 0.4242, "reason": "host secret"}')
    (host / "trajectory.json").write_text(json.dumps(trajectory(7)))
    (host / "stdout.txt").write_text("host secret")
    trial = make_trial(tmp_path / "trials", finished=True)
    (trial / "verifier").mkdir(exist_ok=True)
    for name in ("reward.json", "reward.txt", "test-stdout.txt"):
        (trial / "verifier" / name).unlink(missing_ok=True)
    (trial / "verifier" / "reward.json").symlink_to(host / "reward.json")
    (trial / "verifier" / "test-stdout.txt").symlink_to(host / "stdout.txt")
    (trial / "verifier" / "baseline_score.json").symlink_to(host / "reward.json")
    (trial / "agent" / "trajectory.summarization-1-summary.json").symlink_to(host / "trajectory.json")
    (trial / "exception.txt").symlink_to(host / "stdout.txt")

    folder = read_trial_folder(trial)

    assert folder.reward != 0.4242 and "host secret" not in json.dumps(folder.verifier_fields)
    assert "host secret" not in folder.verifier_stdout and "host secret" not in folder.exception_traceback
    assert folder.verifier_outputs == {} and folder.subtrajectory_files == {}
    refused = [w for w in folder.warnings if "symbolic link" in w]
    assert sorted(w.split(":")[0] for w in refused) == [
        "agent/trajectory.summarization-1-summary.json", "exception.txt",
        "verifier/baseline_score.json", "verifier/reward.json", "verifier/test-stdout.txt",
    ]


def test_a_linked_trial_file_or_folder_is_no_trial(tmp_path):
    real = make_trial(tmp_path / "elsewhere")
    linked = tmp_path / "linked"
    (linked / "agent").mkdir(parents=True)
    (linked / "agent" / "trajectory.json").symlink_to(real / "agent" / "trajectory.json")
    (linked / "config.json").symlink_to(real / "config.json")
    with pytest.raises(TrialFolderError, match="is not a Harbor trial folder"):
        read_trial_folder(linked)
    (tmp_path / "dirlink").symlink_to(real, target_is_directory=True)
    from trajectories.reading.trial_folder import is_trial_dir

    assert not is_trial_dir(linked) and not is_trial_dir(tmp_path / "dirlink")


def test_finished_follows_result_json(tmp_path):
    running = make_trial(tmp_path, "lib__demo_task__run1234", finished=False)
    assert read_trial_folder(running).finished is False
    done = make_trial(tmp_path, "lib__demo_task__done123")
    assert read_trial_folder(done).finished is True
    (done / "agent" / "trajectory.summarization-1-summary.json").write_text(json.dumps(trajectory(1)))
    assert list(read_trial_folder(done).subtrajectory_files) == ["trajectory.summarization-1-summary.json"]


def test_read_from_a_snapshot_parses_the_bytes_the_checksum_covers(tmp_path):
    """An import's snapshot-then-read reads each JSON file once, and the same bytes."""
    trial = make_trial(tmp_path)
    before = read_trial_folder(trial)
    snapshot = snapshot_folder(trial)
    assert snapshot.checksum == before.checksum
    (trial / "agent" / "trajectory.json").write_text("{ not json")
    folder = read_trial_folder(trial, snapshot=snapshot)
    assert folder.checksum == snapshot.checksum
    assert len(folder.trajectory.steps) == len(before.trajectory.steps) == 3
    # Without the snapshot, a read sees the folder as it is.
    with pytest.raises(TrialFolderError, match="trajectory.json: is not valid JSON"):
        read_trial_folder(trial)


def test_a_snapshot_is_for_its_folder_only(tmp_path):
    first = make_trial(tmp_path, "lib__demo_task__one1234")
    second = make_trial(tmp_path, "lib__demo_task__two1234", n_agent_steps=4)
    with pytest.raises(ValueError, match="cannot be read as"):
        read_trial_folder(second, snapshot=snapshot_folder(first))
    assert len(read_trial_folder(second).trajectory.steps) == 5


def test_a_live_trajectory_caught_mid_write_is_read_again(tmp_path):
    trial = make_trial(tmp_path, finished=False)
    whole = (trial / "agent" / "trajectory.json").read_text()
    (trial / "agent" / "trajectory.json").write_text(whole[: len(whole) // 2])
    snapshot = snapshot_folder(trial)
    (trial / "agent" / "trajectory.json").write_text(whole)
    folder = read_trial_folder(trial, snapshot=snapshot)
    assert len(folder.trajectory.steps) == 3 and folder.finished is False


def test_a_folder_without_a_trial_is_refused_before_any_walk(tmp_path, monkeypatch):
    import trajectories.reading.trial_folder as trial_folder

    (tmp_path / "deep" / "tree").mkdir(parents=True)
    monkeypatch.setattr(trial_folder, "tree_checksum", lambda *args, **kwargs: pytest.fail("walked"))
    with pytest.raises(TrialFolderError, match="is not a Harbor trial folder"):
        read_trial_folder(tmp_path)


def continued(tmp_path):
    """A terminus-2 linear-history trial: trajectory.json, then cont-1 after a summarisation."""
    from datetime import timedelta

    from .trialdata import START, write_json

    trial = make_trial(tmp_path, "lib__demo_task__cont123", n_agent_steps=2)
    first = json.loads((trial / "agent" / "trajectory.json").read_text())
    first["continued_trajectory_ref"] = "trajectory.cont-1.json"
    write_json(trial / "agent" / "trajectory.json", first)
    later = trajectory(3, start=START + timedelta(hours=1))
    copied = [dict(step, is_copied_context=True) for step in first["steps"]]
    fresh = later["steps"][1:]  # the handoff prompt is new, not copied
    for offset, step in enumerate(fresh):
        step["step_id"] = len(copied) + offset + 1
    later["steps"] = copied + fresh
    later["session_id"] = "session-1-cont-1"
    later["final_metrics"]["total_prompt_tokens"] = 99_999
    write_json(trial / "agent" / "trajectory.cont-1.json", later)
    write_json(trial / "agent" / "trajectory.summarization-1-summary.json", trajectory(1))
    return trial, first, fresh


def test_continuations_join_the_main_trajectory_without_the_copied_context(tmp_path):
    trial, first, fresh = continued(tmp_path)
    folder = read_trial_folder(trial)
    steps = folder.trajectory.steps
    assert [s.step_id for s in steps] == list(range(1, len(first["steps"]) + len(fresh) + 1))
    assert [s.message for s in steps] == [s["message"] for s in first["steps"] + fresh]
    joined = steps[len(first["steps"]) :]
    assert [s.extra["continuation"] for s in joined] == [
        {"file": "trajectory.cont-1.json", "step_id": s["step_id"]} for s in fresh
    ]
    assert folder.trajectory.final_metrics["total_prompt_tokens"] == 99_999
    # Summarisation subagents stay subtrajectories; the continuation is gone from them.
    assert list(folder.subtrajectory_files) == ["trajectory.summarization-1-summary.json"]


def test_a_missing_continuation_is_a_warning(tmp_path):
    trial, _, _ = continued(tmp_path)
    (trial / "agent" / "trajectory.cont-1.json").rename(trial / "agent" / "trajectory.cont-2.json")
    folder = read_trial_folder(trial)
    assert any("trajectory.cont-1.json is missing" in w for w in folder.warnings)


def test_verifier_json_files_are_kept(tmp_path):
    trial = make_trial(tmp_path)
    (trial / "verifier" / "baseline_score.json").write_text(json.dumps({"score": 0.49, "num_prompts": 8}))
    (trial / "verifier" / "optimized_score.json").write_text('{"score": 0.56, "lora_path": "/app/out.safetensors"}')
    (trial / "verifier" / "broken.json").write_text("{not json")
    (trial / "verifier" / "huge.json").write_text(json.dumps({"x": "y" * 300_000}))
    folder = read_trial_folder(trial)
    assert folder.verifier_outputs == {
        "baseline_score.json": {"score": 0.49, "num_prompts": 8},
        "optimized_score.json": {"score": 0.56, "lora_path": "/app/out.safetensors"},
    }
    assert "reward.json" not in folder.verifier_outputs
    assert [w.split(":")[0] for w in folder.warnings if w.startswith("verifier/")] == ["verifier/broken.json", "verifier/huge.json"]


@pytest.mark.parametrize("value, shown", [('"1.0"', "'1.0'"), ("1e309", "inf"), ('"no_lora_file"', "'no_lora_file'"), ("[1]", "[1]")])
def test_a_reward_that_is_not_a_number_is_said_so(tmp_path, value, shown):
    """A reward.json whose reward could not be read left the trial without one and said nothing: the page
    showed an unscored rollout with no reason (a staff QA pass's "1.0" and 1e309)."""
    trial = make_trial(tmp_path, "lib__demo__1")
    (trial / "verifier" / "reward.json").write_text('{"reward": %s}' % value)
    folder = read_trial_folder(trial)
    assert folder.reward is None
    assert any(f"reward.json: its reward {shown} is not a finite number; the trial has no reward" in w for w in folder.warnings)


def test_a_reward_json_reward_that_is_not_a_number_is_not_filled_from_reward_txt(tmp_path):
    """reward.txt fills a gap, not a bad value: a damaged trial with reward.json's NaN (result.json: 0.0) was
    imported with reward.txt's 0.5, said nothing, and counted 0.5 on the board (a QA pass)."""
    trial = make_trial(tmp_path, "lib__demo__1")
    (trial / "verifier" / "reward.json").write_text('{"reward": NaN, "reason": "weird"}')
    (trial / "verifier" / "reward.txt").write_text("0.5")
    folder = read_trial_folder(trial)
    assert folder.reward is None
    assert any("reward.json: its reward nan is not a finite number; the trial has no reward" in w for w in folder.warnings)
    (trial / "verifier" / "reward.json").write_text('{"reason": "no reward key"}')
    assert read_trial_folder(trial).reward == 0.5  # a gap: reward.txt fills it


def test_a_boolean_or_numeric_reward_needs_no_word(tmp_path):
    trial = make_trial(tmp_path, "lib__demo__1")
    for value, reward in (("true", 1.0), ("0.25", 0.25)):
        (trial / "verifier" / "reward.json").write_text('{"reward": %s}' % value)
        folder = read_trial_folder(trial)
        assert folder.reward == reward and not [w for w in folder.warnings if "reward" in w]


def test_a_trial_without_result_json_takes_its_agents_version_from_the_trajectory(tmp_path):
    """Without result.json (a trial still running, or a copy missing it) the harness version was unknown, so
    the import chose the newest harness of that name: a QA pass's grok trial landed on a synthetic terminus-2."""
    trial = make_trial(tmp_path, "lib__demo__1")
    (trial / "result.json").unlink()
    folder = read_trial_folder(trial)
    assert (folder.agent_name, folder.agent_version) == ("terminus-2", "2.0.0")


def test_hard_links_in_a_trial_folder_are_refused_not_read(tmp_path):
    """A hard link is a second name of a file that may lie outside the folder: refused as a symlink is (issue 43)."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "reward.json").write_text('{"reward": 0.4242, "reason": "host secret"}')
    (host / "stdout.txt").write_text("host secret")
    trial = make_trial(tmp_path / "trials", finished=True)
    for name in ("reward.json", "test-stdout.txt"):
        (trial / "verifier" / name).unlink()
    os.link(host / "reward.json", trial / "verifier" / "reward.json")
    os.link(host / "stdout.txt", trial / "verifier" / "test-stdout.txt")
    os.link(host / "stdout.txt", trial / "exception.txt")

    folder = read_trial_folder(trial)

    assert folder.reward != 0.4242 and "host secret" not in json.dumps(folder.verifier_fields)
    assert "host secret" not in folder.verifier_stdout and "host secret" not in folder.exception_traceback
    refused = sorted(w.split(":")[0] for w in folder.warnings if "hard link" in w)
    assert refused == ["exception.txt", "verifier/reward.json", "verifier/test-stdout.txt"]
