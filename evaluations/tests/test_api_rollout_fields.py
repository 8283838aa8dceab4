"""/api/v1/rollouts/ carries what a rollout's page shows: outcome, causes, flags, exception, verifier fields."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from trajectories.models import FailureLabel, Rollout

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(world):
    rollouts = list(Rollout.objects.filter(model=world["models"]["A"], task=world["tasks"]["t1"]).order_by("index"))
    first, second, third = rollouts[:3]
    Rollout.objects.filter(pk=first.pk).update(
        outcome="scored", behaviour_flags=["timed_out_but_scored", "regressed_after_best"],
        exception_type="AgentTimeoutError", exception_message="the agent ran out of time",
        verifier_fields={"reward": 1.0, "metric": 0.5, "reason": "ok"},
    )
    Rollout.objects.filter(pk=second.pk).update(outcome="scored", behaviour_flags=["regressed_after_best"])
    Rollout.objects.filter(pk=third.pk).update(
        outcome="zero", failure_cause="no_improvement", failure_secondary=["budget_exhausted"],
        behaviour_flags=["never_called_benchmark"],
    )
    FailureLabel.objects.create(rollout=third, cause="correctness_failed", notes="checked by hand")
    return first, second, third


def test_every_field_the_page_shows(client, flagged):
    first, _, third = flagged
    rows = {r["id"]: r for r in client.get(reverse("evaluations:api_rollouts"), {"page_size": 500}).json()["results"]}
    row = rows[first.pk]
    assert row["behaviour_flags"] == ["timed_out_but_scored", "regressed_after_best"]
    assert row["exception_type"] == "AgentTimeoutError" and row["exception_message"] == "the agent ran out of time"
    assert row["verifier_fields"] == {"reward": 1.0, "metric": 0.5, "reason": "ok"}
    assert row["outcome"] == "scored"
    row = rows[third.pk]
    assert row["cause"] == "correctness_failed" and row["cause_source"] == "label"
    assert row["automatic_cause"] == "no_improvement" and row["secondary_causes"] == ["budget_exhausted"]
    assert {"anchors_baseline", "anchors_reference", "anchors_status"} <= set(row)
    # Where the usage and the steps come from (trajectories.provenance): these were made, not imported.
    assert (row["usage_source"], row["trajectory_source"], row["reported_usage"]) == ("trial", "trial", {})


def test_filter_by_flag_outcome_and_cause(client, flagged):
    first, second, third = flagged
    url = reverse("evaluations:api_rollouts")
    data = client.get(url, {"flag": "timed_out_but_scored"}).json()
    assert [r["id"] for r in data["results"]] == [first.pk]
    data = client.get(url, {"flag": "regressed_after_best"}).json()
    assert [r["id"] for r in data["results"]] == [first.pk, second.pk]
    # The cause a staff label gives, as the failure pages use it.
    assert [r["id"] for r in client.get(url, {"cause": "correctness_failed"}).json()["results"]] == [third.pk]
    assert client.get(url, {"cause": "no_improvement"}).json()["count"] == 0
    assert client.get(url, {"outcome": "zero"}).json()["count"] == 1
    response = client.get(url, {"flag": "timed_out"})
    assert response.status_code == 400 and "timed_out_but_scored" in response.json()["error"]


def test_csv_carries_the_same(client, flagged):
    first, _, third = flagged
    response = client.get(reverse("evaluations:api_rollouts_csv"), {"flag": "timed_out_but_scored"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [int(r["id"]) for r in rows] == [first.pk]
    assert rows[0]["behaviour_flags"] == "timed_out_but_scored; regressed_after_best"
    assert json.loads(rows[0]["verifier_fields"]) == {"reward": 1.0, "metric": 0.5, "reason": "ok"}
    assert rows[0]["exception_type"] == "AgentTimeoutError"
