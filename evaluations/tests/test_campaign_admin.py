"""Admin: "Evaluate model", adding a campaign, "Re-evaluate"."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from evaluations.models import Campaign
from evaluations.running.campaigns import create_campaign
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, utility_entry


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("boss", password="pw")
    client.login(username="boss", password="pw")
    return client


def test_evaluate_model_action_opens_the_launch_page(admin_client):
    model, _ = utility_entry("nop")
    response = admin_client.post(
        "/admin/agents/agentmodel/", {"action": "evaluate_model", "_selected_action": [model.pk]}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/campaigns/new/?model={model.pk}"
    form = admin_client.get(response["Location"]).content.decode()
    assert f'<option value="{model.pk}" selected>' in form


def ok_report(queue="cpu"):
    return {"worker": "w1", "queue": queue, "ok": True, "checks": [{"name": "backend", "ok": True, "detail": "fine"}]}


def test_adding_a_campaign_checks_it_first_then_creates_its_rollouts(admin_client):
    from evaluations.running.campaigns import record_preflight

    version = import_examples()
    model, harness = utility_entry("nop")
    task = version.tasks.get(name="sort8_network")
    response = admin_client.post(
        "/admin/evaluations/campaign/add/",
        {"model": model.pk, "harness": harness.pk, "version": version.pk, "tasks": [task.pk], "k": 3,
         "backend": "bubblewrap", "notes": ""},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get()
    assert campaign.created_by.username == "boss"
    assert campaign.status == Campaign.Status.CHECKING and campaign.rollouts.count() == 0
    record_preflight(campaign.pk, ok_report())
    assert list(campaign.rollouts.values_list("task__name", "index", "status")) == [
        ("sort8_network", i, RolloutStatus.QUEUED) for i in range(3)
    ]


def test_tasks_from_another_version_are_refused(admin_client):
    version = import_examples()
    other = import_examples("other")
    model, harness = utility_entry("nop")
    response = admin_client.post(
        "/admin/evaluations/campaign/add/",
        {"model": model.pk, "harness": harness.pk, "version": version.pk,
         "tasks": [other.tasks.first().pk], "k": 1, "backend": "bubblewrap"},
    )
    assert response.status_code == 200
    assert "Every task must belong to the chosen benchmark version." in response.content.decode()
    assert Campaign.objects.count() == 0 and Rollout.objects.count() == 0


def test_reevaluate_supersedes_old_rollouts(admin_client):
    version = import_examples()
    model, harness = utility_entry("nop")
    old = create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=2,
                          backend="bubblewrap", enqueue=False)
    Rollout.objects.filter(campaign=old).update(status=RolloutStatus.FINISHED, reward=0.0)
    response = admin_client.post(
        "/admin/evaluations/campaign/", {"action": "reevaluate_campaigns", "_selected_action": [old.pk]}
    )
    assert response.status_code == 302
    new = Campaign.objects.exclude(pk=old.pk).get()
    assert new.k == 2 and list(new.tasks.values_list("name", flat=True)) == ["sort8_network"]
    # Nothing changes before its preflight passes.
    assert set(Rollout.objects.filter(campaign=old).values_list("superseded", flat=True)) == {False}
    from evaluations.running.campaigns import record_preflight

    record_preflight(new.pk, ok_report())
    assert set(Rollout.objects.filter(campaign=old).values_list("superseded", flat=True)) == {True}
    assert set(Rollout.objects.filter(campaign=new).values_list("superseded", "status")) == {(False, "queued")}
    assert Rollout.objects.count() == 4  # old ones kept, viewable
