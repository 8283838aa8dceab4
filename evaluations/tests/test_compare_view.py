"""The compare view and its API: two entries' paired difference, its level and method named."""
from __future__ import annotations

import pytest

from evaluations.boards import pairs as board_pairs
from evaluations.boards import serving
from evaluations.figures import paired
from evaluations.figures.ranking import INTERVAL_PERCENT

from evaluations.tests.board_factories import build_boards, hand_table

pytestmark = pytest.mark.django_db


def built(world: dict) -> dict:
    """The world with its board built, as the boards worker would have (a page never builds one)."""
    build_boards()
    return world


def keys(world) -> dict:
    harness = world["harness"].id
    return {name: f"m{m.id}-h{harness}" for name, m in world["models"].items()}


def test_the_page_shows_the_paired_difference_overall_and_per_category(client):
    world = built(hand_table())
    k = keys(world)
    page = client.get("/compare/entries/", {"version": "1.1", "a": k["B"], "b": k["A"]})
    assert page.status_code == 200
    html = page.content.decode()
    table = html.split('id="compare-table"', 1)[1].split("</table>", 1)[0]
    assert "All tasks" in table and table.count('<th scope="row">') == 3  # all tasks, alpha, beta
    assert f"{INTERVAL_PERCENT}% interval" in table and "paired clustered bootstrap" in table
    # B - A over the 3 tasks both have (A has no t4): (.5 - .5 + .1 - .2 + 1 - .7) / 3.
    assert "+0.067" in table
    assert "Holm-corrected over the 2 categories" in html
    expected = paired.compare(board_pairs.score_table(serving.board(world["version"])), k["B"], k["A"])
    low, high = expected[0].ci
    assert f"[{low:+.3f}, {high:+.3f}]" in table


def test_the_api_names_level_and_method_in_its_fields(client):
    world = built(hand_table())
    k = keys(world)
    body = client.get("/api/v1/compare/", {"version": "1.1", "a": k["B"], "b": k["A"]}).json()
    assert body["interval_percent"] == INTERVAL_PERCENT and body["method"].startswith("paired clustered bootstrap")
    overall = body["differences"][0]
    assert overall["scope"] is None and overall["n_tasks_both"] == 3
    assert overall["avg_difference"] == pytest.approx(0.2 / 3)
    low = overall[f"avg_difference_ci{INTERVAL_PERCENT}_paired_clustered_bootstrap_low"]
    high = overall[f"avg_difference_ci{INTERVAL_PERCENT}_paired_clustered_bootstrap_high"]
    assert low <= overall["avg_difference"] <= high
    assert 0 <= overall["p_first_ahead_paired_clustered_bootstrap"] <= 1
    assert "rollouts_per_task_needed_normal_approximation" in overall
    assert [d["scope"] for d in body["differences"]] == [None, "alpha", "beta"]
    text = client.get("/api/v1/compare.csv", {"version": "1.1", "a": k["B"], "b": k["A"]}).content.decode()
    header, first = text.splitlines()[:2]
    assert header.startswith("version,a,b,scope,n_tasks_both,avg_difference,")
    assert f"avg_difference_ci{INTERVAL_PERCENT}_paired_clustered_bootstrap_low" in header
    assert first.startswith("1.1,Model B / terminus-2 2.0.0,Model A / terminus-2 2.0.0,all,3,")


def test_defaults_and_refusals(client):
    world = built(hand_table())
    # No a, b: the board's first two compared entries.
    assert client.get("/compare/entries/", {"version": "1.1"}).status_code == 200
    assert client.get("/api/v1/compare/", {"version": "1.1"}).json()["a"]["key"]
    bad = client.get("/compare/entries/", {"version": "1.1", "a": "nobody"})
    assert bad.status_code == 400 and "no entry" in bad.content.decode()
    assert client.get("/api/v1/compare/", {"version": "1.1", "b": "nobody"}).status_code == 400
    assert client.get("/api/v1/compare/", {"version": "9.9"}).status_code == 404
    assert client.get("/compare/entries/", {"version": "9.9"}).status_code == 404
    assert world


