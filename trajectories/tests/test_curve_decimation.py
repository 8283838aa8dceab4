"""A long rollout's curve is sent decimated (analysis.curve.decimate_curve) and given at full resolution when zoomed in (curve.json)."""
from __future__ import annotations

import random
import time

import pytest
from django.urls import reverse

from trajectories.analysis.curve import CURVE_POINTS_SHOWN, decimate_curve
from trajectories.explorer import points_between

from . import factories


def curve(n: int, *, seed: int = 1, direction: str = "lower") -> list[dict]:
    """n benchmark results, ten seconds apart, with their best so far."""
    rng = random.Random(seed)
    points, best = [], None
    for i in range(n):
        metric = rng.uniform(1, 100)
        improved = best is None or (metric < best if direction == "lower" else metric > best)
        best = metric if improved else best
        points.append({"step_id": i + 1, "t": 10.0 * i, "metric": metric, "score": None,
                       "best_metric": best, "best_score": None, "improved": improved})
    return points


@pytest.mark.parametrize("n", [0, 1, CURVE_POINTS_SHOWN])
def test_a_short_curve_is_sent_whole(n):
    points = curve(n)
    assert decimate_curve(points) == points


@pytest.mark.parametrize("n", [CURVE_POINTS_SHOWN + 1, 3_000, 50_000])
def test_a_long_curve_keeps_its_ends_every_improvement_and_each_stretchs_extremes(n):
    points = curve(n)
    shown = decimate_curve(points)
    assert len(shown) <= CURVE_POINTS_SHOWN + sum(p["improved"] for p in points)
    assert shown[0] is points[0] and shown[-1] is points[-1]
    assert [p["step_id"] for p in shown] == sorted(p["step_id"] for p in shown)
    assert [p for p in points if p["improved"]] == [p for p in shown if p["improved"]]
    # The extremes of the whole curve are always among them.
    assert min(points, key=lambda p: p["metric"]) in shown and max(points, key=lambda p: p["metric"]) in shown


def test_points_between_reads_seconds_or_step_ids():
    points = curve(10)
    assert [p["step_id"] for p in points_between(points, "t", 20, 40)] == [3, 4, 5]
    assert [p["step_id"] for p in points_between(points, "step", 9, 99)] == [9, 10]


@pytest.fixture
def long_curve_rollout(db):
    rollout = factories.make_rollout(curve=curve(3_000))
    factories.add_step(rollout, 1, source="user", message="Go.")
    return rollout


@pytest.mark.django_db
def test_curve_json_gives_the_zoomed_range_at_full_resolution(client, long_curve_rollout):
    url = reverse("trajectories:rollout_curve", args=[long_curve_rollout.pk])
    answer = client.get(url, {"x": "t", "low": 1000, "high": 3000}).json()
    assert answer["total"] == 201 and len(answer["points"]) == 201
    assert answer["points"][0]["t"] == 1000 and answer["points"][-1]["t"] == 3000
    wide = client.get(url, {"x": "step", "low": 0, "high": 10_000}).json()
    assert wide["total"] == 3_000 and len(wide["points"]) < 3_000


@pytest.mark.django_db
@pytest.mark.parametrize("params", [{}, {"low": "a", "high": 1}, {"low": 5, "high": 1}, {"x": "zz", "low": 0, "high": 1},
                                    {"low": "nan", "high": 1}, {"low": "-inf", "high": "inf"}])
def test_curve_json_refuses_a_bad_range(client, long_curve_rollout, params):
    response = client.get(reverse("trajectories:rollout_curve", args=[long_curve_rollout.pk]), params)
    assert response.status_code == 400 and "errors" in response.json()


@pytest.mark.django_db
def test_the_page_sends_the_curve_decimated(client, long_curve_rollout):
    response = client.get(reverse("trajectories:rollout_detail", args=[long_curve_rollout.pk]))
    plot = response.context["plot"]
    assert plot["points_total"] == 3_000 and len(plot["points"]) <= CURVE_POINTS_SHOWN + 30


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_zooming_in_shows_every_result_in_view(page, live_server):
    rollout = factories.make_rollout(curve=curve(3_000))
    factories.add_step(rollout, 1, source="user", message="Go.")
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]))
    page.wait_for_selector("#curve-plot[data-points]:not([data-points='0'])")
    sent = int(page.get_attribute("#curve-plot", "data-points"))
    assert sent < 600
    # 100 to 150 minutes: results 601 to 901, ten seconds apart.
    page.evaluate("Plotly.relayout(document.getElementById('curve-plot'), {'xaxis.range': [100, 150]})")
    page.wait_for_selector("#curve-plot[data-points='301']", timeout=10_000)
    page.evaluate("Plotly.relayout(document.getElementById('curve-plot'), {'xaxis.autorange': true})")
    page.wait_for_selector(f"#curve-plot[data-points='{sent}']", timeout=10_000)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_zoomed_in_live_plot_stays_at_full_resolution_when_steps_arrive(page, live_server):
    from trajectories.models import RolloutStatus

    rollout = factories.make_rollout(curve=curve(3_000), status=RolloutStatus.RUNNING, reward=None, verifier_fields={})
    factories.add_step(rollout, 1, source="user", message="Go.")
    page.goto(live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]))
    page.wait_for_selector("#curve-plot[data-points]:not([data-points='0'])")
    page.evaluate("""document.addEventListener('autolab:plot-updated', e => { window.plotSteps = e.detail.steps; });
        Plotly.relayout(document.getElementById('curve-plot'), {'xaxis.range': [100, 150]})""")
    page.wait_for_selector("#curve-plot[data-points='301']", timeout=10_000)

    # Forty more results arrive (after the zoomed range) with a new step.
    rollout.curve = curve(3_040)
    rollout.save(update_fields=["curve"])
    factories.add_step(rollout, 2, message="Benchmarking again.")
    deadline = time.monotonic() + 15
    while page.evaluate("window.plotSteps") != 2 and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert page.evaluate("window.plotSteps") == 2
    # Still the zoomed range, still every result in it (not the decimated curve's few).
    page.wait_for_selector("#curve-plot[data-points='301']", timeout=10_000)
    assert page.evaluate("document.getElementById('curve-plot').layout.xaxis.range") == [100, 150]
