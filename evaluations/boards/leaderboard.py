"""From the database to leaderboard figures, cached until results change, updated entry by entry.

`board(version)` returns one `board.Board` (evaluations/boards/board.py writes its
shape down) that the leaderboard, heatmap, model page, task page and API all
read: plain scores go to `evaluations.figures.aggregation`, which computes the
figures.

Caching: every board is stored under a key that includes the board's shape
(`board.SHAPE`: no process reads a board pickled by code of another shape)
and a *generation*, kept in the database (BoardGeneration) so that every
process reads the same one. Saving or deleting an Entry, PublishedResult, Task,
BenchmarkVersion, AgentModel, Harness or FailureLabel bumps the global counter
(signals connected in `EvaluationsConfig.ready`); creating or deleting a
Rollout, or saving one in a way that changes what boards read
(`board_state`), bumps the counter of its entry on its version only
(`entry_scope`), so a live campaign on one version leaves the others' boards
cached. Code that changes rollouts with `QuerySet.update()`, `bulk_update()`
or `bulk_create()` (no signals) must call `invalidate()` (with the version
when it knows it: every entry of it is then recomputed).

Updating: a process keeps its last board of each version and filters
(`Kept`); the next one reads and recomputes only the entries whose counter
moved (`updated_board`), and `compute_board` (from nothing) is the reference
it equals. Serving: `served_board` answers from the cache; a large board
(AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS) with a shared cache is never computed in
a request: the last one is served with its age while the boards queue's
worker runs `rebuild`. Nothing is served from before a change without saying so.
"""
from __future__ import annotations

import gc
import itertools
import logging
import re
import threading
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache, caches
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils.timesince import timesince

from agents.models import AgentModel, Harness
from autolab_site import last_writes
from tasks.models import BenchmarkVersion, Task
from tasks.scoring import BEST_OF_SCORE_LOG, counted_reward, run_score
from trajectories import provenance, statuses
from trajectories.models import Rollout
from trajectories.statuses import Disposition

from evaluations.boards import board as board_shape
from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs
from evaluations.figures import time_curves as tc
from evaluations.links import rollout_url, rollouts_url
from evaluations.models import BoardGeneration, Entry, PublishedFigure, PublishedResult

logger = logging.getLogger(__name__)

BOARD_TIMEOUT = 24 * 3600
# Fractions of the time budget, k/40 each as the correctly rounded division
# (linspace's 0.30000000000000004 is not 0.3): a score logged at 30% of the
# budget, itself t / budget, falls on the grid point and not beside it.
BUDGET_GRID = np.arange(41) / 40
N_RESAMPLES = agg.DEFAULT_RESAMPLES


# --- cache generation -------------------------------------------------------


# Changes made by this process, counted at once: they reach the database's
# counter only when they commit, and this process must not serve from before
# them meanwhile (nor a test, whose transaction never commits).
_changes_here = itertools.count(1)
_seen_here: dict[str, int] = {}  # scope -> this process's latest change
_changed_here_at = 0.0  # when this process last changed what boards read (epoch seconds)


GLOBAL = ""  # the scope every board reads: tasks, models, entries, published results


def version_scope(version_id: int) -> str:
    """The counter of a change to one benchmark version's rollouts that no one entry holds (every entry recomputed)."""
    return f"v{version_id}"


def entry_scope(version_id: int, key: str) -> str:
    """The counter of one entry's rollouts on one version: its change recomputes that entry alone."""
    return f"v{version_id}:{key}"


def _counters(version_id: int | None) -> dict[str, tuple[int, int]]:
    """Scope -> (the database's counter, this process's latest change) of what a version's boards read.

    With no version, every scope.
    """
    rows = BoardGeneration.objects.values_list("scope", "value")
    if version_id is not None:
        rows = rows.filter(
            Q(scope__in=[GLOBAL, version_scope(version_id)]) | Q(scope__startswith=f"{version_scope(version_id)}:")
        )
    values = dict(rows)
    if version_id is None:
        local = dict(_seen_here)
    else:
        prefix = f"{version_scope(version_id)}:"
        local = {
            scope: n for scope, n in _seen_here.items()
            if scope in (GLOBAL, version_scope(version_id)) or scope.startswith(prefix)
        }
    return {scope: (int(values.get(scope, 0)), local.get(scope, 0)) for scope in {*values, *local}}


def _generation_of(counters: dict[str, tuple[int, int]]) -> tuple[int, int, int]:
    everywhere = counters.get(GLOBAL, (0, 0))[0]
    this_version = sum(db for scope, (db, _) in counters.items() if scope != GLOBAL)
    here = sum(local for _, local in counters.values())
    return everywhere, this_version, here


def generation(version_id: int | None = None) -> tuple[int, int, int]:
    """A board's generation: the global counter, its version's (the same in every process) and this process's own changes.

    The version part sums the version's counter and its entries'; with no
    version, every version's: what lists versions changes with any of them.
    """
    return _generation_of(_counters(version_id))


def _bump(scope: str) -> None:
    if _increment(scope):
        return
    try:
        with transaction.atomic():
            # Start from the clock, not 0: cache entries written under an
            # earlier counter (a database reset, say) must not match.
            BoardGeneration.objects.create(scope=scope, value=int(time.time() * 1000))
    except IntegrityError:  # another process made it meanwhile
        _increment(scope)


