"""The RE-Bench version's leaderboard and its three curves in a real Chromium."""
from __future__ import annotations

from pathlib import Path

import pytest

from evaluations.tests.board_factories import build_boards

from evaluations.results.human_import import import_human_csv
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from trajectories.storing.inspect_import import import_inspect_log
from trajectories.tests.inspect_runs import make_eval_log

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
REBENCH_TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench"
HUMANS = """attempt_id,task,cohort,elapsed_seconds,score
h1,window_sums,"Human experts, 8 h",3600,0.3
h1,window_sums,"Human experts, 8 h",28800,1.2
h2,window_sums,"Human experts, 8 h",28800,0.8
h3,scaling_forecast,"Human experts, 8 h",28800,0.6
"""


@pytest.fixture
def rebench(tmp_path):
    assert import_tasks(REBENCH_TASKS, version="rebench-examples").ok
    version = BenchmarkVersion.objects.get(name="rebench-examples")
    version.human_hourly_rate_usd = 150.0
    version.save()
    for outcome in import_inspect_log(make_eval_log(tmp_path, [4.0, 0.5, 0.2], samples=2)):
        assert outcome.ok, outcome.error
    import_human_csv(HUMANS, version)
    build_boards(version)  # as the boards worker would (a page never builds one)
    return version


def test_the_rebench_leaderboard_and_its_curves(page, live_server, rebench):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server.url + "/?version=rebench-examples")
    # Humans apart from the agents, marked as such, and not ranked.
    humans = page.locator("#human-baselines tr[data-entry]")
    assert humans.count() == 1
    assert "Human experts, 8 h" in humans.inner_text() and "human" in humans.locator(".badge.human").inner_text()
    assert page.locator("#leaderboard-table tbody:not(.humans) tr[data-entry]", has_text="Human experts").count() == 0
    # The three curves, drawn (each once scrolled to: static/js/charts.js), with agents and humans together.
    for chart in ("#chart-time-budget", "#chart-elapsed", "#chart-time-cost"):
        page.locator(chart).scroll_into_view_if_needed()
        page.wait_for_selector(f"{chart} .main-svg")
    legend = page.locator("#chart-time-budget .legend").text_content()
    assert "Human experts, 8 h (human)" in legend and "model / scored_agent" in legend and "data ends" in legend
    assert "(hours, log scale)" in page.locator("#chart-time-budget").text_content()
    assert "$150 per hour" in page.locator("#time-cost-note").inner_text()
    assert "Human experts, 8 h (human)" in page.locator("#chart-time-cost .legend").text_content()
    # The curves follow the filters: one category's tab redraws them for its tasks.
    page.locator(".scope-tabs a", has_text="Scaling law").click()
    page.wait_for_url("**category=scaling_law**")
    page.locator("#chart-elapsed").scroll_into_view_if_needed()
    page.wait_for_selector("#chart-elapsed .main-svg")
    assert "scaling law" in page.locator("#time-curves h2").first.inner_text().lower()
    # The export links carry the same filters.
    href = page.locator("#time-curves a", has_text="CSV").get_attribute("href")
    assert "category=scaling_law" in href and "version=rebench-examples" in href
    assert errors == []


def test_short_agent_runs_without_costs_read_plainly(page, live_server, tmp_path):
    """Agents' runs of seconds, no cost, no humans: the cost panel was a 440 px empty box and the budget axis read
    "hours, log scale" with ticks 0.0083 to 0.0091."""
    assert import_tasks(REBENCH_TASKS, version="rebench-examples").ok
    for outcome in import_inspect_log(make_eval_log(tmp_path, [4.0, 0.5, 0.2], samples=2)):
        assert outcome.ok, outcome.error
    from trajectories.models import Rollout

    Rollout.objects.update(cost_usd=None)  # before the board is first made
    # Runs of 30 and 45 s, whatever the eval took on this machine (on a loaded one a sample took 10x the
    # other's wall-clock time, and the axis rightly turned to a log scale).
    from datetime import timedelta

    for seconds, rollout in zip((30, 45), Rollout.objects.order_by("pk")):
        Rollout.objects.filter(pk=rollout.pk).update(
            agent_finished_at=rollout.agent_started_at + timedelta(seconds=seconds))
    build_boards()
    page.goto(live_server.url + "/?version=rebench-examples")
    for chart in ("#chart-time-budget", "#chart-elapsed", "#chart-time-cost"):
        page.locator(chart).scroll_into_view_if_needed()
    page.wait_for_selector("#chart-time-budget .main-svg")
    page.wait_for_selector("#chart-time-cost[data-state='empty']")
    assert page.locator("#chart-time-cost").inner_text() == "No entry has a recorded cost or an hourly rate."
    assert page.locator("#chart-time-cost").bounding_box()["height"] < 80
    axis = page.locator("#chart-time-budget .g-xtitle").text_content()
    # Seconds or minutes, never hours; a log scale only where the times span a factor of 10 (the score
    # log's first call may come a second into a 30-second run: static/js/time_curves.js timeAxis).
    assert "hours" not in axis, axis
    ticks = page.locator("#chart-time-budget .xtick text").all_text_contents()
    assert ticks and all(len(t.replace("−", "").lstrip("0.")) <= 3 for t in ticks), ticks
