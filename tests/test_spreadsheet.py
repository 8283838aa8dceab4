"""CSV exports are safe to open in a spreadsheet: formula-looking text is neutralised, numbers are not."""
from __future__ import annotations

import csv
import io

import pytest

from evaluations.tests.board_factories import build_boards

from autolab_site.spreadsheet import cell, safe_cell
from trajectories.failures import service as failure_service
from trajectories.tests import factories

CASES = [
    ("=HYPERLINK(\"http://evil.example\",\"x\")", "'=HYPERLINK(\"http://evil.example\",\"x\")"),
    ("+1+2", "'+1+2"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("gpt-5", "gpt-5"),
    ("a=b", "a=b"),
    ("", ""),
    (-0.5, -0.5),
    (-3, -3),
    (None, None),
    (True, True),
]


@pytest.mark.parametrize("value,expected", CASES)
def test_safe_cell(value, expected):
    assert safe_cell(value) == expected


def rows_of(response) -> list[dict]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def hostile(db):
    model = factories.make_model(name="=HYPERLINK(\"http://evil.example\",\"win\")")
    task = factories.make_task(name="@task")
    rollout = factories.make_rollout(
        task=task, model=model, reward=0.0,
        verifier_fields={"reward": 0.0, "reason": "=cmd|' /C calc'!A0"},
        exception_message="+boom",
    )
    failure_service.classify_and_store(rollout)
    positive = factories.make_rollout(task=task, model=model, reward=-0.25, verifier_fields={"reward": -0.25})
    return rollout, positive


def test_rollouts_csv_neutralises_formulas_and_keeps_negative_numbers(client, hostile):
    rows = {int(r["id"]): r for r in rows_of(client.get("/api/v1/rollouts.csv"))}
    rollout, negative = hostile
    row = rows[rollout.id]
    assert row["model"] == "'=HYPERLINK(\"http://evil.example\",\"win\")"
    assert row["task"] == "'@task"
    assert row["exception_message"] == "'+boom"
    # The verifier's fields are one JSON cell: it starts with "{", nothing to neutralise, and it reads back.
    assert row["verifier_fields"].startswith("{")
    assert rows[negative.id]["reward"] == "-0.25"
    for cell in (c for r in rows.values() for c in r.values()):
        assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
        assert not cell.startswith("-") or cell.lstrip("-").replace(".", "", 1).replace("e", "", 1).isdigit(), cell


def test_failures_csv_neutralises_formulas(client, hostile):
    rows = rows_of(client.get("/failures/export.csv"))
    assert rows, "the zero-score rollout is exported"
    assert {r["model"] for r in rows} == {"'=HYPERLINK(\"http://evil.example\",\"win\")"}
    assert {r["task"] for r in rows} == {"'@task"}
    for cell in (c for r in rows for c in r.values()):
        assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell


def test_leaderboard_and_heatmap_csv_neutralise_formulas(client, hostile):
    build_boards()
    for url in ("/api/v1/leaderboard.csv", "/api/v1/heatmap.csv"):
        rows = rows_of(client.get(url))
        assert rows and {r["model"] for r in rows} == {"'=HYPERLINK(\"http://evil.example\",\"win\")"}, url


@pytest.mark.parametrize("value,expected", [
    (0.27305999999999997, "0.27306"), (0.35000000000000003, "0.35"), (13.0, "13.0"), (-0.25, "-0.25"),
    (-1e-9, "0.0"), (True, "true"), (False, "false"), (3, 3), ("-x", "'-x"), (None, None),
])
def test_a_cell_is_written_as_shown(value, expected):
    """Floats to CSV_DECIMALS, not their binary tail; booleans as the JSON API writes them (issue 46)."""
    assert cell(value) == expected


def test_csv_exports_round_floats_and_write_booleans_as_json_does(client, db):
    rollout = factories.make_rollout(reward=0.27305999999999997, verifier_fields={"reward": 0.27305999999999997})
    row = {int(r["id"]): r for r in rows_of(client.get("/api/v1/rollouts.csv"))}[rollout.id]
    assert row["reward"] == "0.27306"
    assert client.get("/api/v1/rollouts/").json()["results"][0]["reward"] == 0.27305999999999997  # JSON: every digit
    build_boards()
    cells = [c for url in ("/api/v1/rollouts.csv", "/api/v1/leaderboard.csv", "/api/v1/heatmap.csv", "/failures/export.csv")
             for r in rows_of(client.get(url)) for c in r.values()]
    assert cells and not {"True", "False"} & set(cells)
    assert not [c for c in cells if c.replace(".", "", 1).isdigit() and len(c.partition(".")[2]) > 6]
