"""RE-Bench end to end: runner score logs, Inspect logs and human baselines on one version; board, curves and API agree.

The two RE-Bench-style example tasks run through the evaluation runner
(bubblewrap sandbox) with the oracle and with the scripted stub driving
terminus-2; a real Inspect log (mockllm) and a human-baseline CSV are
imported into the same version. The leaderboard page, its three curves and
the API must then tell the same story.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from evaluations.boards import compute
from evaluations.demo import demo_model_and_harness
from evaluations.results.human_import import import_human_csv
from evaluations.running.campaigns import create_campaign
from evaluations.running.runner import run_rollout
from evaluations.running.stub_llm import start_stub_server
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from trajectories.storing.inspect_import import import_inspect_log
from trajectories.models import Rollout, RolloutStatus
from trajectories.tests.inspect_runs import make_eval_log

from evaluations.tests.runner_helpers import runner_settings, utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox
from evaluations.tests.board_factories import build_boards

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]
REBENCH_TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench"

HUMANS = """attempt_id,task,cohort,source,elapsed_seconds,score,raw_score
h1,window_sums,"Human experts, 8 h",network,600,,2.0
h1,window_sums,"Human experts, 8 h",network,1800,,0.2
h2,window_sums,"Human experts, 8 h",hiring,1200,,1.0
h3,scaling_forecast,"Human experts, 8 h",hiring,1800,0.7,
h4,scaling_forecast,"Human experts, 8 h",outreach,1500,0.9,
"""


@pytest.fixture
def stub_server():
    server = start_stub_server(port=0)
    yield server
    server.shutdown()


def run_campaign(model, harness, version, k: int) -> list[Rollout]:
    campaign = create_campaign(model, harness, version, k=k, backend="bubblewrap", enqueue=False)
    for rollout in campaign.rollouts.order_by("id"):
        result = run_rollout(rollout.pk)
        assert result.status == RolloutStatus.FINISHED, (rollout, result.status, result.status_reason)
    return list(campaign.rollouts.select_related("task").order_by("id"))


def test_runner_inspect_and_humans_on_one_version(settings, tmp_path, monkeypatch, stub_server, client):
    require_sandbox()
    runner_settings(settings, tmp_path)
    settings.STUB_LLM_PORT = stub_server.port
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-the-stub")
    assert import_tasks(REBENCH_TASKS, version="rebench-examples").ok
    version = BenchmarkVersion.objects.get(name="rebench-examples")
    version.human_hourly_rate_usd = 120.0
    version.save()

    # The runner: the oracle (k=2) and the scripted stub driving terminus-2 (k=1).
    oracle = run_campaign(*utility_entry("oracle"), version, k=2)
    stub = run_campaign(*demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub"), version, k=1)
    for rollout in oracle + stub:
        if rollout.task.name == "window_sums":
            # The scoring tool's calls, re-scored by the verifier: one for the oracle; for the stub the starting
            # solution's, the solution's own and (unless it submits while the last one still runs) one more.
            assert len(rollout.score_log) in ((1,) if rollout in oracle else (2, 3)), rollout.score_log
            assert all(0 <= e["t"] <= rollout.agent_duration_sec + 1 for e in rollout.score_log)
            assert rollout.reward > 0.3  # about 1 on a quiet machine; timing on a busy one is noisy
        else:
            assert rollout.score_log == [] and rollout.reward == pytest.approx(1.0, abs=1e-3)
    stub_window = next(r for r in stub if r.task.name == "window_sums")
    assert stub_window.score_log[0]["score"] < 0.35  # the starting solution, measured first
    assert stub_window.n_benchmark_calls == 3  # measure, the solution (which scores once), measure

    # An Inspect log and the human baselines, on the same version.
    log = make_eval_log(tmp_path / "logs", [4.0, 0.5, 0.2], final_runtime=0.3, samples=2)
    assert [o.outcome for o in import_inspect_log(log)] == ["created", "created"]
    assert import_human_csv(HUMANS, version).created == 4

    data = compute.compute_board(version)
    entries = {e.model: e for e in data.entries}
    assert set(entries) == {"oracle", "scripted-stub", "model", "Human experts, 8 h"}
    human = entries["Human experts, 8 h"]
    assert human.human and not human.comparison

    # Every entry's Avg@k is the mean over tasks of the mean of its rollouts' scores in the API.
    api_rollouts = client.get("/api/v1/rollouts/", {"version": "rebench-examples", "page_size": 500}).json()["results"]
    build_boards(version)  # as the boards worker would (the API never builds one)
    api_board = {r["model"]: r for r in client.get("/api/v1/leaderboard/", {"version": "rebench-examples"}).json()["entries"]}
    curves = {c["model"]: c for c in client.get("/api/v1/time-curves/", {"version": "rebench-examples"}).json()["entries"]}
    for name, entry in entries.items():
        per_task = {}
        for row in api_rollouts:
            if row["model"] == name:
                per_task.setdefault(row["task"], []).append(row["score"])
        expected = sum(sum(s) / len(s) for s in per_task.values()) / 2
        assert entry.overall.avg == pytest.approx(expected), name
        assert api_board[name]["avg"] == pytest.approx(expected), name
        # The curves end at the table's figure: with every run complete, score@1 is Avg@k.
        assert curves[name]["score_at_data_end"] == pytest.approx(expected), name
        assert api_board[name]["kind"] == ("human" if name.startswith("Human") else "agent")
    # The best of the score log counts: the Inspect runs' best (0.2 ms) beats their final 0.3 ms.
    ln = math.log
    inspect_window = [r["score"] for r in api_rollouts if r["model"] == "model" and r["task"] == "window_sums"]
    assert inspect_window == pytest.approx([round((ln(0.2) - ln(5)) / (ln(0.1) - ln(5)), 6)] * 2)
    # Final-only: the humans' scaling_forecast scores are their last events.
    assert sorted(r["score"] for r in api_rollouts if r["model"].startswith("Human") and r["task"] == "scaling_forecast") == [0.7, 0.9]
    # Humans' cost is hours at the staff-set rate.
    for point in curves["Human experts, 8 h"]["cost"]:
        assert point["cost_usd"] == pytest.approx(point["hours"] * 120.0)
    assert curves["Human experts, 8 h"]["data_end_hours"] == pytest.approx(0.5)

    # CSV export of the same curves.
    csv_text = client.get("/api/v1/time-curves.csv", {"version": "rebench-examples"}).content.decode()
    assert csv_text.splitlines()[0].startswith("version,scope,model,harness,kind,curve,hours,k,score")
    from evaluations.api import TIME_CURVE_COLUMNS

    assert csv_text.splitlines()[0] == ",".join(TIME_CURVE_COLUMNS)  # an empty export names the same columns
    assert {"score_at_budget", "elapsed", "cost"} <= {line.split(",")[5] for line in csv_text.splitlines()[1:] if "Human" not in line}

    # The page: humans apart; the three curves' data fetched by its charts when they are about to be seen.
    page = client.get("/", {"version": "rebench-examples"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="human-baselines"' in html and "Human experts, 8 h" in html
    charts = client.get("/charts/", {"version": "rebench-examples", "chart": "time"}).json()
    labels = {s["label"] for s in charts["series"]}
    assert "Human experts, 8 h" in labels and len(charts["series"]) == 4
    for series in charts["series"]:
        mine = curves[series["model"]]
        # The charts carry the tables' three decimals (views.chart_score); the API every digit.
        assert series["budget"]["y"] == pytest.approx(
            [p["score"] for p in mine["score_at_budget"] if p["score"] is not None], abs=5e-4
        )
