"""A board from counted rollouts: every figure of one version and filters, from nothing or updated entry by entry.

`compute_board(version)` reads a version's rollouts, counts them
(`counting`), and makes the `board.Board` every page reads: the figures
(`evaluations.figures.aggregation`), ranks, medals, usage, Pareto fronts,
cells, budget curves, RE-Bench's time curves and the published entries
(`published_entries`). It is the reference.

Updating: a process keeps what it computed last of each version and
filters (`Kept`); `updated_board` reads and recomputes only the entries
whose counter (`invalidation.entry_scope`) moved since, and equals
`compute_board` (evaluations/tests/test_incremental_board.py holds it so).
Caching and serving the result is `serving`'s.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.db.models import Q

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from tasks.scoring import BEST_OF_SCORE_LOG
from trajectories.models import Rollout

from evaluations.boards import board as board_shape
from evaluations.boards.board import entry_key, entry_pair
from evaluations.boards.counting import ROLLOUT_FIELDS, Counted, TableScores, _count, table_scores
from evaluations.boards.invalidation import GLOBAL, _counters, _generation_of, generation_label, version_scope
from evaluations.boards.published_entries import _published
from evaluations.figures import aggregation as agg
from evaluations.figures import bootstrap as bs
from evaluations.figures import time_curves as tc
from evaluations.models import Entry

# Fractions of the time budget, k/40 each as the correctly rounded division
# (linspace's 0.30000000000000004 is not 0.3): a score logged at 30% of the
# budget, itself t / budget, falls on the grid point and not beside it.
BUDGET_GRID = np.arange(41) / 40
N_RESAMPLES = agg.DEFAULT_RESAMPLES


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


def _entry_cells(
    tasks: list[board_shape.TaskInfo], key: str, counted: Counted, table: TableScores
) -> dict[int, board_shape.Cell]:
    """One entry's heatmap cells, by task id: tasks it has a counted or a flagged rollout on.

    An Inspect task's Avg and Best are its samples' (`counting.table_scores`), as on the board.
    """
    cells = {}
    for task in tasks:
        got = counted.scores.get((key, task.id), [])
        ids = counted.rollout_ids.get((key, task.id), [])
        infra = counted.flagged.get((key, task.id), [])
        if not got and not infra:
            continue
        best_at = int(np.argmax(got)) if got else None
        units, unit_bests = table.scores.get((key, task.id), got), table.bests.get((key, task.id))
        cells[task.id] = board_shape.Cell(
            avg=float(np.mean(units)) if got else None,
            best=(float(np.mean(unit_bests)) if unit_bests else max(got)) if got else None,
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


def task_infos(version: BenchmarkVersion) -> list[board_shape.TaskInfo]:
    """The version's tasks as a board lists them (by category, then name)."""
    return [
        board_shape.TaskInfo(id=t.id, name=t.name, category=t.category, budget_sec=t.budget_sec, final_only=t.final_only)
        for t in Task.objects.filter(version=version).order_by("category", "name")
    ]


def published_entries(version: BenchmarkVersion) -> list[board_shape.PublishedEntry]:
    """The board's published entries alone, as `compute_board` makes them (no rollout read): what an import of
    published results checks its figures against, in the staff's request, without building the board."""
    return _published(version, task_infos(version), None, None, n_resamples=N_RESAMPLES)


def _compute(
    version: BenchmarkVersion, harness: int | None, open_weight: bool | None, kept: Kept | None
) -> tuple[board_shape.Board, Kept]:
    """The board, from `kept` where its base still holds (only changed entries read again), and what to keep."""
    # The counters first, the data after: a change committed in between is read, and its entry read
    # again next time (never the other way round: data older than the counters say).
    counters = _counters(version.id)
    everywhere, this_version, _ = _generation_of(counters)
    clip = version.clip_rewards
    tasks = task_infos(version)
    task_by_id = {t.id: t for t in tasks}
    base = (
        counters.get(GLOBAL, (0, 0)), counters.get(version_scope(version.id), (0, 0)), tuple(tasks), clip,
        version.scoring, N_RESAMPLES,
    )
    if kept is not None and kept.base != base:
        kept = None
    # A submission's trials held back for staff review are on no board until published.
    chosen = Rollout.objects.filter(task__version=version, held_back=False)
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
    counted_cells = table_scores(counted)
    table = agg.ScoreTable(
        entries=keys, tasks=[t.id for t in tasks], scores=counted_cells.scores,
        categories={t.id: t.category for t in tasks}, bests=counted_cells.bests, n_rollouts=counted_cells.n_rollouts,
        epochs=counted_cells.epochs,
    )
    if kept is None:
        boot = agg.build_bootstrap(table, comparison, N_RESAMPLES)
        own: dict[tuple[str, str | None], EntryOwn] = {}
    else:
        boot, own = kept.boot, kept.own
        for key in set(kept.keys) - set(keys):
            boot.drop_entry(key)
        changed = [k for k in keys if k in dirty or k not in boot or (k in boot.members) != (k in comparison)]
        for key, values, counts, bests in agg.entry_scores(table, changed, with_bests=True):
            boot.set_entry(key, values, counts, member=key in comparison, bests=bests)
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
                submission_id=setting.submission_id if setting else None,
                submission_mark=setting.submission_mark if setting else "",
            )
        )

    entries.sort(key=lambda e: (e.overall is None, -(e.overall.avg if e.overall else 0), e.model, e.harness))
    published = kept.published if kept is not None else _published(version, tasks, harness, open_weight, n_resamples=N_RESAMPLES)
    entry_cells = {
        key: kept.cells[key] if kept is not None and key not in dirty and key in kept.cells else _entry_cells(tasks, key, counted, counted_cells)
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
_kept_lock = threading.Lock()


def updated_board(version: BenchmarkVersion, harness: int | None = None, open_weight: bool | None = None) -> board_shape.Board:
    """`compute_board(...)`, computed from this process's last board of the same filters where it can:
    only the entries whose rollouts changed since are read and recomputed."""
    return _updated(version, harness, open_weight)[0]


def _updated(version: BenchmarkVersion, harness: int | None, open_weight: bool | None) -> tuple[board_shape.Board, Kept]:
    which = (version.pk, harness, open_weight)
    with _kept_lock:
        kept = _kept.pop(which, None)
    data, kept = _compute(version, harness, open_weight, kept)
    with _kept_lock:
        _kept[which] = kept
        while len(_kept) > KEPT_BOARDS:
            _kept.popitem(last=False)
    return data, kept


def forget_kept() -> None:
    """Forget this process's kept boards (serving.forget_recent_boards does, with its recent boards)."""
    with _kept_lock:
        _kept.clear()


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

