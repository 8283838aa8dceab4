"""The two real flux2_klein_lora Harbor trials on the leaderboard and heatmap."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

pytestmark = [pytest.mark.django_db, pytest.mark.shared]


@pytest.fixture
def imported(shared_tasks_dir, shared_trials_dir):
    from tasks.services import import_tasks
    from trajectories.services import import_path

    cache.clear()
    import_tasks(shared_tasks_dir, version="1.1")
    report = import_path(shared_trials_dir, version="1.1")
    assert report.ok, report.as_dict()
    return report


def test_leaderboard_and_heatmap_show_the_real_trials(client, imported):
    data = client.get(reverse("evaluations:api_leaderboard"), {"version": "1.1"}).json()
    rows = {r["model"]: r for r in data["entries"]}
    assert len(rows) == 2
    opus = next(r for name, r in rows.items() if "opus" in name)
    grok = next(r for name, r in rows.items() if "grok" in name)
    # One task of the version has a rollout each: Avg@k is its score over all tasks.
    n_tasks = opus["tasks_total"]
    assert n_tasks == 10
    assert opus["avg"] == pytest.approx(0.9102 / n_tasks, abs=1e-4)
    assert grok["avg"] == 0.0
    assert opus["tasks_with_rollouts"] == 1 and opus["rollouts_counted"] == 1
    assert opus["dominance"] > grok["dominance"]

    cells = client.get(reverse("evaluations:api_heatmap"), {"version": "1.1"}).json()["cells"]
    flux = {c["model"]: c for c in cells if c["task"] == "flux2_klein_lora"}
    assert flux[opus["model"]]["avg"] == pytest.approx(0.9102, abs=1e-4)
    assert flux[grok["model"]]["avg"] == 0.0 and flux[grok["model"]]["n_rollouts"] == 1

    html = client.get(reverse("evaluations:heatmap"), {"version": "1.1"}).content.decode()
    assert "0.910" in html and "flux2_klein_lora" in html
    html = client.get(reverse("evaluations:leaderboard"), {"version": "1.1"}).content.decode()
    assert "1/10 tasks, 1 rollout" in html