def test_the_board_links_to_it(client):
    built(hand_table())
    html = client.get("/", {"version": "1.1"}).content.decode()
    assert 'id="compare-link"' in html and "/compare/entries/?version=1.1" in html


def test_the_matrix_of_the_top_entries(client):
    """Row minus column over the tasks both have, bold where separated; rank ranges from the paired intervals."""
    world = built(hand_table())
    k = keys(world)
    html = client.get("/compare/entries/", {"version": "1.1"}).content.decode()
    matrix = html.split('id="compare-matrix"', 1)[1].split("</table>", 1)[0]
    data = serving.board(world["version"])
    top = board_pairs.top_matrix(data)
    assert [e.key for e in top.entries] == board_pairs.default_entries(data)[:3]
    assert len(top.entries) == 3 and matrix.count('<th scope="row">') == 3
    for (entry, (low, high), row) in top.lines:
        assert f"{low}–{high}" in matrix
        for d in row:
            if d is not None:
                assert f"{d.difference:+.3f}" in matrix
    # B minus A as on the compare table above it.
    b_a = top.rows[[e.key for e in top.entries].index(k["B"])][[e.key for e in top.entries].index(k["A"])]
    assert b_a.difference == pytest.approx(0.2 / 3)


def test_a_board_with_one_entry_has_nothing_to_compare(client):
    from agents.models import AgentModel, Harness
    from tasks.models import BenchmarkVersion, Task

    from evaluations.tests.board_factories import make_rollout

    version = BenchmarkVersion.objects.create(name="1.1")
    task = Task.objects.create(version=version, name="t1", category="alpha")
    make_rollout(task, AgentModel.objects.create(name="solo"), Harness.objects.create(name="h", version="1"), 0.5)
    build_boards()
    page = client.get("/compare/entries/", {"version": "1.1"})
    assert page.status_code == 200 and 'id="too-few"' in page.content.decode()
    body = client.get("/api/v1/compare/", {"version": "1.1"}).json()
    assert body["a"] is None and body["differences"] == []


def test_before_its_board_is_built_the_page_and_the_api_say_so(client, monkeypatch):
    """The compare page read a board that was not built yet and answered 500 (after issue 49's stored boards)."""
    monkeypatch.setattr(serving.dispatch, "send_rebuild", lambda *which: "task-id")
    world = hand_table()
    k = keys(world)
    page = client.get("/compare/entries/", {"version": "1.1", "a": k["B"], "b": k["A"]})
    assert page.status_code == 202 and "is being built" in page.content.decode()
    api = client.get("/api/v1/compare/", {"version": "1.1", "a": k["B"], "b": k["A"]})
    assert api.status_code == 202 and api.json()["status"] == "building"


def test_on_one_common_task_no_probability_is_shown(client):
    """Two entries on one task: "too few tasks" stood beside P(a ahead) 1.000 and p 0.002, a claim after all."""
    from agents.models import AgentModel, Harness
    from tasks.models import BenchmarkVersion, Task

    from evaluations.tests.board_factories import make_rollout

    version = BenchmarkVersion.objects.create(name="1.1")
    task = Task.objects.create(version=version, name="t1", category="alpha")
    harness = Harness.objects.create(name="h", version="1")
    make_rollout(task, AgentModel.objects.create(name="first"), harness, 0.9)
    make_rollout(task, AgentModel.objects.create(name="second"), harness, 0.0)
    build_boards()
    html = client.get("/compare/entries/", {"version": "1.1"}).content.decode()
    table = html.split('id="compare-table"', 1)[1].split("</table>", 1)[0]
    row = table.split("All tasks", 1)[1].split("</tr>", 1)[0]
    assert "too few tasks" in row
    cells = [c.strip() for c in row.split('<td class="num">')[1:]]
    assert cells[3].startswith("–") and cells[4].startswith("–"), cells  # P(a ahead), p (Holm)