def _increment(scope: str) -> bool:
    """Add one to the scope's counter; False when it has no row yet.

    Plain SQL: an import runs this at every trial, and the ORM took a millisecond to build its UPDATE.
    """
    table = connection.ops.quote_name(BoardGeneration._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET value = value + 1 WHERE scope = %s", [scope])
        return cursor.rowcount > 0


def invalidate(version_id: int | None = None, entry: str | None = None) -> None:
    """Mark cached boards stale once the change commits, in every process: one entry's of one version (its
    rollouts changed: the next board recomputes that entry alone), one version's, or (None) every board.

    One bump, after the commit, in a statement of its own: a request that
    read the old generation before it may cache the new data under the old
    key (never read again), never the old data under the new one; and no
    transaction holds the counter's row while it runs. An importer runs it
    as its transaction's last write instead (last_writes.run_before_commit):
    committed with the data, which is as safe, and the counter's row is held
    for the commit alone.
    """
    if version_id is None:
        scope = GLOBAL
    elif entry is None:
        scope = version_scope(version_id)
    else:
        scope = entry_scope(version_id, entry)
    global _changed_here_at
    _seen_here[scope] = next(_changes_here)
    _changed_here_at = time.time()
    last_writes.after_commit(lambda: _bump(scope))


def on_result_change(sender, **kwargs) -> None:
    invalidate()


def rollout_version(task_id: int | None, rollout: Rollout | None = None) -> int | None:
    """The benchmark version of a rollout's task (None when unknown: every board is then invalidated).

    Read from `rollout`'s task when that is loaded already (an import sets
    it): a query on every import's save otherwise.
    """
    if task_id is None:
        return None
    task = rollout._state.fields_cache.get("task") if rollout is not None else None
    if task is not None and task.pk == task_id and "version_id" in task.__dict__:
        return task.version_id
    return Task.objects.filter(pk=task_id).values_list("version_id", flat=True).first()


def _rollout_entry(instance: Rollout) -> str | None:
    data = instance.__dict__
    if data.get("model_id") is None or data.get("harness_id") is None:
        return None
    return entry_key(data["model_id"], data["harness_id"])


def on_rollout_deleted(sender, instance: Rollout, **kwargs) -> None:
    invalidate(rollout_version(instance.__dict__.get("task_id")), _rollout_entry(instance))


# A rollout is saved many times while it runs (heartbeats, every streamed
# step). Only a save that changes what the boards read invalidates them: each
# Rollout remembers its board state when loaded and compares it on save.
BOARD_STATE_FIELDS = (
    "task_id", "model_id", "harness_id", "index", "reward", "status", "superseded", "infra_error", "excluded", "cost_usd",
    "n_input_tokens", "n_output_tokens", "agent_started_at", "agent_finished_at", "n_benchmark_calls", "curve",
    "score_log", "trajectory_source",
)


def board_state(rollout: Rollout) -> tuple | None:
    """What the boards read of a rollout; None when some field is not loaded.

    Fields are read from __dict__ so that a deferred field is never fetched.
    An unfinished rollout only counts as "unfinished": its curve, tokens and
    timings may change freely until its status does.
    """
    data = rollout.__dict__
    if any(name not in data for name in BOARD_STATE_FIELDS):
        return None
    if statuses.disposition(data["status"], data["superseded"], data["infra_error"]) == Disposition.UNFINISHED:
        return (Disposition.UNFINISHED, data["task_id"], data["model_id"], data["harness_id"])
    return tuple(data[name] for name in BOARD_STATE_FIELDS)


def remember_rollout(sender, instance: Rollout, **kwargs) -> None:
    instance._board_state = board_state(instance)
    instance._board_place = (instance.__dict__.get("task_id"), _rollout_entry(instance))


def on_rollout_saved(sender, instance: Rollout, created: bool = False, **kwargs) -> None:
    before = getattr(instance, "_board_state", None)
    after = board_state(instance)
    instance._board_state = after
    if created or before is None or after is None or before != after:
        # The entry's part of its version's boards only, unless the rollout moved (to another task,
        # maybe of another version: every board; to another entry: its version's) or is not known.
        place_before = getattr(instance, "_board_place", None)
        task_id, entry = instance.__dict__.get("task_id"), _rollout_entry(instance)
        instance._board_place = (task_id, entry)
        if not created and place_before is not None and place_before[0] != task_id:
            task_id = None
        if not created and (place_before is None or place_before[1] != entry):
            entry = None
        invalidate(rollout_version(task_id, instance), entry)


# --- reading the database ---------------------------------------------------


def entry_key(model_id: int, harness_id: int) -> str:
    return f"m{model_id}-h{harness_id}"


def entry_pair(key: str) -> tuple[int, int]:
    """entry_key's (model id, harness id) back."""
    model, harness = key.split("-")
    return int(model[1:]), int(harness[1:])


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
    open_weight: bool | None = None,
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
    scopes = agg.all_figures(table, {g.key for g in scored if g.compared}, n_resamples=N_RESAMPLES)
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

    def forget(self, keys: set[str]) -> None:
        """Take out everything of these entries (their rollouts are about to be read again)."""
        for by_cell in (self.scores, self.rollout_ids, self.flagged, self.clipped, self.usage):
            for cell in [c for c in by_cell if c[0] in keys]:
                del by_cell[cell]
        for by_entry in (self.excluded, self.curves, self.runs, self.n_read):
            for key in keys:
                by_entry.pop(key, None)


def _score_log(value: Any) -> list[tuple[float, float]]:
    """(elapsed seconds, normalised score) of a stored score log, unusable entries left out."""
    if not isinstance(value, list):
        return []
    points = []
    for entry in value:
        if isinstance(entry, dict) and isinstance(entry.get("t"), (int, float)) and isinstance(entry.get("score"), (int, float)):
            points.append((float(entry["t"]), float(entry["score"])))
    return points


def counted_score(r: dict, final_only: bool, convention: str, clip: bool) -> float:
    """A counted rollout's score under its version's convention (tasks.scoring.run_score), a missing one 0.

    `r` holds the rollout's reward and score log; `final_only` is its task's.
    """
    if convention == BEST_OF_SCORE_LOG:
        score = run_score(convention, r["reward"], [s for _, s in _score_log(r.get("score_log"))], final_only)
        return counted_reward(score, clip)
    return counted_reward(r["reward"], clip)


def _count(
    rollouts: list[dict], task_by_id: dict[int, board_shape.TaskInfo], clip: bool, convention: str = "",
    counted: Counted | None = None,
) -> Counted:
    """What `rollouts` contribute, added to `counted` (a new one by default)."""
    counted = Counted() if counted is None else counted
    for r in rollouts:
        key = entry_key(r["model_id"], r["harness_id"])
        counted.n_read[key] += 1
        kind = statuses.disposition(r["status"], r["superseded"], r["infra_error"], r["excluded"])
        if kind != Disposition.COUNTED:
            counted.excluded[key][kind] += 1
            if kind == Disposition.INFRA:
                counted.flagged[(key, r["task_id"])].append(r["id"])
            continue
        task = task_by_id[r["task_id"]]  # the board's rollouts are of its version's tasks
        score = counted_score(r, task.final_only, convention, clip)
        if clip and counted_score(r, task.final_only, convention, False) != score:
            counted.clipped[(key, r["task_id"])].append(r["id"])
        counted.scores[(key, r["task_id"])].append(score)
        counted.rollout_ids[(key, r["task_id"])].append(r["id"])
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
        points = _curve_points(r["curve"], budget, clip) if steps_count else []
        counted.curves[key][r["task_id"]].append((points, (end, score)))
        if convention == BEST_OF_SCORE_LOG:
            points = _score_log(r.get("score_log"))
            length = seconds if seconds is not None else max((t for t, _ in points), default=0.0)
            final = counted_reward(r["reward"], clip) if r["reward"] is not None else None
            if clip:
                points = [(t, counted_reward(s, clip)) for t, s in points]
            counted.runs[key][r["task_id"]].append(
                tc.Run(points=tuple(points), end=length, final=final, final_only=task.final_only)
            )
    return counted


def _competes(model: AgentModel, setting: Entry | None) -> bool:
    """Whether staff's setting (if any) lets an entry into the comparison set."""
    ablation = bool(setting and setting.ablation)
    in_comparison = setting.in_comparison if setting else True
    # Scripted stubs are shown but never compete; nor do human cohorts (a reference) unless staff say so.
    return in_comparison and not ablation and not model.is_scripted and (not model.is_human or bool(setting and setting.humans_compete))


# What one entry shows over one scope that depends on its rollouts alone: kept between boards.
EntryOwn = tuple[board_shape.UsageFigures, list[float], list[float]]  # usage, score@k, budget curve


def _entry_own(table: agg.ScoreTable, counted: Counted, key: str, category: str | None) -> EntryOwn:
    return (
        board_shape.UsageFigures.of(counted.usage[(key, category)]),
        agg.score_at_k(table, key, category=category),
        agg.budget_curve(counted.curves[key], table.tasks_in(category), BUDGET_GRID).tolist(),
    )


def _scope_extras(
    table: agg.ScoreTable, counted: Counted, figures: dict[str, agg.Figures], comparison: set, category: str | None,
    own: dict[tuple[str, str | None], EntryOwn], arrays: tuple[np.ndarray, np.ndarray],
) -> dict[str, board_shape.EntryScope]:
    """Per entry, everything besides the figures that one scope shows: usage, medals, curves, Pareto.

    `own` holds entries' own parts already computed (by (entry, scope)); the
    missing ones are computed and added.
    """
    medals = agg.medal_table(table, comparison, category, arrays)
    usage = {key: counted.usage[(key, category)] for key in table.entries}
    cost = agg.pareto_frontier({k: (usage[k].cost_per_rollout, figures[k].avg) for k in table.entries})
    tokens = agg.pareto_frontier({k: (usage[k].tokens_per_rollout, figures[k].avg) for k in table.entries})
    result = {}
    for key in table.entries:
        if (key, category) not in own:
            own[(key, category)] = _entry_own(table, counted, key, category)
        usage_figures, score_at_k, budget_curve = own[(key, category)]
        result[key] = board_shape.EntryScope(
            usage=usage_figures,
            medals=board_shape.Medals(**medals[key]) if key in medals else None,
            score_at_k=score_at_k,
            budget_curve=budget_curve,
            pareto_cost=key in cost,
            pareto_tokens=key in tokens,
        )
    return result


def _entry_cells(tasks: list[board_shape.TaskInfo], key: str, counted: Counted) -> dict[int, board_shape.Cell]:
    """One entry's heatmap cells, by task id: tasks it has a counted or a flagged rollout on."""
    cells = {}
    for task in tasks:
        got = counted.scores.get((key, task.id), [])
        ids = counted.rollout_ids.get((key, task.id), [])
        infra = counted.flagged.get((key, task.id), [])
        if not got and not infra:
            continue
        best_at = int(np.argmax(got)) if got else None
        cells[task.id] = board_shape.Cell(
            avg=float(np.mean(got)) if got else None,
            best=max(got) if got else None,
            scores=got,
            rollout_ids=ids,
            best_rollout_id=ids[best_at] if best_at is not None else None,
            infra_rollout_ids=infra,
            clipped_rollout_ids=counted.clipped.get((key, task.id), []),
        )
    return cells


def _cells(
    tasks: list[board_shape.TaskInfo], keys: list[str], by_entry: dict[str, dict[int, board_shape.Cell]]
) -> dict[int, dict[str, board_shape.Cell]]:
    """The board's cells, task id -> entry key -> cell, from each entry's."""
    return {task.id: {key: by_entry[key][task.id] for key in keys if task.id in by_entry[key]} for task in tasks}


@dataclass
class Kept:
    """What a process keeps of a board it computed, to bring it up to date by recomputing only the entries
    whose rollouts changed (their counters, `entry_scope`, moved).

    `base` is what every entry depends on (the global and version counters, the
    tasks, the version's scoring): when it differs, everything is recomputed.
    """

    base: tuple
    keys: list[str]  # the board's entries
    seen: dict[str, tuple[int, int]]  # every entry counter of the version when read, on the board or not
    counted: Counted
    boot: bs.Bootstrap
    own: dict[tuple[str, str | None], EntryOwn]
    cells: dict[str, dict[int, board_shape.Cell]]  # entry key -> its cells by task id
    published: list[board_shape.PublishedEntry]
    n_read: int = 0  # rollouts read from the database to make this board (all of them, or the changed entries')


def compute_board(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board:
    """Every figure of one benchmark version, uncached and from nothing: the reference `updated_board` equals.

    `harness` (an id) and `open_weight` choose the entries: everything on
    the board, Dominance, ranks and medals included, is of those entries
    alone, so every figure of a filtered page agrees with every other.
    """
    return _compute(version, harness, open_weight, None)[0]


def _compute(
    version: BenchmarkVersion, harness: int | None, open_weight: bool | None, kept: Kept | None
) -> tuple[board_shape.Board, Kept]:
    """The board, from `kept` where its base still holds (only changed entries read again), and what to keep."""
    # The counters first, the data after: a change committed in between is read, and its entry read
    # again next time (never the other way round: data older than the counters say).
    counters = _counters(version.id)
    everywhere, this_version, _ = _generation_of(counters)
    clip = version.clip_rewards
    tasks = [
        board_shape.TaskInfo(id=t.id, name=t.name, category=t.category, budget_sec=t.budget_sec, final_only=t.final_only)
        for t in Task.objects.filter(version=version).order_by("category", "name")
    ]
    task_by_id = {t.id: t for t in tasks}
    base = (
        counters.get(GLOBAL, (0, 0)), counters.get(version_scope(version.id), (0, 0)), tuple(tasks), clip,
        version.scoring, N_RESAMPLES,
    )
    if kept is not None and kept.base != base:
        kept = None
    chosen = Rollout.objects.filter(task__version=version)
    # Human baselines are the agents' reference: the agent filters (harness, open weights) keep them.
    humans = Q(model__kind="human")
    if harness is not None:
        chosen = chosen.filter(Q(harness_id=harness) | humans)
    if open_weight is not None:
        chosen = chosen.filter(Q(model__open_weight=open_weight) | humans)

    prefix = f"{version_scope(version.id)}:"
    # Every entry counter read (of entries on this board or not): an entry outside the filters whose
    # counter moved is read once, not at every update.
    seen = {scope[len(prefix):]: n for scope, n in counters.items() if scope.startswith(prefix)}
    if kept is None:
        pairs = sorted(set(chosen.order_by().values_list("model_id", "harness_id").distinct()))
        keys = [entry_key(m, h) for m, h in pairs]
        counted, dirty, rows = Counted(), set(keys), chosen
    else:
        # The entries are the kept ones and those whose counter moved (a new entry's first rollout moves
        # it); a moved entry with no rollout left here (deleted, or outside the filters) is gone.
        counted = kept.counted
        dirty = {key for key, n in seen.items() if kept.seen.get(key) != n}
        counted.forget(dirty)
        for key in dirty:
            for scope in [None, *{t.category for t in tasks}]:
                kept.own.pop((key, scope), None)
        wanted = Q(pk__in=[])
        for key in dirty:
            m, h = entry_pair(key)
            wanted |= Q(model_id=m, harness_id=h)
        rows = chosen.filter(wanted)
    read = list(rows.order_by("index", "id").values(*ROLLOUT_FIELDS))
    _count(read, task_by_id, clip, version.scoring, counted)
    if kept is not None:
        # A gone entry is a moved one: forgotten above, and nothing of it was read.
        present = (set(kept.keys) - dirty) | {entry_key(r["model_id"], r["harness_id"]) for r in read}
        pairs = sorted(entry_pair(key) for key in present)
        keys = [entry_key(m, h) for m, h in pairs]

    models = {m.id: m for m in AgentModel.objects.filter(id__in={m for m, _ in pairs})}
    harnesses = {h.id: h for h in Harness.objects.filter(id__in={h for _, h in pairs})}
    staff_settings = {(e.model_id, e.harness_id): e for e in Entry.objects.filter(version=version)}
    # An entry with nothing counted is listed, but compared with no one.
    has_counted = {key for key, _ in counted.scores}
    comparison = {
        key for key, (m, h) in zip(keys, pairs) if _competes(models[m], staff_settings.get((m, h))) and key in has_counted
    }
    table = agg.ScoreTable(
        entries=keys, tasks=[t.id for t in tasks], scores=counted.scores,
        categories={t.id: t.category for t in tasks},
    )
    if kept is None:
        boot = agg.build_bootstrap(table, comparison, N_RESAMPLES)
        own: dict[tuple[str, str | None], EntryOwn] = {}
    else:
        boot, own = kept.boot, kept.own
        for key in set(kept.keys) - set(keys):
            boot.drop_entry(key)
        changed = [k for k in keys if k in dirty or k not in boot or (k in boot.members) != (k in comparison)]
        for key, values, counts in agg.entry_scores(table, changed):
            boot.set_entry(key, values, counts, member=key in comparison)
    arrays = table.arrays()
    scopes = agg.all_figures(table, comparison, N_RESAMPLES, boot=boot, arrays=arrays)
    extras = {
        scope: _scope_extras(table, counted, scopes[scope], comparison, scope, own, arrays)
        for scope in scopes if scopes[scope]
    }
    entries = []
    for key, (m, h) in zip(keys, pairs):
        model, setting = models[m], staff_settings.get((m, h))
        entries.append(
            board_shape.BoardEntry(
                key=key,
                model_id=model.id,
                model=model.name,
                model_label=model.label,
                open_weight=model.open_weight,
                scripted=model.is_scripted,
                human=model.is_human,
                harness_id=h,
                harness=str(harnesses[h]),
                ablation=bool(setting and setting.ablation),
                in_comparison=setting.in_comparison if setting else True,
                comparison=key in comparison,
                note=setting.note if setting else "",
                overall=scopes[None][key] if tasks else None,
                categories={c: scopes[c][key] for c in table.category_names()},
                scopes={scope or "": extras[scope][key] for scope in extras},
                excluded=dict(counted.excluded[key]),
            )
        )

    entries.sort(key=lambda e: (e.overall is None, -(e.overall.avg if e.overall else 0), e.model, e.harness))
    published = kept.published if kept is not None else _published(version, tasks, harness, open_weight)
    entry_cells = {
        key: kept.cells[key] if kept is not None and key not in dirty and key in kept.cells else _entry_cells(tasks, key, counted)
        for key in keys
    }
    data = board_shape.Board(
        version=board_shape.VersionInfo(
            id=version.id, name=version.name, benchmark=version.benchmark, label=str(version), clip_rewards=clip
        ),
        filters=board_shape.BoardFilters(harness=harness, open_weight=open_weight),
        # The biggest category first, as AutoLab's tables put them.
        categories=sorted(table.category_names(), key=lambda c: (-len(table.tasks_in(c)), c)),
        tasks=tasks,
        entries=entries,
        n_comparison=len(comparison),
        cells=_cells(tasks, keys, entry_cells),
        budget_grid=BUDGET_GRID.tolist(),
        published=published,
        n_resamples=N_RESAMPLES,
        scoring=version.scoring,
        human_hourly_rate_usd=version.human_hourly_rate_usd,
        time_curves=_time_curves(version, entries, table, counted) if version.scoring == BEST_OF_SCORE_LOG else None,
        generation=generation_label(everywhere, this_version),
        computed_at=time.time(),
        n_rollouts=sum(counted.n_read[key] for key in keys),
    )
    return data, Kept(
        base=base, keys=keys, seen=seen, counted=counted, boot=boot, own=own, cells=entry_cells, published=published,
        n_read=len(read),
    )


# The boards this process computed last, kept to be updated (`Kept`), by (version, harness, open_weight).
# A board is taken out while it is updated, so two threads never update one.
KEPT_BOARDS = 4
_kept: OrderedDict[tuple, Kept] = OrderedDict()


def updated_board(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board:
    """`compute_board(...)`, computed from this process's last board of the same filters where it can:
    only the entries whose rollouts changed since are read and recomputed."""
    return _updated(version, harness, open_weight)[0]


def _updated(version: BenchmarkVersion, harness: int | None, open_weight: bool | None) -> tuple[board_shape.Board, Kept]:
    which = (version.pk, harness, open_weight)
    with _recent_lock:
        kept = _kept.pop(which, None)
    data, kept = _compute(version, harness, open_weight, kept)
    with _recent_lock:
        _kept[which] = kept
        while len(_kept) > KEPT_BOARDS:
            _kept.popitem(last=False)
    return data, kept


def _time_curves(
    version: BenchmarkVersion, entries: list[board_shape.BoardEntry], table: agg.ScoreTable, counted: Counted
) -> dict[str, board_shape.TimeCurveScope]:
    """RE-Bench's three curves (evaluations.figures.time_curves) for every entry, over all tasks and per category."""
    scopes: list[str | None] = [None, *table.category_names()]
    result: dict[str, board_shape.TimeCurveScope] = {}
    for scope in scopes:
        tasks = table.tasks_in(scope)
        wanted = set(tasks)
        runs = {e.key: {t: r for t, r in counted.runs[e.key].items() if t in wanted} for e in entries}
        budgets = tc.budget_grid(list(runs.values()))
        elapsed = tc.elapsed_grid(list(runs.values()))
        per_entry = {}
        for entry in entries:
            mine = runs[entry.key]
            curve = tc.budget_curve(mine, tasks, budgets)
            usage = counted.usage[(entry.key, scope)]
            if entry.human:
                rate = version.human_hourly_rate_usd
            else:
                rate = usage.cost_usd / usage.agent_hours if usage.n_cost_known and usage.agent_seconds > 0 else None
            end = tc.data_end(mine)
            per_entry[entry.key] = board_shape.EntryTimeCurves(
                data_end=end,
                # Every run complete: score@1 here is the entry's Avg@k (the curves end at the table's figure).
                score_at_data_end=tc.score_at_budget(mine, tasks, 1, end) if end else None,
                budget=[board_shape.BudgetPoint(**a.as_dict()) for a in curve],
                elapsed=tc.elapsed_curve(mine, tasks, elapsed),
                dollars_per_hour=rate,
                cost=[board_shape.CostPoint(**point) for point in tc.cost_points(curve, rate)],
                n_runs=sum(len(r) for r in mine.values()),
            )
        result[scope or ""] = board_shape.TimeCurveScope(
            budgets=[float(b) for b in budgets], elapsed=elapsed, entries=per_entry
        )
    return result


def board_key(version_id: int, harness: int | None = None, open_weight: bool | None = None) -> str:
    """The cache key of a board under the current generation and the board's shape (board.SHAPE)."""
    return _board_key(version_id, harness, open_weight, generation(version_id))


def _board_key(version_id: int, harness: int | None, open_weight: bool | None, at: tuple[int, int, int]) -> str:
    everywhere, this_version, here = at
    generation_at = generation_label(everywhere, this_version)
    return f"evaluations:board:{board_shape.SHAPE}:{version_id}:{harness}:{open_weight}:{generation_at}.{here}"


def generation_label(everywhere: int, this_version: int) -> str:
    """The database's generation a board was computed at, as the board records it (Board.generation)."""
    return f"{everywhere}.{this_version}"


# The boards this process read last, by cache key, as objects: the cache
# (LocMemCache too) pickles, and unpickling a 100-entry board took most of
# a warm page's time. A key carries the generation, so an entry here is
# never stale; boards are frozen, so requests can share one.
RECENT_BOARDS = 8
_recent: OrderedDict[str, tuple[board_shape.Board, float]] = OrderedDict()
_recent_lock = threading.Lock()


# A board of this many rollouts is hundreds of thousands of objects, which every full collection of the
# cyclic garbage collector scanned: 130-140 ms pauses, the p95 of the 100-entry model and rollout pages.
FREEZE_MIN_ROLLOUTS = 2000


def _remember(key: str, data: board_shape.Board, timeout: float = BOARD_TIMEOUT) -> None:
    with _recent_lock:
        _recent[key] = (data, time.monotonic() + timeout)
        _recent.move_to_end(key)
        while len(_recent) > RECENT_BOARDS:
            _recent.popitem(last=False)
    _freeze(data)


_frozen: tuple | None = None  # the identity of the last board frozen


def _freeze(data: board_shape.Board) -> None:
    """Put a large board out of the cyclic collector's reach, once per board.

    Boards (and the kept state) hold no reference cycles: reference counting
    frees them when they go, and the collector need not scan them again and
    again meanwhile. gc.freeze() takes every object alive, so the young
    generations (a request's cyclic garbage) are collected first, and a board
    recalled again (a stale one, every STALE_RECALL_SEC) is not frozen again.
    """
    global _frozen
    if data.n_rollouts < FREEZE_MIN_ROLLOUTS or data.identity == _frozen:
        return
    _frozen = data.identity
    gc.collect(1)
    gc.freeze()


def _recalled(key: str) -> board_shape.Board | None:
    with _recent_lock:
        found = _recent.get(key)
    if found is None or found[1] < time.monotonic():
        return None
    return found[0]


def forget_recent_boards() -> None:
    """Empty this process's recent boards (tests do, with the cache, between tests: a rolled-back
    database may reuse a version's id and generation)."""
    with _recent_lock:
        _recent.clear()
        _kept.clear()


@dataclass(frozen=True)
class Freshness:
    """How current a served board is: pages say so when it is the last one while a newer one is computed."""

    computed_at: float  # epoch seconds
    stale: bool  # rollouts or settings changed since it was computed
    rebuilding: bool  # a worker is computing the new one

    @property
    def computed(self) -> datetime:
        return datetime.fromtimestamp(self.computed_at, tz=dt_timezone.utc)

    @property
    def age(self) -> str:
        """"less than a minute", "3 minutes", "1 hour, 2 minutes" (Django's timesince said "0 minutes")."""
        if time.time() - self.computed_at < 60:
            return "less than a minute"
        return timesince(self.computed)


REBUILD_MARK_SEC = 600  # a rebuild that has not ended by then (its worker died) is asked for again
STALE_RECALL_SEC = 2.0  # a process re-reads the last board this often while serving it stale


def latest_key(version_id: int, harness: int | None, open_weight: bool | None) -> str:
    """Where the newest board of a version and filters is named, whatever its generation: (its identity, its key)."""
    return f"evaluations:board-last:{board_shape.SHAPE}:{version_id}:{harness}:{open_weight}"


def rebuilding_key(version_id: int, harness: int | None, open_weight: bool | None) -> str:
    return f"evaluations:board-rebuilding:{version_id}:{harness}:{open_weight}"


def _store(key: str, data: board_shape.Board, version_id: int, harness: int | None, open_weight: bool | None) -> None:
    """Keep a board for this process and, with a shared cache, there too and as the last one (which a page
    serves while the next is computed: served_board).

    A per-process cache (LocMemCache) holds nothing `_recent` does not: storing there only pickled the
    board (~20 ms at 100 entries) on every update. In a shared one the board is pickled once, under its
    key; the last one's entry names it (a copy there was a second pickling, a fifth of a worker's update).
    """
    _remember(key, data)
    if not shared_cache():
        return
    cache.set(key, data, BOARD_TIMEOUT)
    cache.set(latest_key(version_id, harness, open_weight), (data.identity, key), BOARD_TIMEOUT)


def board(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board:
    """`compute_board(...)`, from this process's last boards or the cache when nothing has changed."""
    return served_board(version, harness, open_weight)[0]


def served_board(
    version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None
) -> tuple[board_shape.Board, Freshness]:
    """The board and how current it is.

    The current one when cached; else, when the last board is large
    (AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS), the last one, stale, while
    `rebuild` runs on a worker; else computed here, updated from this
    process's last board where it can (`updated_board`).
    """
    everywhere, this_version, here = generation(version.pk)
    key = _board_key(version.pk, harness, open_weight, (everywhere, this_version, here))
    data = _recalled(key)
    if data is None:
        data = cache.get(key)
        if isinstance(data, board_shape.Board):  # not something a cache shared with older code holds
            _remember(key, data)
        else:
            data = None
    if data is not None:
        return data, Freshness(data.computed_at, stale=False, rebuilding=False)
    latest = latest_key(version.pk, harness, open_weight)
    last = _recalled(latest) or _last_board(latest)
    if last is not None and last.n_rollouts > settings.AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS and shared_cache():
        if last.generation == generation_label(everywhere, this_version) and last.computed_at > _changed_here_at:
            # A worker's board of this very generation, computed after this process's own last change.
            _remember(key, last)
            return last, Freshness(last.computed_at, stale=False, rebuilding=False)
        return last, Freshness(last.computed_at, stale=True, rebuilding=request_rebuild(version.pk, harness, open_weight))
    data = updated_board(version, harness, open_weight)
    _store(key, data, version.pk, harness, open_weight)
    return data, Freshness(data.computed_at, stale=False, rebuilding=False)


def _last_board(latest: str) -> board_shape.Board | None:
    """The board stored last under `latest`, recalled for STALE_RECALL_SEC.

    Its identity is read first (a few bytes): the board is usually one this
    process already holds (it served it as current until a new rollout moved
    the generation), and unpickling a 100-entry board again took ~25 ms.
    """
    named = cache.get(latest) if shared_cache() else None
    if not (isinstance(named, tuple) and len(named) == 2):  # nothing, or what a cache shared with older code holds
        return None
    identity, key = named
    last = _held(identity)
    if last is None:
        last = cache.get(key)
        if not isinstance(last, board_shape.Board):
            return None
    _remember(latest, last, STALE_RECALL_SEC)
    return last


def _held(identity: tuple | None) -> board_shape.Board | None:
    """The board of that identity among this process's recent ones."""
    if identity is None:
        return None
    with _recent_lock:
        return next((data for data, _ in _recent.values() if data.identity == identity), None)


def shared_cache() -> bool:
    """Whether every process reads the boards a worker writes: not with the embedded default's per-process
    cache (LocMemCache), where the web process computes every board itself."""
    from django.core.cache.backends.dummy import DummyCache
    from django.core.cache.backends.locmem import LocMemCache

    return not isinstance(caches["default"], (LocMemCache, DummyCache))


def request_rebuild(version_id: int, harness: int | None, open_weight: bool | None) -> bool:
    """Ask a worker (queue AUTOLAB_BOARD_QUEUE) for the current board, once while one is asked for.

    True when a rebuild is asked for or running; False when the broker could not be reached (the next
    request asks again).
    """
    mark = rebuilding_key(version_id, harness, open_weight)
    if not cache.add(mark, time.time(), REBUILD_MARK_SEC):
        return True
    from evaluations.running.dispatch import BROKER_DOWN, send_rebuild

    try:
        send_rebuild(version_id, harness, open_weight)
    except BROKER_DOWN:  # the page still serves the last board, and says so; the next request asks again
        logger.warning("could not ask for a rebuild of board %s", mark, exc_info=True)
        cache.delete(mark)
        return False
    return True


def rebuild(version_id: int, harness: int | None = None, open_weight: bool | None = None) -> str:
    """Bring one board up to date and store it where every process reads it (the task dispatch.REBUILD_TASK)."""
    mark = rebuilding_key(version_id, harness, open_weight)
    try:
        version = BenchmarkVersion.objects.filter(pk=version_id).first()
        if version is None:
            return f"version {version_id} is gone"
        key = board_key(version_id, harness, open_weight)
        start = time.monotonic()
        data, kept = _updated(version, harness, open_weight)
        _store(key, data, version_id, harness, open_weight)
        return f"board {version} ({harness}, {open_weight}): {kept.n_read} rollouts read in {time.monotonic() - start:.2f} s"
    finally:
        cache.delete(mark)


# --- what pages ask for -----------------------------------------------------


def release_key(name: str) -> tuple:
    """Orders version names as releases: "1.10" after "1.9", numbers before words."""
    parts = re.findall(r"\d+|[^\d.\-_ ]+", name.lower().lstrip("v"))
    return tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts)


def versions_with_results() -> list[BenchmarkVersion]:
    """Versions that have rollouts or published results: real releases, newest first, then demo content.

    Cached like boards, and asked with EXISTS: counting every version's
    rollouts (and joining its published results) after each new rollout cost
    more than the incremental board itself at 10,000 rollouts.
    """
    key = "evaluations:versions:{}.{}.{}".format(*generation())
    ids = cache.get(key)
    if ids is None:
        versions = BenchmarkVersion.objects.filter(
            Exists(Rollout.objects.filter(task__version=OuterRef("pk")))
            | Exists(PublishedResult.objects.filter(version=OuterRef("pk")))
            | Exists(PublishedFigure.objects.filter(version=OuterRef("pk")))
        )
        ordered = sorted(versions, key=lambda v: (release_key(v.name), v.created_at), reverse=True)
        ids = [v.id for v in sorted(ordered, key=lambda v: v.demo)]
        cache.set(key, ids, BOARD_TIMEOUT)
    found = BenchmarkVersion.objects.in_bulk(ids)
    return [found[i] for i in ids if i in found]


def default_version() -> BenchmarkVersion | None:
    """The newest real release with results; demo content only when there is nothing else."""
    versions = versions_with_results()
    if versions:
        return versions[0]
    return BenchmarkVersion.objects.first()


def task_results(task: Task) -> list[board_shape.TaskResult]:
    """Every entry on one task: Avg/Best, the scores and the best rollout."""
    data = board(task.version)
    results = []
    for entry in data.entries:
        cell = data.cell(task.id, entry.key)
        if cell is None:
            continue
        results.append(
            board_shape.TaskResult(
                entry=entry,
                cell=cell,
                best_url=rollout_url(cell.best_rollout_id) if cell.best_rollout_id else None,
                rollouts_url=rollouts_url(task.id, entry.model_id, entry.harness_id),
            )
        )
    results.sort(key=lambda r: -(r.cell.avg if r.cell.avg is not None else -1))
    return results


def model_board(model: AgentModel) -> list[board_shape.EntryOnBoard]:
    """The model's entries on every version it ran, each with its version's board."""
    version_ids = Rollout.objects.filter(model=model).order_by().values_list("task__version", flat=True).distinct()
    found = []
    for version in BenchmarkVersion.objects.filter(id__in=set(version_ids)):
        data = board(version)
        found.extend(board_shape.EntryOnBoard(entry=entry, board=data) for entry in data.entries if entry.model_id == model.id)
    return found


# --- reading and sorting rows (shared by pages, API and CSV) -----------------


SORT_KEYS = ("rank", "model", "harness", "avg", "best", "dom", "tasks", "rollouts", "cost", "tokens", "hours", "calls")
# Columns where bigger is better sort descending by default.
DESCENDING_FIRST = {"avg", "best", "dom", "tasks", "rollouts"}


def sort_value(entry: board_shape.BoardEntry, key: str, category: str | None) -> Any:
    """The value a column sorts by; None sorts last in either direction.

    "cat:<category>[:best|:dom]" sorts by a category's figure; Avg@k without a suffix.
    """
    figures = entry.figures(category)
    usage = entry.scope(category).usage
    if key.startswith("cat:"):
        _, name, measure = (key.split(":") + ["avg"])[:3]
        figures = entry.categories.get(name)
        key = measure if measure in board_shape.MEASURE_FIELDS else "avg"
    if key in board_shape.MEASURE_FIELDS:
        return board_shape.measure_value(figures, key) if figures else None
    return {
        "rank": figures.rank if figures else None,
        "model": entry.model_label.lower(),
        "harness": entry.harness.lower(),
        "tasks": figures.n_tasks if figures else None,
        "rollouts": figures.n_rollouts if figures else None,
        "cost": usage.cost_usd,
        "tokens": None if usage.input_tokens is None else usage.input_tokens + usage.output_tokens,
        "hours": usage.agent_hours,
        "calls": usage.benchmark_calls_per_hour,
    }.get(key)


def parse_sort(value: str | None, categories: list[str]) -> tuple[str, bool]:
    """'-avg' -> ('avg', descending). Unknown keys fall back to Avg@k, best first."""
    value = (value or "").strip()
    descending = value.startswith("-")
    key = value.lstrip("-")
    if key in SORT_KEYS:
        return key, descending
    parts = key.split(":")
    if parts[0] == "cat" and len(parts) in (2, 3) and parts[1] in categories and parts[2:] in ([], ["best"], ["dom"]):
        return key, descending
    return "avg", True


def sort_entries(rows: list[board_shape.BoardEntry], key: str, descending: bool, category: str | None) -> list[board_shape.BoardEntry]:
    """Rows sorted by one column; ties by Avg@k (best first), missing values last."""

    def avg(entry: board_shape.BoardEntry) -> float:
        figures = entry.figures(category)
        return (figures.avg if figures else None) or 0.0

    present = [e for e in rows if sort_value(e, key, category) is not None]
    missing = [e for e in rows if sort_value(e, key, category) is None]
    present.sort(key=lambda e: (-avg(e), e.model, e.harness))
    missing.sort(key=lambda e: (-avg(e), e.model, e.harness))
    # Python's sort is stable in both directions, so the tie order survives.
    present.sort(key=lambda e: sort_value(e, key, category), reverse=descending)
    return present + missing
