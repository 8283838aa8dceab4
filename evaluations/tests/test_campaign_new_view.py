"""The staff launch page, /campaigns/new/."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from evaluations.models import Campaign
from evaluations.running.campaigns import create_campaign
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, utility_entry

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    User.objects.create_user("staff", password="pw", is_staff=True)
    client.login(username="staff", password="pw")
    return client


@pytest.fixture
def entry():
    version = import_examples()
    model, harness = utility_entry("nop")
    return version, model, harness


def form_data(version, model, harness, **extra):
    return {"model": model.pk, "harness": harness.pk, "version": version.pk, "k": 2, "backend": "bubblewrap",
            "notes": "", **extra}


def test_only_staff_may_launch(client, entry):
    version, model, harness = entry
    # Anonymous: sent to log in; logged in but not staff: refused.
    assert client.get("/campaigns/new/").status_code == 302
    assert client.post("/campaigns/new/", form_data(*entry, launch="1")).status_code == 302
    User.objects.create_user("visitor", password="pw")
    client.login(username="visitor", password="pw")
    assert client.get("/campaigns/new/").status_code == 403
    assert Campaign.objects.count() == 0


def test_the_form_explains_the_backends_and_prefills_the_model(staff_client, entry):
    version, model, harness = entry
    page = staff_client.get(f"/campaigns/new/?model={model.pk}").content.decode()
    assert f'<option value="{model.pk}" selected>' in page
    for label in ("Docker", "Podman", "bubblewrap sandbox (host)"):
        assert f"<strong>{label}</strong>" in page
    assert "examples / sort8_network" in page  # tasks labelled by their version
    # A NUL character is refused for the whole site (autolab_site.middleware), never a 500.
    assert staff_client.get("/campaigns/new/?model=%00").status_code == 400


def test_estimate_from_earlier_rollouts_launches_nothing(staff_client, entry):
    version, model, harness = entry
    old = create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=2,
                          backend="bubblewrap", enqueue=False)
    start = timezone.now()
    old.rollouts.update(status=RolloutStatus.FINISHED, cost_usd=1.5, agent_started_at=start,
                        agent_finished_at=start + timedelta(minutes=30))
    page = staff_client.post("/campaigns/new/", form_data(version, model, harness, tasks=[
        version.tasks.get(name="sort8_network").pk], estimate="1")).content.decode()
    assert "Estimate:" in page and "about $3.00" in page and "about 1.0 h of agent time" in page
    assert "2 earlier rollouts of this entry" in page
    assert Campaign.objects.count() == 1


def test_earlier_rollouts_need_an_explicit_choice(staff_client, entry):
    version, model, harness = entry
    create_campaign(model, harness, version, k=1, backend="bubblewrap", enqueue=False)
    page = staff_client.post("/campaigns/new/", form_data(version, model, harness, launch="1")).content.decode()
    assert "3 rollouts of nop / nop on these tasks exist: add to them, or re-evaluate (supersede them)." in page
    assert Campaign.objects.count() == 1
    response = staff_client.post("/campaigns/new/", form_data(version, model, harness, launch="1", earlier="supersede"))
    assert response.status_code == 302
    campaign = Campaign.objects.latest("pk")
    assert response["Location"] == f"/campaigns/{campaign.pk}/"
    assert campaign.supersede and campaign.status == Campaign.Status.CHECKING
    assert campaign.created_by.username == "staff" and campaign.k == 2
    assert Rollout.objects.filter(campaign=campaign).count() == 0  # the preflight comes first


def test_tasks_of_another_version_are_refused(staff_client, entry):
    version, model, harness = entry
    other = import_examples("other")
    page = staff_client.post("/campaigns/new/", form_data(version, model, harness, launch="1",
                                                          tasks=[other.tasks.first().pk])).content.decode()
    assert "Not tasks of" in page and Campaign.objects.count() == 0


def test_models_known_only_from_published_results_are_not_offered(staff_client, entry):
    from agents.models import AgentModel
    from evaluations.models import PublishedFigure

    version, model, harness = entry
    paper_only = AgentModel.objects.create(name="paper-only-model")
    PublishedFigure.objects.create(model=paper_only, harness=harness, version=version, measure="avg", value=0.4,
                                   source="a paper")
    cohort = AgentModel.objects.create(name="Human experts, 8 h", kind="human")
    page = staff_client.get("/campaigns/new/").content.decode()
    options = page.split('name="model"', 1)[1].split("</select>", 1)[0]
    assert f'value="{model.pk}"' in options
    assert f'value="{paper_only.pk}"' not in options and f'value="{cohort.pk}"' not in options


def test_a_launch_submitted_twice_starts_one_campaign(staff_client, entry):
    """A double click, a browser's resend or a retried request sent the same launch again: a staff QA pass
    started five identical campaigns. The page's form carries a token a launch takes once."""
    import re

    version, model, harness = entry
    first_page = staff_client.get("/campaigns/new/").content.decode()
    token = re.search(r'name="launch_token" value="([0-9a-f]{32})"', first_page).group(1)
    assert token not in staff_client.get("/campaigns/new/").content.decode()  # every page its own
    data = form_data(*entry, launch="1", launch_token=token)
    # An estimate's refresh keeps the token.
    assert f'value="{token}"' in staff_client.post("/campaigns/new/", form_data(*entry, launch_token=token)).content.decode()
    first = staff_client.post("/campaigns/new/", data)
    campaign = Campaign.objects.get()
    assert first.status_code == 302 and first["Location"] == f"/campaigns/{campaign.pk}/"
    again = staff_client.post("/campaigns/new/", data, follow=True)
    assert Campaign.objects.count() == 1
    assert again.redirect_chain[-1][0] == f"/campaigns/{campaign.pk}/"
    assert f"already launched as campaign {campaign.pk}" in again.content.decode()
    # Another page's token is another launch.
    data["launch_token"] = re.search(r'name="launch_token" value="([0-9a-f]{32})"',
                                     staff_client.get("/campaigns/new/").content.decode()).group(1)
    staff_client.post("/campaigns/new/", {**data, "earlier": "add"})
    assert Campaign.objects.count() == 2


def test_the_form_lists_the_chosen_versions_tasks_and_no_bare_token_label(staff_client, entry):
    """The form showed "Launch token:" with no field beside it, and every version's tasks at once."""
    from tasks.models import BenchmarkVersion, Task

    version, model, harness = entry
    other = BenchmarkVersion.objects.create(name="older")
    Task.objects.create(version=other, name="elsewhere", category="cuda")
    BenchmarkVersion.objects.filter(pk=other.pk).update(created_at=version.created_at - timedelta(days=1))
    page = staff_client.get("/campaigns/new/").content.decode()
    assert "Launch token" not in page and 'type="hidden" name="launch_token"' in page
    assert f'<option value="{version.pk}" selected>' in page  # the newest version, chosen
    shown = [task.name for task in version.tasks.all()]
    for name in shown:
        assert f'data-version="{version.pk}">examples / {name}</option>' in page
    assert f'data-version="{other.pk}" hidden>older / elsewhere</option>' in page
    # The version sent back (an estimate, an error) decides which tasks are shown.
    page = staff_client.post("/campaigns/new/", form_data(other, model, harness, estimate="1")).content.decode()
    assert f'data-version="{other.pk}">older / elsewhere</option>' in page
    assert f'data-version="{version.pk}" hidden>examples / {shown[0]}</option>' in page
