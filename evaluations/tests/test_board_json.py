"""The board's JSON and CSV, as the API and the pages emit them, byte for byte on a fixed fixture.

JS and API users read these: a change to how the board is built or typed
must not change one key, one value or their order. The expected files
(board_json/) were written by the code before the board had a written
shape (commit e351e62). Regenerate them only for a change of the output
that is meant, and say so in the commit.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evaluations.results.human_import import import_human_csv
from agents.models import AgentModel, Harness
from evaluations.models import Entry
from evaluations.results.published import import_results
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks

from evaluations.tests.board_factories import build_boards, hand_table, make_rollout

# Sequences reset: ids (in keys and links) are the same on every run and database.
pytestmark = pytest.mark.django_db(transaction=True, reset_sequences=True)
EXPECTED = Path(__file__).resolve().parent / "board_json"
REBENCH_TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench"

# Per-task scores of two main entries and an ablation, and a main table whose figures they reproduce
# (model-a's avg), contradict (model-b's avg) or cannot check (model-z has no per-task scores).
PUBLISHED_SCORES = """model,harness,version,task,score,source,set
model-a,terminus-2,1.1,t1,0.5,Paper 2026 Table 9,main
model-a,terminus-2,1.1,t2,0.2,Paper 2026 Table 9,main
model-a,terminus-2,1.1,t3,0.7,Paper 2026 Table 9,main
model-b,terminus-2,1.1,t1,0.5,Paper 2026 Table 9,main
model-b,terminus-2,1.1,t3,1.0,Paper 2026 Table 9,main
model-b,terminus-2,1.1,t4,0.2,Paper 2026 Table 9,main
model-b-lite,terminus-2,1.1,t1,0.25,Paper 2026 Table 9,ablation
model-b-lite,terminus-2,1.1,t3,0.5,Paper 2026 Table 9,ablation
"""
PUBLISHED_TABLE = """model,harness,version,source,overall_avg,overall_dom,alpha_best
model-a,terminus-2,1.1,Paper 2026 Table 9,0.35,0.6,0.35
model-b,terminus-2,1.1,Paper 2026 Table 9,0.500,,
model-z,terminus-2,1.1,Paper 2026 Table 2,0.41,0.55,
"""
# One cohort, priced by the version: a raw runtime improving over two hours, a final-only score.
HUMANS = """attempt_id,task,cohort,source,elapsed_seconds,score,raw_score
e1,window_sums,"Experts, 2 h",panel,900,,3.0
e1,window_sums,"Experts, 2 h",panel,5400,,0.4
e2,window_sums,"Experts, 2 h",panel,2700,,1.5
e3,scaling_forecast,"Experts, 2 h",panel,3600,0.3,
e3,scaling_forecast,"Experts, 2 h",panel,7200,0.6,
"""


def autolab_version() -> None:
    """The hand table (with rollouts that must not count), plus what every part of the board shows."""
    world = hand_table()
    version, tasks, harness, models = world["version"], world["tasks"], world["harness"], world["models"]
    # A reward above 1 on a version that clips; an entry with curves, unknown cost and tokens; an ablation.
    make_rollout(tasks["t2"], models["B"], harness, 1.25, index=7)
    curvy = AgentModel.objects.create(name="model-d", display_name="Model D", open_weight=True)
    curve = [{"t": 600, "best_score": 0.3}, {"t": 1800, "best_score": 0.6}]
    for index, task in enumerate(("t1", "t3")):
        make_rollout(tasks[task], curvy, harness, 0.6, index=index, curve=curve, cost_usd=None,
                     n_input_tokens=None, n_output_tokens=None)
    other = Harness.objects.create(name="openhands", version="1.0")
    lesser = AgentModel.objects.create(name="model-e", display_name="Model E", open_weight=False)
    make_rollout(tasks["t1"], lesser, other, 0.1, index=0)
    Entry.objects.create(model=lesser, harness=other, version=version, ablation=True, note="a smaller context")
    import_results(PUBLISHED_SCORES)
    import_results(PUBLISHED_TABLE)


def rebench_version() -> None:
    """RE-Bench's two example tasks: an agent's score logs and a human cohort, priced."""
    assert import_tasks(REBENCH_TASKS, version="rebench-examples").ok
    version = BenchmarkVersion.objects.get(name="rebench-examples")
    version.human_hourly_rate_usd = 120.0
    version.save()
    harness = Harness.objects.get_or_create(name="terminus-2", version="2.0.0")[0]
    agent = AgentModel.objects.create(name="model-r", display_name="Model R")
    for task in version.tasks.order_by("name"):
        for index, scores in enumerate(([0.2, 0.5], [0.4])):
            log = [{"t": 300.0 * (i + 1), "score": s} for i, s in enumerate(scores)]
            make_rollout(task, agent, harness, scores[-1], index=index, score_log=log)
    import_human_csv(HUMANS, version)


def outputs(client) -> dict[str, bytes]:
    """Every JSON and CSV the board reaches users through, by file name."""
    api = "/api/v1"
    got = {}
    build_boards()  # as the boards worker would (a page never builds one)
    build_boards(BenchmarkVersion.objects.get(name="1.1"), open_weight=True)
    for name, url, params in (
        ("leaderboard.json", f"{api}/leaderboard/", {"version": "1.1"}),
        ("leaderboard-beta.json", f"{api}/leaderboard/", {"version": "1.1", "category": "beta"}),
        ("leaderboard-open.json", f"{api}/leaderboard/", {"version": "1.1", "open_weight": "1"}),
        ("leaderboard.csv", f"{api}/leaderboard.csv", {"version": "1.1"}),
        ("heatmap.json", f"{api}/heatmap/", {"version": "1.1"}),
        ("heatmap-alpha.csv", f"{api}/heatmap.csv", {"version": "1.1", "category": "alpha"}),
        ("rebench-leaderboard.json", f"{api}/leaderboard/", {"version": "rebench-examples"}),
        ("time-curves.json", f"{api}/time-curves/", {"version": "rebench-examples"}),
    ):
        response = client.get(url, params)
        assert response.status_code == 200, (name, response.content[:300])
        got[name] = response.content
    # The leaderboard's charts, as the page fetches them (views.leaderboard_charts).
    for name, params in (
        ("page-board-charts.json", {"version": "1.1"}),
        ("page-alpha-board-charts.json", {"version": "1.1", "category": "alpha"}),
        ("rebench-page-board-charts.json", {"version": "rebench-examples"}),
        ("rebench-page-time-charts.json", {"version": "rebench-examples", "chart": "time"}),
    ):
        response = client.get("/charts/", params)
        assert response.status_code == 200, (name, response.content[:300])
        got[name] = response.content
    return got


def test_the_board_reaches_users_byte_for_byte_as_before(client):
    autolab_version()
    rebench_version()
    for name, content in outputs(client).items():
        expected = (EXPECTED / name).read_bytes()
        if content != expected and name.endswith(".json"):
            # Parsed first, for a readable difference (key order aside), then the bytes themselves.
            assert json.loads(content) == json.loads(expected), name
        assert content == expected, name


def test_the_time_charts_carry_the_digits_their_hovers_show(client):
    """RE-Bench's time charts carried every float's 17 digits (a 5-minute budget was 0.08333333333333333 h):
    hours and dollars now go to 4 significant digits (log axes, hovers of 3), scores to the tables' decimals."""
    rebench_version()
    build_boards()
    charts = client.get("/charts/", {"version": "rebench-examples", "chart": "time"}).json()
    measures, scores = [], []
    for series in charts["series"]:
        measures += [series["data_end"], series["dollars_per_hour"], *series["budget"]["x"], *series["elapsed"]["x"],
                     *series["cost"]["x"], *series["cost"]["hours"]]
        scores += [*series["budget"]["y"], *series["elapsed"]["y"], *series["cost"]["y"]]
    measures = [m for m in measures if m is not None]
    assert len(measures) > 50 and len(scores) > 50
    assert all(m == float(f"{m:.4g}") for m in measures)
    assert all(s == round(s, 3) for s in scores if s is not None)
    assert 1 / 12 not in measures and round(1 / 12, 5) in measures  # the 5-minute budget, in hours
