"""What a board counts of a rollout: its disposition, its counted score, its usage, curves and score log.

`_count` turns the rows a board reads (`ROLLOUT_FIELDS`) into `Counted`:
per entry and task, the counted scores and rollout ids, the rollouts left
out by disposition (infrastructure errors flagged on their cell), the
clipped ones, usage, best-so-far curves and RE-Bench's score-log runs.
Whether a rollout counts and its score are its verdict's
(`trajectories.verdict`), as on the API and the rollout page. An Inspect
sample's epochs are gathered by sample (`Counted.samples`): on a version
scored by the final score, the figures count the sample, its epochs reduced
as Inspect reduces them (`table_scores`, `aggregation.reduce_epochs`).

No cache and no query here: plain rows in, plain data out, so what a
rollout contributes can be read (and tested) apart from how a board is
computed from it (`compute`).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tasks.scoring import BEST_OF_SCORE_LOG, VERIFIER_REWARD, counted_reward
from trajectories import provenance, verdict
from trajectories.statuses import Disposition

from evaluations.boards import board as board_shape
from evaluations.boards.board import entry_key
from evaluations.figures import aggregation as agg
from evaluations.figures import time_curves as tc

# What a board reads of each rollout (`_count`'s rows).
ROLLOUT_FIELDS = (
    "id",
    "task_id",
    "model_id",
    "harness_id",
    "index",
    "reward",
    "status",
    "superseded",
    "infra_error",
    "excluded",
    "cost_usd",
    "n_input_tokens",
    "n_output_tokens",
    "agent_started_at",
    "agent_finished_at",
    "n_benchmark_calls",
    "curve",
    "score_log",
    "trajectory_source",
    "job_id",
    # An Inspect sample's id and its log's epoch reducer (trajectories.reading.inspect_log); absent elsewhere.
    "config__inspect__sample_id",
    "config__inspect__reducer",
)


def _curve_points(curve: Any, budget: float | None, clip: bool) -> list[tuple[float, float]]:
    """(fraction of the time budget, best score) of a stored best-so-far curve."""
    if not isinstance(curve, list) or not budget:
        return []
    points = [
        (float(p["t"]) / budget, float(p["best_score"]))
        for p in curve
        if isinstance(p, dict) and p.get("t") is not None and p.get("best_score") is not None
    ]
    if clip:
        points = [(t, counted_reward(s, clip)) for t, s in points]
    return points


@dataclass
class Counted:
    """What the counted (and the excluded) rollouts of one board contribute."""

    scores: dict[tuple[str, int], list[float]] = field(default_factory=lambda: defaultdict(list))
    rollout_ids: dict[tuple[str, int], list[int]] = field(default_factory=lambda: defaultdict(list))
    excluded: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    flagged: dict[tuple[str, int], list[int]] = field(default_factory=lambda: defaultdict(list))
    # Counted rollouts whose score the version clipped to [0, 1] (a verifier wrote 1.07).
    clipped: dict[tuple[str, int], list[int]] = field(default_factory=lambda: defaultdict(list))
    # Usage per (entry, category); category None is all tasks.
    usage: dict[tuple[str, str | None], agg.Usage] = field(default_factory=lambda: defaultdict(agg.Usage))
    # Per entry and task: each counted rollout's (curve points, (end, score)).
    curves: dict[str, dict[int, list]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    # Per entry and task: each counted rollout's score log as a time_curves.Run (RE-Bench versions).
    runs: dict[str, dict[int, list]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    n_read: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # rollouts read per entry, counted or not
    # Per entry and task, beside `scores`: each counted rollout's Inspect sample, (log run, sample id, the log's
    # epoch reducer), or None; only cells with a sample are kept.
    samples: dict[tuple[str, int], list[tuple[str, str, str] | None]] = field(default_factory=dict)

    def forget(self, keys: set[str]) -> None:
        """Take out everything of these entries (their rollouts are about to be read again)."""
        for by_cell in (self.scores, self.rollout_ids, self.flagged, self.clipped, self.usage, self.samples):
            for cell in [c for c in by_cell if c[0] in keys]:
                del by_cell[cell]
        for by_entry in (self.excluded, self.curves, self.runs, self.n_read):
            for key in keys:
                by_entry.pop(key, None)


def _count(
    rollouts: list[dict], task_by_id: dict[int, board_shape.TaskInfo], clip: bool, convention: str = "",
    counted: Counted | None = None,
) -> Counted:
    """What `rollouts` contribute, added to `counted` (a new one by default)."""
    counted = Counted() if counted is None else counted
    for r in rollouts:
        key = entry_key(r["model_id"], r["harness_id"])
        counted.n_read[key] += 1
        task = task_by_id.get(r["task_id"])  # the board's counted rollouts are of its version's tasks
        logged = verdict.score_points(r.get("score_log"))
        ruling = verdict.verdict(
            r["status"], superseded=r["superseded"], infra_error=r["infra_error"], excluded=r["excluded"],
            reward=r["reward"], score_log=[s for _, s in logged], final_only=bool(task and task.final_only),
            convention=convention or VERIFIER_REWARD, clip=clip,
        )
        if not ruling.counted:
            counted.excluded[key][ruling.disposition] += 1
            if ruling.disposition == Disposition.INFRA:
                counted.flagged[(key, r["task_id"])].append(r["id"])
            continue
        score = ruling.score
        if ruling.clipped:
            counted.clipped[(key, r["task_id"])].append(r["id"])
        counted.scores[(key, r["task_id"])].append(score)
        counted.rollout_ids[(key, r["task_id"])].append(r["id"])
        _note_sample(counted, (key, r["task_id"]), r, convention)
        seconds = None
        if r["agent_started_at"] and r["agent_finished_at"]:
            seconds = max(0.0, (r["agent_finished_at"] - r["agent_started_at"]).total_seconds())
        # A trajectory written in the agent's sandbox is its own account: its calls and curve enter no figure.
        # (Its usage never filled the counted fields: trajectories.provenance.)
        steps_count = provenance.counts(r["trajectory_source"])
        for scope in (None, task.category):
            counted.usage[(key, scope)].add(
                r["cost_usd"], r["n_input_tokens"], r["n_output_tokens"], seconds,
                r["n_benchmark_calls"] if steps_count else None,
            )
        budget = task.budget_sec or seconds
        end = min(1.0, seconds / budget) if seconds is not None and budget else 1.0
        curve = _curve_points(r["curve"], budget, clip) if steps_count else []
        counted.curves[key][r["task_id"]].append((curve, (end, score)))
        if convention == BEST_OF_SCORE_LOG:
            points = logged
            length = seconds if seconds is not None else max((t for t, _ in points), default=0.0)
            final = counted_reward(r["reward"], clip) if r["reward"] is not None else None
            if clip:
                points = [(t, counted_reward(s, clip)) for t, s in points]
            counted.runs[key][r["task_id"]].append(
                tc.Run(points=tuple(points), end=length, final=final, final_only=task.final_only)
            )
    return counted


def _note_sample(counted: Counted, cell: tuple[str, int], row: dict, convention: str) -> None:
    """Keep which Inspect sample a counted rollout is an epoch of (RE-Bench's runs stay units of their own)."""
    sample = row.get("config__inspect__sample_id")
    unit = None
    if sample is not None and convention != BEST_OF_SCORE_LOG:
        unit = (row.get("job_id") or "", str(sample), row.get("config__inspect__reducer") or "mean")
    if unit is None and cell not in counted.samples:
        return
    units = counted.samples.setdefault(cell, [None] * (len(counted.scores[cell]) - 1))
    units.append(unit)


@dataclass
class TableScores:
    """What a board's `aggregation.ScoreTable` counts: per cell its scores, and for an Inspect task its samples'."""

    scores: dict[tuple[str, int], list[float]]
    bests: dict[tuple[str, int], list[float]]
    n_rollouts: dict[tuple[str, int], int]
    epochs: dict[tuple[str, int], list[list[float]]]  # each sample's scored epochs, in the order of `scores`


def table_scores(counted: Counted) -> TableScores:
    """Each cell's counted scores; an Inspect task's are its samples, each its epochs reduced by its log's reducer.

    Inspect's accuracy averages each sample's scored epochs first, then the
    samples: a sample with two scored epochs weighs what one with three does.
    """
    scores: dict[tuple[str, int], list[float]] = dict(counted.scores)
    bests: dict[tuple[str, int], list[float]] = {}
    n_rollouts: dict[tuple[str, int], int] = {}
    by_sample: dict[tuple[str, int], list[list[float]]] = {}
    for cell, units in counted.samples.items():
        epochs: dict[object, tuple[str, list[float]]] = {}
        for position, (unit, score) in enumerate(zip(units, counted.scores[cell])):
            # A rollout of no sample (a Harbor trial beside the log) is a unit of its own.
            reducer, values = epochs.setdefault(unit[:2] if unit else position, (unit[2] if unit else "mean", []))
            values.append(score)
        scores[cell] = [agg.reduce_epochs(values, reducer) for reducer, values in epochs.values()]
        bests[cell] = [max(values) for _, values in epochs.values()]
        by_sample[cell] = [values for _, values in epochs.values()]
        n_rollouts[cell] = len(units)
    return TableScores(scores, bests, n_rollouts, by_sample)
