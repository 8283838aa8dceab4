"""The read-only JSON API (/api/v1/) and its CSV exports."""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from evaluations.tests.board_factories import build_boards

pytestmark = pytest.mark.django_db


def read_csv(response) -> list[dict]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_leaderboard_json(client, world):
    data = client.get(reverse("evaluations:api_leaderboard")).json()
    assert data["api_version"] == "v1"
    assert data["version"]["name"] == "1.1"
    rows = {r["model"]: r for r in data["entries"]}
    assert [r["model"] for r in data["entries"]] == ["model-b", "model-a", "model-c"]
    assert rows["model-a"]["avg"] == pytest.approx(0.35)
    assert rows["model-a"]["best"] == pytest.approx(0.525)
    assert rows["model-b"]["dominance"] == pytest.approx(0.625)
    assert rows["model-a"]["tasks_with_rollouts"] == 3 and rows["model-a"]["rollouts_counted"] == 9
    assert rows["model-a"]["rollouts_infra_error"] == 1
    assert rows["model-a"]["avg_alpha"] == pytest.approx(0.35)
    assert rows["model-a"]["avg_ci_low"] <= 0.35 <= rows["model-a"]["avg_ci_high"]
    assert "avg" in data["definitions"]
    curves = {c["model"]: c for c in data["curves"]["entries"]}
    assert curves["model-a"]["score_at_k"][0] == pytest.approx(0.35)
    assert curves["model-a"]["score_at_k"][-1] == pytest.approx(0.525)
    assert len(curves["model-a"]["score_vs_budget"]) == len(data["curves"]["budget_fraction"])


def test_leaderboard_csv_two_ways(client, world):
    for response in (
        client.get(reverse("evaluations:api_leaderboard_csv")),
        client.get(reverse("evaluations:api_leaderboard"), {"format": "csv"}),
    ):
        rows = read_csv(response)
        assert [r["model"] for r in rows] == ["model-b", "model-a", "model-c"]
        assert float(rows[1]["avg"]) == pytest.approx(0.35)
        assert rows[1]["cost_usd"] == "4.5"


def test_leaderboard_filters(client, world):
    build_boards(world["version"], open_weight=False)
    data = client.get(reverse("evaluations:api_leaderboard"), {"category": "alpha", "open_weight": "0"}).json()
    assert [(r["model"], r["scope"]) for r in data["entries"]] == [("model-a", "alpha"), ("model-c", "alpha")]
    assert data["entries"][0]["dominance"] == pytest.approx(0.75)


def test_heatmap_json_and_csv(client, world):
    data = client.get(reverse("evaluations:api_heatmap")).json()
    cells = {(c["task"], c["model"]): c for c in data["cells"]}
    assert len(cells) == 12  # every task x entry, empty ones included
    assert cells[("t3", "model-a")]["avg"] == pytest.approx(0.7)
    assert cells[("t3", "model-a")]["scores"] == "0.6 0.6 0.9"
    assert cells[("t4", "model-a")]["avg"] is None and cells[("t4", "model-a")]["n_infra_error"] == 1
    assert cells[("t3", "model-a")]["rollouts_url"].startswith("/rollouts/?task=")
    rows = read_csv(client.get(reverse("evaluations:api_heatmap_csv")))
    assert len(rows) == 12 and {"task", "model", "avg", "best"} <= set(rows[0])
    from evaluations.api import HEATMAP_COLUMNS

    assert tuple(rows[0]) == HEATMAP_COLUMNS  # the columns an empty export names are those of a full one


def test_rollouts_paginated_and_filtered(client, world):
    data = client.get(reverse("evaluations:api_rollouts"), {"page_size": 10}).json()
    assert data["count"] == 37  # 33 counted + 4 excluded
    assert data["pages"] == 4 and len(data["results"]) == 10
    assert data["next"].endswith("page=2") or "page=2" in data["next"]
    assert data["previous"] is None
    last = client.get(reverse("evaluations:api_rollouts"), {"page_size": 10, "page": 4}).json()
    assert len(last["results"]) == 7

    a = world["models"]["A"]
    data = client.get(reverse("evaluations:api_rollouts"), {"model": a.id, "task": "t4"}).json()
    assert data["count"] == 1
    row = data["results"][0]
    assert row["counted"] == "infra" and row["infra_error"] is True and row["url"] == f"/rollouts/{row['id']}/"
    # why, as the rollout page says it (trajectories.verdict's reason)
    assert row["counted_reason"] == "left out: not the agent's fault (infrastructure or configuration)"
    data = client.get(reverse("evaluations:api_rollouts"), {"model": "model-c", "status": "running"}).json()
    assert data["count"] == 1 and data["results"][0]["counted"] == "unfinished"
    assert data["results"][0]["counted_reason"] == "left out: not finished"
    data = client.get(reverse("evaluations:api_rollouts"), {"model": "model-a", "task": "t1"}).json()
    assert {r["counted_reason"] for r in data["results"]} == {"counted"}


def test_rollouts_bad_pages(client, world):
    assert client.get(reverse("evaluations:api_rollouts"), {"page": "x"}).status_code == 400
    assert client.get(reverse("evaluations:api_rollouts"), {"page": 99}).status_code == 404


def test_rollouts_csv(client, world):
    rows = read_csv(client.get(reverse("evaluations:api_rollouts_csv"), {"version": "1.1", "category": "alpha"}))
    # 3 entries x 2 tasks x 3, plus C's superseded t1 and unfinished t2 rollouts.
    assert len(rows) == 18 + 2
    assert {"trial_name", "score", "counted"} <= set(rows[0])


def test_unknown_version_is_a_json_404(client, world):
    response = client.get(reverse("evaluations:api_leaderboard"), {"version": "9.9"})
    assert response.status_code == 404
    assert "9.9" in response.json()["error"]


def test_no_results(client):
    assert client.get(reverse("evaluations:api_leaderboard")).status_code == 404
    assert client.get(reverse("evaluations:api_rollouts")).json()["count"] == 0


def test_docs_page(client):
    html = client.get(reverse("evaluations:api_docs")).content.decode()
    assert "/api/v1/leaderboard/" in html and "/api/v1/rollouts/" in html and "format=csv" in html


def test_an_export_with_no_row_still_names_its_columns(client):
    """The time curves of a version with tasks but no run yet were a 2-byte file (no header row), so a
    script reading the export could not tell an empty result from a broken one; the heatmap's likewise."""
    from pathlib import Path

    from evaluations.api import HEATMAP_COLUMNS, TIME_CURVE_COLUMNS
    from tasks.services import import_tasks

    assert import_tasks(Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench", version="rebench-examples").ok
    build_boards()
    for url, columns in (("/api/v1/time-curves.csv", TIME_CURVE_COLUMNS), ("/api/v1/heatmap.csv", HEATMAP_COLUMNS)):
        response = client.get(url, {"version": "rebench-examples"})
        assert response.status_code == 200, url
        assert response.content.decode().splitlines() == [",".join(columns)], url
