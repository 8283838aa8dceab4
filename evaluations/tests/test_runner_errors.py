"""A new model's configuration mistakes fail its rollouts at once, with the reason where people look.

Before: a key variable missing on the worker, or an endpoint answering
"Missing credentials", was retried three times as an infrastructure error
(30 s and 60 s back-offs), the cells said "queued" all along and then
"failed (infra)" with no reason, and the rollout page's cause disagreed.
"""
from __future__ import annotations

import pytest
from django.test import Client

from evaluations.running.campaigns import create_campaign
from agents.models import AgentModel, Harness
from evaluations.models import Campaign
from evaluations.running.runner import run_rollout
from trajectories.models import RolloutStatus

from evaluations.tests.runner_helpers import import_examples, runner_settings
from evaluations.tests.sandbox_helpers import require_sandbox
from evaluations.tests.test_preflight import refusing_endpoint  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


def terminus_campaign(**model_fields) -> Campaign:
    version = import_examples()
    model = AgentModel.objects.create(name="new-model", litellm_model="openai/new-model", **model_fields)
    harness = Harness.objects.create(name="terminus-2")
    return create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                           backend="bubblewrap", enqueue=False)


def assert_failed_for_its_configuration(campaign: Campaign, reason: str) -> None:
    rollout = campaign.rollouts.get()
    assert rollout.status == RolloutStatus.FAILED
    assert rollout.attempts == 1, "a configuration error is not retried"
    assert rollout.infra_error and rollout.failure_cause == "configuration_error"
    assert rollout.status_reason.startswith("configuration error:") and reason in rollout.status_reason
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.FAILED
    client = Client()
    grid = client.get(f"/campaigns/{campaign.pk}/progress.json").json()
    cell = grid["rows"][0]["cells"][0]
    assert cell["label"] == "failed (configuration error)" and reason in cell["reason"]
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    assert "configuration error" in page and reason in page
    assert "infrastructure error" not in page.split('id="failure"')[0]  # the header agrees with the cause
    assert "manage.py classify_failures" not in page


def test_a_key_variable_missing_on_the_worker(settings, tmp_path, monkeypatch):
    require_sandbox()
    runner_settings(settings, tmp_path)
    monkeypatch.delenv("AUTOLAB_TEST_ABSENT_KEY", raising=False)
    campaign = terminus_campaign(api_key_env="AUTOLAB_TEST_ABSENT_KEY")
    outcome = run_rollout(campaign.rollouts.get().pk)
    assert outcome.status == RolloutStatus.FAILED
    assert_failed_for_its_configuration(campaign, "the API key variable AUTOLAB_TEST_ABSENT_KEY is not set on worker")


def test_an_endpoint_that_answers_missing_credentials(settings, tmp_path, monkeypatch, refusing_endpoint):  # noqa: F811
    require_sandbox()
    runner_settings(settings, tmp_path)
    monkeypatch.setenv("AUTOLAB_TEST_KEY", "sk-wrong")
    campaign = terminus_campaign(api_base=refusing_endpoint, api_key_env="AUTOLAB_TEST_KEY",
                                 sampling_params={"model_info": {"max_input_tokens": 8000, "max_output_tokens": 1000}})
    outcome = run_rollout(campaign.rollouts.get().pk)
    assert outcome.status == RolloutStatus.FAILED, outcome
    assert_failed_for_its_configuration(campaign, "Missing credentials")
