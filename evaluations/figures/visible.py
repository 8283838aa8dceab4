"""What the agent saw against what it got: its own benchmark calls' scores beside the sealed verifier's grade.

Plain data in, figures out; no database, no HTTP, no Django.

- Visible best / last: the best and the last score of the rollout's benchmark
  calls (its stored best-so-far curve: each point's `score` is the call's
  metric converted with the task's anchors, `best_score` the running best),
  on the version's footing (clipped where the version clips rewards). Read by
  tasks.scoring.visible_scores, which the rollout's `sealed_below_visible`
  behaviour flag (trajectories.failures.rules) reads too.
- Sealed: the counted reward the board counts for the rollout.
- Gap: visible best minus sealed. Above 0 the agent measured more than the
  verifier gave: over-fitting to the feedback signal, a lucky run selected,
  or the grader's noise.
- Per entry: the mean gap over the tasks with at least one rollout that
  made a benchmark call (per task the mean over its rollouts, then over the
  tasks, each task weighing the same), its interval from the site's one
  clustered bootstrap (evaluations.figures.bootstrap) over those tasks.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tasks.scoring import visible_best_call, visible_scores  # noqa: F401  (read once, for this and the behaviour flag)

from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs


@dataclass(frozen=True)
class RolloutGap:
    rollout_id: int
    task: Hashable
    visible_best: float | None
    visible_last: float | None
    sealed: float

    @property
    def gap(self) -> float | None:
        return None if self.visible_best is None else self.visible_best - self.sealed


@dataclass(frozen=True)
class EntryGap:
    n_rollouts: int  # rollouts with a visible score
    n_tasks: int
    mean_gap: float | None
    ci: tuple[float, float] | None
    n_above: int  # rollouts whose visible best is above the sealed grade by more than `margin`


def entry_gap(
    entry: Hashable, gaps: Sequence[RolloutGap], categories: Mapping[Hashable, str], margin: float = 0.0,
    n_resamples: int = agg.DEFAULT_RESAMPLES, seed: int = agg.DEFAULT_SEED,
) -> EntryGap:
    """One entry's mean gap and its interval, over the tasks with a visible score."""
    by_task: dict[Hashable, list[float]] = {}
    for g in gaps:
        if g.gap is not None:
            by_task.setdefault(g.task, []).append(g.gap)
    n = sum(len(v) for v in by_task.values())
    above = sum(1 for g in gaps if g.gap is not None and g.gap > margin)
    if not by_task:
        return EntryGap(0, 0, None, None, 0)
    tasks = sorted(by_task, key=lambda t: (categories.get(t, ""), str(t)))
    table = agg.ScoreTable(entries=[entry], tasks=tasks, scores={(entry, t): by_task[t] for t in tasks},
                           categories={t: categories.get(t, "") for t in tasks})
    values, counts = table.arrays()
    per_task = bs.entry_resamples(values[0], counts[0], n_resamples, seed, entry, tasks)[0]
    positions = np.arange(len(tasks))
    draws = bs.clustered_task_draws(n_resamples, bs.strata_of(positions, agg.task_categories(table)), bs.task_rng(seed))
    low, high = bs.percentile_interval(bs.gathered(per_task, draws).mean(axis=-1))
    mean = float(np.mean([np.mean(by_task[t]) for t in tasks]))
    return EntryGap(n, len(tasks), mean, (float(low), float(high)), above)
