"""The two real flux2_klein_lora Harbor trials on the leaderboard and heatmap."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from evaluations.tests.board_factories import build_boards

pytestmark = [pytest.mark.django_db, pytest.mark.shared]


@pytest.fixture
def imported(shared_tasks_dir, shared_trials_dir):
    from tasks.services import import_tasks
    from trajectories.services import import_path

    cache.clear()
    import_tasks(shared_tasks_dir, version="1.1")
    report = import_path(shared_trials_dir, version="1.1")
    assert report.ok, report.as_dict()
    build_boards()
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


def test_every_curve_of_the_real_trials_agrees_with_their_rewards(client, imported):
    """flux2_klein_lora's verifier scored against 0.0 -> 0.62, not task.toml's 0.0 -> 0.88."""
    import json
    import re

    from evaluations.boards import serving
    from tasks.models import Task
    from trajectories.models import Rollout

    opus = Rollout.objects.get(model__name="claude-opus-4.6")
    assert (opus.anchors["baseline"], opus.anchors["reference"], opus.anchors["status"]) == (0.0, 0.62, "reproduced")
    # The verifier's own metric normalises to its reward, and so does the best local benchmark call
    # (the same 0.5643 as the verifier measured).
    assert opus.curve[-1]["best_metric"] == pytest.approx(0.5643)
    assert opus.curve[-1]["best_score"] == pytest.approx(0.9102, abs=5e-4)
    assert opus.best_score == pytest.approx(0.9102, abs=5e-4)
    scores = list(opus.steps.filter(metric_value__isnull=False).values_list("metric_score", flat=True))
    assert scores and max(scores) == pytest.approx(0.9102, abs=5e-4)

    # The rollout page plots against the verifier's anchors and says which they are.
    html = client.get(reverse("trajectories:rollout_detail", args=[opus.pk])).content.decode()
    plot = json.loads(re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert (plot["baseline"], plot["reference"]) == (0.0, 0.62)
    assert "reference 0.62 (reward.json reference_score)" in html
    grok = Rollout.objects.get(model__name__contains="grok")
    html = client.get(reverse("trajectories:rollout_detail", args=[grok.pk])).content.decode()
    assert "cannot be checked" in html

    # The task page states the formula the verifier used.
    task = Task.objects.get(name="flux2_klein_lora")
    html = client.get(reverse("evaluations:task_detail", args=["1.1", task.name])).content.decode()
    scoring = html.split('id="scoring"', 1)[1].split("</section>", 1)[0]
    assert "with baseline 0 and reference 0.62 composite_quality" in scoring
    assert "1 of 2 rollouts" in scoring and "reward.json reference_score" in scoring

    # The score-against-budget curve ends at the entry's Avg@k: its last point is the reward.
    data = serving.build(task.version)
    for entry in data.entries:
        assert entry.scopes[""].budget_curve[-1] == pytest.approx(entry.overall.avg, abs=1e-9)
