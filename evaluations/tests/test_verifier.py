"""TolerantVerifier keeps AutoLab's non-numeric reward.json fields instead of failing."""
from __future__ import annotations

import asyncio
import json
import shutil
import uuid

import pytest

from evaluations.running.verifier import TolerantVerifier, numeric_rewards

from evaluations.tests.sandbox_helpers import TINY_TASK, require_sandbox


@pytest.mark.parametrize(
    "data, rewards, others",
    [
        ({"reward": 0.0, "reason": "no_lora_file"}, {"reward": 0.0}, {"reason": "no_lora_file"}),
        (
            {"reward": 0.5, "correctness": True, "metric": None, "speedup": 2},
            {"reward": 0.5, "correctness": 1.0, "speedup": 2},
            {"metric": None},
        ),
        ({"reward": float("nan"), "x": "y"}, {}, {"reward": float("nan"), "x": "y"}),
        (0.75, {"reward": 0.75}, {}),
        ({"reward": 1, "details": {"a": 1}}, {"reward": 1}, {"details": {"a": 1}}),
    ],
)
def test_numeric_rewards_split(data, rewards, others):
    got_rewards, got_others = numeric_rewards(data)
    assert got_rewards == rewards
    assert json.dumps(got_others, sort_keys=True) == json.dumps(others, sort_keys=True)


def make_task(tmp_path, reward_json: str):
    task = tmp_path / "task"
    shutil.copytree(TINY_TASK, task)
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\ncat > /logs/verifier/reward.json <<'EOF'\n" + reward_json + "\nEOF\n"
    )
    return task


def run_trial(tmp_path, task, verifier_import_path):
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig, VerifierConfig
    from harbor.trial.trial import Trial

    config = TrialConfig(
        task=TaskConfig(path=task),
        trials_dir=tmp_path / "trials",
        trial_name=f"verifier__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name="nop"),
        environment=EnvironmentConfig(
            import_path="evaluations.sandbox.bubblewrap:BubblewrapEnvironment",
            kwargs={"sandbox_root": str(tmp_path / "sandboxes")},
        ),
        verifier=VerifierConfig(import_path=verifier_import_path) if verifier_import_path else VerifierConfig(),
    )

    async def run():
        trial = await Trial.create(config)
        return await trial.run(), trial.paths

    return asyncio.run(run())


REWARD = '{"reward": 0.0, "reason": "no_lora_file", "metric": null, "correctness": false}'


@pytest.mark.sandbox
def test_harbor_default_verifier_rejects_autolab_reward_json(tmp_path):
    require_sandbox()
    result, _ = run_trial(tmp_path, make_task(tmp_path, REWARD), None)
    assert result.verifier_result is None
    assert result.exception_info.exception_type == "VerifierOutputParseError"


@pytest.mark.sandbox
def test_tolerant_verifier_keeps_reward_and_fields(tmp_path):
    require_sandbox()
    result, paths = run_trial(tmp_path, make_task(tmp_path, REWARD), "evaluations.running.verifier:TolerantVerifier")
    assert result.exception_info is None
    assert result.verifier_result.rewards == {"reward": 0.0, "correctness": 0.0}
    kept = json.loads(paths.reward_json_path.read_text())
    assert kept == {"reward": 0.0, "reason": "no_lora_file", "metric": None, "correctness": False}


def test_verifier_is_a_harbor_verifier():
    from harbor.verifier.base import BaseVerifier

    assert issubclass(TolerantVerifier, BaseVerifier)
