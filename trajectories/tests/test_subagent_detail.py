"""Subagent trajectories (terminus-2 summarisation files) are browsable."""
from __future__ import annotations

import pytest
from django.urls import reverse

from trajectories.models import Rollout, SubTrajectory
from trajectories.services import import_trial_dir

from .trialdata import make_task, make_trial, trajectory, write_json

pytestmark = pytest.mark.django_db

LONG = "summary line\n" * 200  # longer than the page's preview


def imported_rollout(tmp_path) -> tuple[Rollout, SubTrajectory]:
    make_task("demo_task")
    folder = make_trial(tmp_path)
    summary = trajectory(1)
    summary["steps"][1]["message"] = "Summarising what happened so far."
    summary["steps"][1]["observation"]["results"][0]["content"] = LONG
    write_json(folder / "agent" / "trajectory.summarization-1-summary.json", summary)
    assert import_trial_dir(folder).outcome == "created"
    return Rollout.objects.get(), SubTrajectory.objects.get()


def test_rollout_page_links_its_subagent_trajectories(client, tmp_path):
    rollout, sub = imported_rollout(tmp_path)
    body = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert "Subagent trajectories" in body
    assert reverse("trajectories:subagent_detail", args=[rollout.pk, sub.pk]) in body
    # The subagent's own steps are not mixed into the main trajectory.
    assert "Summarising what happened so far." not in body


def test_subagent_page_shows_its_steps_and_loads_their_full_outputs(client, tmp_path):
    rollout, sub = imported_rollout(tmp_path)
    body = client.get(reverse("trajectories:subagent_detail", args=[rollout.pk, sub.pk])).content.decode()
    assert "Summarising what happened so far." in body
    assert f"sub={sub.pk}" in body  # the load-more button asks for this trajectory's step

    url = reverse("trajectories:step_observation", args=[rollout.pk, 2])
    full = client.get(url, {"sub": sub.pk}).content.decode()
    assert full.count("summary line") == 200
    main = client.get(url).content.decode()
    assert "summary line" not in main  # step 2 of the main trajectory is another step


def test_subagent_of_another_rollout_is_404(client, tmp_path):
    rollout, sub = imported_rollout(tmp_path)
    response = client.get(reverse("trajectories:subagent_detail", args=[rollout.pk + 1, sub.pk]))
    assert response.status_code == 404
