"""The best-so-far curve of a rollout and its summary figures.

Each parsed benchmark reading becomes a point at the seconds elapsed since
the agent started; the running best follows the task's direction (lower or
higher is better). A task without a direction is judged by its normalised
score when it has one, else as higher-is-better.

A long curve is drawn from a decimated copy (decimate_curve) that keeps
every improvement, so the best-so-far line stays exact.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from tasks.lib.numbers import as_float

from trajectories.reading.parsed import CurvePoint, MetricReading


@dataclass
class Reading:
    """A benchmark reading placed in the rollout."""

    step_id: int
    t: float | None
    reading: MetricReading


def elapsed(timestamp: datetime | None, start: datetime | None) -> float | None:
    """Seconds from `start` to `timestamp`; naive datetimes are taken as UTC."""
    if timestamp is None or start is None:
        return None
    return (aware(timestamp) - aware(start)).total_seconds()


def aware(moment: datetime) -> datetime:
    """`moment` itself when it has a time zone, else the same time in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _better(a: float, b: float, direction: str) -> bool:
    """True when `a` beats `b` strictly."""
    return a < b if direction == "lower" else a > b


def best_so_far(readings: list[Reading], direction: str) -> list[CurvePoint]:
    """Curve points for the parsed readings, in order, with the running best."""
    points: list[CurvePoint] = []
    best_metric: float | None = None
    best_score: float | None = None
    by_score = direction not in ("lower", "higher")
    for item in readings:
        reading = item.reading
        if reading.status != "parsed" or reading.value is None:
            continue
        if best_metric is None:
            improved = True
        elif by_score and reading.score is not None and best_score is not None:
            improved = reading.score > best_score
        else:
            improved = _better(reading.value, best_metric, "lower" if direction == "lower" else "higher")
        if improved:
            best_metric, best_score = reading.value, reading.score
        points.append(
            CurvePoint(
                step_id=item.step_id,
                t=item.t,
                metric=reading.value,
                score=reading.score,
                best_metric=best_metric,
                best_score=best_score,
                improved=improved,
            )
        )
    return points


def curve_with_final(curve: list[CurvePoint], final_reward: float | None, end_t: float | None, step_id: int = -1) -> list[CurvePoint]:
    """`curve` plus an end point carrying the verifier's final reward as its score.

    The end point keeps the last best metric (the verifier's own metric is
    not a benchmark reading) and marks `improved` when the reward beats the
    best score seen during the run.
    """
    if final_reward is None:
        return list(curve)
    last = curve[-1] if curve else None
    best_score = last.best_score if last else None
    improved = best_score is None or final_reward > best_score
    end = CurvePoint(
        step_id=step_id,
        t=end_t,
        metric=last.best_metric if last else float("nan"),
        score=final_reward,
        best_metric=last.best_metric if last else float("nan"),
        best_score=max(final_reward, best_score) if best_score is not None else final_reward,
        improved=improved,
    )
    return [replace(point) for point in curve] + [end]


def point_as_dict(point: CurvePoint) -> dict:
    """The JSON shape stored in Rollout.curve."""
    return {
        "step": point.step_id,
        "t": point.t,
        "metric": point.metric,
        "score": point.score,
        "best_metric": point.best_metric,
        "best_score": point.best_score,
        "improved": point.improved,
    }


def rescored(curve: list[dict[str, Any]], score: Callable[[float], float | None]) -> list[dict[str, Any]]:
    """Stored curve points (Rollout.curve) with their scores worked out again by `score`.

    For a rollout whose anchors turned out to be others than the ones its
    curve was scored with: the running best follows the metric in the
    task's direction, so which point is best stays, and only the scores change.
    """
    def again(value: Any) -> float | None:
        return score(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    return [
        {**point, "score": again(point.get("metric")), "best_score": again(point.get("best_metric"))}
        if isinstance(point, dict)
        else point
        for point in curve
    ]


# Benchmark results the plot is sent at once; past this it gets every
# improvement (the best-so-far line, exact) and each stretch's lowest and
# highest result, and asks for full resolution when zoomed in (curve.json).
CURVE_POINTS_SHOWN = 500


def decimate_curve(points: list[dict[str, Any]], limit: int = CURVE_POINTS_SHOWN) -> list[dict[str, Any]]:
    """At most about `limit` of `points`, in order: the first, the last, every improvement, and extremes per stretch.

    Improvements are kept even past `limit`: the best-so-far line is drawn
    through them and must stay the rollout's. The other points are cut into
    equal stretches, each showing its lowest and highest metric, so that a
    spike or a collapse stays visible.
    """
    if len(points) <= limit:
        return points
    keep = {0, len(points) - 1}
    keep.update(index for index, point in enumerate(points) if point.get("improved"))
    others = [index for index in range(len(points)) if index not in keep]
    stretches = max(1, (limit - len(keep)) // 2)
    size = -(-len(others) // stretches)
    for start in range(0, len(others), size):
        stretch = [index for index in others[start : start + size] if as_float(points[index].get("metric")) is not None]
        if stretch:
            keep.add(min(stretch, key=lambda index: points[index]["metric"]))
            keep.add(max(stretch, key=lambda index: points[index]["metric"]))
    return [points[index] for index in sorted(keep)]
