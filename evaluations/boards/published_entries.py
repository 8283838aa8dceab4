"""A board's published entries: a paper's per-task scores figured as ours, and its printed figures checked.

Published results (evaluations.results.published imports them) are shown
beside the rollouts' entries, never ranked with them: each (model, harness,
source) group's per-task scores go through the same aggregation as a
board's, Dominance among the published entries alone (as a paper compares
its own), and each figure of the paper's table is set beside the one the
per-task scores give (`FIGURE_VERDICTS`). `compute` adds the result to the
board; nothing here depends on rollouts.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion
from tasks.scoring import counted_reward

from evaluations.boards import board as board_shape
from evaluations.figures import aggregation as agg
from evaluations.models import PublishedFigure, PublishedResult

# A published figure against the per-task scores of its entry: status -> how reports count it.
FIGURE_VERDICTS = {"reproduced": "reproduced", "differs": "differing", "unchecked": "unchecked"}


@dataclass
class _PublishedGroup:
    """A published entry while it is read: its scores and the paper's figures, before it is frozen."""

    key: str
    model: AgentModel
    harness: Harness
    source: str
    # A paper's ablation: badged, apart, out of the comparison unless staff include it.
    ablation: bool
    compared: bool = False
    scores: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    paper: list[board_shape.PaperFigure] = field(default_factory=list)
    figures: dict[str | None, agg.Figures] = field(default_factory=dict)  # by scope, None all tasks

    def frozen(self, version: BenchmarkVersion, n_tasks_total: int) -> board_shape.PublishedEntry:
        overall = self.figures.get(None)
        return board_shape.PublishedEntry(
            key=self.key,
            ablation=self.ablation,
            compared=self.compared,
            model=self.model.name,
            model_id=self.model.id,
            model_label=self.model.label,
            open_weight=self.model.open_weight,
            human=self.model.is_human,
            harness=str(self.harness),
            harness_id=self.harness.id,
            version=str(version),
            source=self.source,
            paper=self.paper,
            overall=overall,
            categories={c: f for c, f in self.figures.items() if c},
            avg=overall.avg if overall else None,
            best=overall.best if overall else None,
            n_tasks=overall.n_tasks if overall else 0,
            n_tasks_total=n_tasks_total,
            n_scores=overall.n_rollouts if overall else 0,
            # Per task, as the heatmap's cells (its exports carry the published scores too).
            cells={
                task: board_shape.PublishedCell(avg=float(np.mean(s)), best=max(s), scores=s)
                for task, s in self.scores.items()
                if s
            },
        )


def _published(
    version: BenchmarkVersion, tasks: list[board_shape.TaskInfo], harness: int | None = None,
    open_weight: bool | None = None, *, n_resamples: int,
) -> list[board_shape.PublishedEntry]:
    """Published entries (model, harness, source) with figures aggregated as ours, and the paper's own figures.

    Dominance compares the published entries that have per-task scores with
    each other, as a paper compares its entries. Each figure of the paper's
    table is set beside the one its entry's per-task scores give.
    """
    scores = PublishedResult.objects.filter(version=version)
    figures = PublishedFigure.objects.filter(version=version)
    if harness is not None:
        scores, figures = scores.filter(harness_id=harness), figures.filter(harness_id=harness)
    if open_weight is not None:
        scores, figures = scores.filter(model__open_weight=open_weight), figures.filter(model__open_weight=open_weight)
    groups: dict[tuple, _PublishedGroup] = {}

    def group_of(row) -> _PublishedGroup:
        key = (row.model_id, row.harness_id, row.source, row.ablation)
        if key not in groups:
            groups[key] = _PublishedGroup(
                key=f"p{len(groups)}", model=row.model, harness=row.harness, source=row.source, ablation=row.ablation
            )
        return groups[key]

    for row in scores.select_related("model", "harness").order_by("model__name", "harness__name", "source", "task_id", "rollout_index"):
        group = group_of(row)
        group.scores[row.task_id].append(counted_reward(row.score, version.clip_rewards))
        group.compared = group.compared or row.compared
    scored = [g for g in groups.values() if g.scores]
    table = agg.ScoreTable(
        entries=[g.key for g in scored],
        tasks=[t.id for t in tasks],
        scores={(g.key, task): s for g in scored for task, s in g.scores.items()},
        categories={t.id: t.category for t in tasks},
    )
    scopes = agg.all_figures(table, {g.key for g in scored if g.compared}, n_resamples=n_resamples)
    for group in scored:
        group.figures = {scope: scopes[scope][group.key] for scope in scopes}

    for figure in figures.select_related("model", "harness").order_by("model__name", "scope", "measure"):
        same_entry = [g for g in groups.values()
                      if (g.model.id, g.harness.id, g.ablation) == (figure.model_id, figure.harness_id, figure.ablation)]
        checked = [g for g in same_entry if g.figures]
        group = next((g for g in checked if g.source == figure.source), None) or (checked or [None])[0]
        group = group or next((g for g in same_entry if g.source == figure.source), None) or group_of(figure)
        mine = group.figures.get(figure.scope or None)
        ours = board_shape.measure_value(mine, figure.measure) if mine else None
        if ours is None:
            status = "unchecked"
        else:
            status = "reproduced" if agg.reproduces(figure.value, figure.decimals, ours) else "differs"
        group.paper.append(
            board_shape.PaperFigure(
                scope=figure.scope, measure=figure.measure, value=figure.value,
                printed=f"{figure.value:.{figure.decimals}f}", ours=ours, status=status, source=figure.source,
            )
        )
    published = [group.frozen(version, len(tasks)) for group in groups.values()]
    # Sorted like the board: main entries before ablations, each by Avg@k (the paper's printed one where
    # no per-task scores give it), best first.
    return sorted(published, key=lambda p: (p.ablation, -_sort_avg(p), p.model, p.source))


def _sort_avg(published: board_shape.PublishedEntry) -> float:
    if published.avg is not None:
        return published.avg
    printed = published.printed(None, "avg")
    return printed if printed is not None else -1.0
