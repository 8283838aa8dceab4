"""Best-so-far curves in both directions, elapsed times and the final-reward end point."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from trajectories.analysis.curve import Reading, best_so_far, curve_with_final, elapsed, point_as_dict
from trajectories.reading.parsed import MetricReading


def readings(values, scores=None):
    scores = scores or [None] * len(values)
    out = []
    for index, (value, score) in enumerate(zip(values, scores)):
        reading = MetricReading(status="unparseable") if value is None else MetricReading("parsed", value, "", score)
        out.append(Reading(step_id=10 + index, t=60.0 * index, reading=reading))
    return out


CURVES = [
    # (direction, values, expected best_metric per parsed point, expected improved flags)
    ("lower", [20.0, 0.9, 1.2, 0.4, 0.4], [20.0, 0.9, 0.9, 0.4, 0.4], [True, True, False, True, False]),
    ("higher", [0.49, 0.56, 0.51, 0.83], [0.49, 0.56, 0.56, 0.83], [True, True, False, True]),
    ("higher", [None, 0.5, None, 0.4], [0.5, 0.5], [True, False]),  # unparseable readings are no points
    ("lower", [], [], []),
]


@pytest.mark.parametrize("direction,values,best,improved", CURVES)
def test_best_so_far(direction, values, best, improved):
    curve = best_so_far(readings(values), direction)
    assert [point.best_metric for point in curve] == best
    assert [point.improved for point in curve] == improved
    assert [point.metric for point in curve] == [value for value in values if value is not None]


def test_points_keep_step_time_and_best_score():
    curve = best_so_far(readings([0.5, 0.7, 0.6], scores=[0.1, 0.5, 0.3]), "higher")
    assert [(point.step_id, point.t) for point in curve] == [(10, 0.0), (11, 60.0), (12, 120.0)]
    assert [point.best_score for point in curve] == [0.1, 0.5, 0.5]


def test_unknown_direction_follows_the_score():
    # A lower raw value with a higher score (a runtime) is an improvement.
    curve = best_so_far(readings([2.0, 1.0], scores=[0.2, 0.6]), "")
    assert [point.improved for point in curve] == [True, True]
    assert curve[-1].best_metric == 1.0


def test_curve_with_final():
    curve = best_so_far(readings([0.5, 0.7], scores=[0.1, 0.5]), "higher")
    full = curve_with_final(curve, 0.91, 9000.0)
    assert len(full) == 3 and full[:2] == curve
    end = full[-1]
    assert (end.t, end.score, end.best_score, end.improved, end.best_metric) == (9000.0, 0.91, 0.91, True, 0.7)
    assert curve_with_final(curve, None, 9000.0) == curve
    lonely = curve_with_final([], 0.0, 100.0)
    assert lonely[0].score == 0.0 and math.isnan(lonely[0].metric)


def test_elapsed_mixes_naive_and_aware_times_as_utc():
    start = datetime(2026, 4, 26, 12, 51, 11, tzinfo=timezone.utc)
    assert elapsed(start + timedelta(seconds=90), start) == 90.0
    assert elapsed(datetime(2026, 4, 26, 12, 52, 11), start) == 60.0
    assert elapsed(None, start) is None and elapsed(start, None) is None


def test_point_as_dict_is_the_stored_shape():
    [point] = best_so_far(readings([0.5], scores=[0.1]), "higher")
    assert point_as_dict(point) == {
        "step": 10, "t": 0.0, "metric": 0.5, "score": 0.1, "best_metric": 0.5, "best_score": 0.1, "improved": True,
    }


def test_rescored_changes_scores_only():
    from trajectories.analysis.curve import rescored

    stored = [
        {"step_id": 1, "t": 5.0, "metric": 0.3, "score": 0.3, "best_metric": 0.3, "best_score": 0.3, "improved": True},
        {"step_id": 2, "t": 9.0, "metric": 0.2, "score": 0.2, "best_metric": 0.3, "best_score": 0.3, "improved": False},
        {"step_id": 3, "t": 12.0, "metric": None, "score": None, "best_metric": 0.3, "best_score": 0.3, "improved": False},
    ]
    again = rescored(stored, lambda value: value / 0.6)
    assert again[0]["score"] == pytest.approx(0.5) and again[1]["score"] == pytest.approx(0.2 / 0.6)
    assert again[2]["score"] is None
    assert [p["best_score"] for p in again] == pytest.approx([0.5, 0.5, 0.5])
    assert [(p["step_id"], p["t"], p["improved"]) for p in again] == [(1, 5.0, True), (2, 9.0, False), (3, 12.0, False)]
