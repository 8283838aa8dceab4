"""The verifier's metric of an imported trial: in the API, its CSV, the rollout page and its plot (issue 44).

AutoLab v1.1's verifiers write the task's metric beside the reward in
reward.json (discover_sorting: `{"reward": 1.0, "metric": 60, "correctness":
true}`; adaptive_compression under its own name, `bits_per_byte`). The API
record had no metric, and the page showed it only as one more raw field,
without its name or direction.
"""
from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from trajectories.models import Rollout
from trajectories.services import import_trial_dir

from .trialdata import make_task, make_trial

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(db):
    task = make_task("demo_task")
    task.metric, task.direction = "comparator_count", "lower"
    task.save(update_fields=["metric", "direction"])
    return task


def imported(tmp_path, reward: dict) -> Rollout:
    outcome = import_trial_dir(make_trial(tmp_path, reward=reward))
    assert outcome.outcome == "created", outcome.error
    return Rollout.objects.get(pk=outcome.rollout_id)


def api_row(client, rollout: Rollout) -> dict:
    rows = client.get(reverse("evaluations:api_rollouts"), {"task": rollout.task_id}).json()["results"]
    return next(row for row in rows if row["id"] == rollout.pk)


def result_card(client, rollout: Rollout) -> str:
    html = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    return html.split('class="facts verifier"')[1].split("</dl>")[0]


def plot_json(client, rollout: Rollout) -> dict:
    html = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    return json.loads(re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', html, re.S).group(1))


def test_the_metric_of_reward_json_is_in_the_api_the_csv_and_the_page(client, tmp_path, task):
    rollout = imported(tmp_path, {"reward": 1.0, "metric": 60, "correctness": True})
    assert api_row(client, rollout)["metric"] == 60
    response = client.get(reverse("evaluations:api_rollouts_csv"), {"task": rollout.task_id})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [float(row["metric"]) for row in rows] == [60.0]
    card = result_card(client, rollout)
    assert re.search(r'<dt>Metric</dt><dd id="verifier-metric"[^>]*>comparator_count 60 \(lower is better\)</dd>', card), card
    assert plot_json(client, rollout)["final_metric"] == 60


def test_a_metric_under_the_tasks_own_name(client, tmp_path, task):
    """adaptive_compression's verifier writes `bits_per_byte`, not `metric`."""
    task.metric, task.direction = "bits_per_byte", "lower"
    task.save(update_fields=["metric", "direction"])
    rollout = imported(tmp_path, {"reward": 0.8, "correctness": True, "bits_per_byte": 2.113})
    assert api_row(client, rollout)["metric"] == 2.113
    assert ">bits_per_byte 2.113 (lower is better)</dd>" in result_card(client, rollout)
    assert rollout.anchors["metric"] == 2.113 and rollout.anchors["metric_source"] == "reward.json bits_per_byte"


def test_no_metric_is_null_and_no_line(client, tmp_path, task):
    rollout = imported(tmp_path, {"reward": 0.0, "metric": None, "correctness": False})
    assert api_row(client, rollout)["metric"] is None
    assert 'id="verifier-metric"' not in result_card(client, rollout)
    assert plot_json(client, rollout)["final_metric"] is None
