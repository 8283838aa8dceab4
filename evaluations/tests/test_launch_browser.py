"""Launching from the staff page in a real browser, with a real worker: the grid updates, a cancel, a failed preflight."""
from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User

from evaluations.running import campaigns
from agents.models import AgentModel, Harness
from evaluations.models import Campaign
from tasks.services import import_tasks
from trajectories import statuses
from trajectories.models import RolloutStatus
from trajectories.tests.test_failures_browser import login

from evaluations.tests.runner_helpers import utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox
from evaluations.tests.test_container_campaign import slow_task
from evaluations.tests.worker_helpers import Worker

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


def launch_from_the_page(page, live_server, model: str, harness: str, version: str) -> None:
    from tasks.models import BenchmarkVersion

    page.goto(f"{live_server.url}/campaigns/new/")
    page.select_option("#id_model", str(AgentModel.objects.get(name=model).pk))
    page.select_option("#id_harness", str(Harness.objects.filter(name=harness).first().pk))
    page.select_option("#id_version", str(BenchmarkVersion.objects.get(name=version).pk))
    page.fill("#id_k", "2")
    page.select_option("#id_backend", "bubblewrap")
    page.click("button[name=launch]")
    page.wait_for_url("**/campaigns/*/")


def wait_until_idle(campaign: Campaign, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while campaign.rollouts.filter(status__in=statuses.ACTIVE).exists():
        assert time.monotonic() < deadline, "the campaign's rollouts did not stop"
        time.sleep(0.5)


def test_launch_watch_cancel_and_a_failed_preflight(live_server, page, worker_env, tmp_path, monkeypatch):
    require_sandbox()
    report = import_tasks(slow_task(tmp_path, 60).parent, version="slow")
    assert report.ok, report.summary()
    utility_entry("oracle")
    AgentModel.objects.create(name="keyless-model", litellm_model="openai/keyless-model",
                              api_key_env="AUTOLAB_TEST_KEY_NOWHERE")
    Harness.objects.get_or_create(name="terminus-2", version="")
    login(page, live_server, User.objects.create_user("staff", password="pw", is_staff=True))
    worker_env.pop("AUTOLAB_TEST_KEY_NOWHERE", None)
    worker = Worker(worker_env, tmp_path / "worker.log")
    try:
        worker.wait_ready()
        launch_from_the_page(page, live_server, "oracle", "oracle", "slow")
        campaign = Campaign.objects.get()
        # The preflight passes on the worker, the grid appears and follows the rollouts.
        page.locator(".preflight-queue.passed").wait_for(timeout=60_000)
        page.locator("td.cell .state", has_text="running").first.wait_for(timeout=90_000)
        assert page.locator("td.cell").count() == 2

        # Cancel one: the page asks first.
        page.locator("td.cell a.cancel-rollout:not([hidden])").first.click()
        page.wait_for_url("**/cancel/")
        assert "Its trial stops within seconds" in page.content()
        page.click("text=Yes, cancel")
        page.wait_for_url(f"**/campaigns/{campaign.pk}/")
        page.locator("td.cell .state", has_text="cancelled").wait_for(timeout=60_000)
        assert campaign.rollouts.filter(status=RolloutStatus.CANCELLED).count() == 1

        # A preflight is a task on the same queue: this worker (one slot) takes it
        # once the trial it holds has ended, so the rest of the campaign is cancelled
        # and the slot freed before the next launch.
        campaigns.cancel(campaign)
        wait_until_idle(campaign)

        # A model whose key the worker lacks: the preflight fails and says why, in the page.
        launch_from_the_page(page, live_server, "keyless-model", "terminus-2", "slow")
        reason = page.locator('[data-field="status_reason"]')
        reason.filter(has_text="AUTOLAB_TEST_KEY_NOWHERE").wait_for(timeout=60_000)
        assert "preflight failed" in reason.inner_text()
        assert "is not set on worker" in page.locator(".preflight-queue.failed").inner_text()
        assert page.locator('[data-field="status"]').inner_text() == "Failed"
        failed = Campaign.objects.latest("pk")
        assert failed.status == Campaign.Status.FAILED and failed.rollouts.count() == 0
    finally:
        worker.kill()
