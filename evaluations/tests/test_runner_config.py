"""How a rollout becomes a TrialConfig, a queue and a retry decision."""
from __future__ import annotations

import pytest

from evaluations.running.campaigns import create_campaign
from evaluations.running.dispatch import queue_for
from agents.models import AgentModel, Harness
from evaluations.running.runner import (
    VERIFIER_IMPORT_PATH,
    RunnerConfigError,
    build_trial_config,
    classify_failure,
    environment_config,
)

from evaluations.tests.runner_helpers import import_examples

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "exception_type, message, agent_started, kind",
    [
        ("NeedsContainerBackend", "", False, "config"),
        ("RunnerConfigError", "", False, "config"),
        ("AuthenticationError", "Missing credentials", True, "config"),
        ("litellm.NotFoundError", "model not found", True, "config"),
        ("BadRequestError", "", True, "config"),
        ("RuntimeError", "Missing credentials. Please pass an `api_key`", True, "config"),
        ("InternalServerError", "OpenAIException - Missing credentials. Please pass an `api_key`", True, "config"),
        ("SandboxBuildFailedError", "", False, "infra-final"),
        ("EnvironmentStartTimeoutError", "", False, "infra-retry"),
        ("RuntimeError", "", False, "infra-retry"),
        ("InternalServerError", "", True, "infra-retry"),
        ("ServiceUnavailableError", "", True, "infra-retry"),
        ("RateLimitError", "", True, "infra-retry"),
        ("APIConnectionError", "", True, "infra-retry"),
        ("AgentTimeoutError", "", True, "result"),
        ("NonZeroAgentExitCodeError", "", True, "result"),
        ("ContextLengthExceededError", "", True, "result"),
        ("RuntimeError", "", True, "result"),
        # A separate verifier: its timeout is the agent's result, its environment's failure to start is not.
        ("VerifierTimeoutError", "Verifier execution timed out after 15.0 seconds", True, "result"),
        ("EnvironmentStartTimeoutError", "Verifier environment start timed out after 120 seconds", True, "infra-retry"),
    ],
)
def test_classify_failure(exception_type, message, agent_started, kind):
    assert classify_failure(exception_type, message, agent_started=agent_started) == kind


def test_gpu_tasks_go_to_the_gpu_queue_with_their_type():
    version = import_examples()
    task = version.tasks.get(name="sort8_network")
    assert queue_for(task) == ("cpu", {})
    task.gpus, task.gpu_type = 2, "H100"
    assert queue_for(task) == ("gpu", {"gpu_type": "H100", "gpus": 2})


def rollout_for(model, harness, backend="bubblewrap"):
    version = import_examples()
    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                               backend=backend, enqueue=False)
    return campaign.rollouts.select_related("task", "model", "harness", "campaign").get()


def test_terminus_config_carries_litellm_settings_but_no_key(settings, tmp_path, monkeypatch):
    settings.TRIALS_DIR = tmp_path / "trials"
    monkeypatch.setenv("MY_PROVIDER_KEY", "sk-secret-value")
    model = AgentModel.objects.create(
        name="claude-opus-4.6", litellm_model="openai/claude-opus-4.6", api_base="http://gateway:4000/v1",
        api_key_env="MY_PROVIDER_KEY", sampling_params={"temperature": 0.7, "top_p": 0.9, "model_info": {"max_tokens": 1}},
    )
    harness = Harness.objects.create(name="terminus-2", version="2.0", params={"max_turns": 50})
    rollout = rollout_for(model, harness, backend="docker")
    config = build_trial_config(rollout)
    agent = config.agent
    assert agent.name == "terminus-2" and agent.model_name == "openai/claude-opus-4.6"
    assert agent.base_url == "http://gateway:4000/v1" and agent.model_api_key_name == "MY_PROVIDER_KEY"
    assert agent.kwargs["temperature"] == 0.7 and agent.kwargs["max_turns"] == 50
    assert agent.kwargs["llm_call_kwargs"] == {"top_p": 0.9}
    assert agent.kwargs["model_info"] == {"max_tokens": 1}
    assert agent.env == {}
    assert "sk-secret-value" not in config.model_dump_json()
    assert config.environment.import_path == "evaluations.sandbox.containers:DockerSandbox"
    assert config.verifier.import_path == VERIFIER_IMPORT_PATH
    assert config.trials_dir == settings.TRIALS_DIR / str(rollout.campaign_id)
    assert config.trial_name == rollout.trial_name


def test_oracle_on_bubblewrap(settings, tmp_path):
    from evaluations.tests.sandbox_helpers import require_sandbox

    require_sandbox()
    settings.SANDBOX_DIR = tmp_path / "sandboxes"
    model = AgentModel.objects.create(name="oracle", is_scripted=True)
    harness = Harness.objects.create(name="oracle")
    config = build_trial_config(rollout_for(model, harness))
    assert config.agent.name == "oracle" and config.agent.model_name is None
    assert config.environment.import_path == "evaluations.sandbox.bubblewrap:BubblewrapEnvironment"
    assert config.environment.kwargs == {"sandbox_root": str(tmp_path / "sandboxes")}


def test_custom_harness_import_path_and_missing_task_folder():
    model = AgentModel.objects.create(name="m", litellm_model="openai/m")
    harness = Harness.objects.create(name="my-agent", import_path="my_agents.agent:MyAgent", params={"x": 1})
    rollout = rollout_for(model, harness, backend="docker")
    config = build_trial_config(rollout)
    assert config.agent.import_path == "my_agents.agent:MyAgent" and config.agent.kwargs == {"x": 1}
    rollout.task.source_path = "/nonexistent/task"
    with pytest.raises(RunnerConfigError, match="no task folder"):
        build_trial_config(rollout)
    with pytest.raises(RunnerConfigError, match="unknown sandbox backend"):
        environment_config("kubernetes")
