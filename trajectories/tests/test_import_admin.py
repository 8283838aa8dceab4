"""The admin pages for imported rollouts, steps and subtrajectories render."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from trajectories.models import Rollout, Step, SubTrajectory
from trajectories.services import import_trial_dir

from .trialdata import make_task, make_trial, trajectory, write_json

pytestmark = pytest.mark.django_db


def test_admin_pages(client, tmp_path):
    make_task("demo_task")
    folder = make_trial(tmp_path)
    write_json(folder / "agent" / "trajectory.summarization-1-summary.json", trajectory(1))
    assert import_trial_dir(folder).outcome == "created"
    client.force_login(User.objects.create_superuser("admin", password="pw"))
    rollout = Rollout.objects.get()
    sub = SubTrajectory.objects.get()
    step = Step.objects.filter(subtrajectory=None).first()
    pages = {
        "/admin/trajectories/rollout/": rollout.trial_name,
        "/admin/trajectories/rollout/?status__exact=finished": rollout.trial_name,
        f"/admin/trajectories/rollout/{rollout.pk}/change/": "verifier says hello",
        f"/admin/trajectories/step/{step.pk}/change/": "Make it fast.",
        f"/admin/trajectories/subtrajectory/{sub.pk}/change/": sub.name,
    }
    for url, text in pages.items():
        response = client.get(url)
        assert response.status_code == 200, url
        assert text in response.content.decode(), url
    # Main-trajectory steps only under the rollout, subagent steps under their subtrajectory.
    page = client.get(f"/admin/trajectories/subtrajectory/{sub.pk}/change/").content.decode()
    assert page.count('class="field-step_id"') >= 2


def test_rollout_admin_lists_the_runners_state_changes(client, tmp_path):
    from trajectories.models import RolloutEvent

    make_task("demo_task")
    assert import_trial_dir(make_trial(tmp_path)).outcome == "created"
    rollout = Rollout.objects.get()
    RolloutEvent.objects.create(rollout=rollout, status="queued", detail="campaign 7 queued it")
    client.force_login(User.objects.create_superuser("admin", password="pw"))
    page = client.get(f"/admin/trajectories/rollout/{rollout.pk}/change/").content.decode()
    assert "campaign 7 queued it" in page


def test_upload_jobs_are_listed_read_only(client):
    from trajectories.models import UploadJob

    job = UploadJob.objects.create(file_name="runs.tar.gz", status=UploadJob.Status.FAILED, error="archive declares 10 GiB")
    client.force_login(User.objects.create_superuser("admin", password="pw"))
    listing = client.get("/admin/trajectories/uploadjob/?status__exact=failed").content.decode()
    assert "runs.tar.gz" in listing
    page = client.get(f"/admin/trajectories/uploadjob/{job.pk}/change/")
    assert page.status_code == 200 and "archive declares 10 GiB" in page.content.decode()
    assert client.get("/admin/trajectories/uploadjob/add/").status_code == 403
