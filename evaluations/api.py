"""Read-only JSON API (v1) and CSV export of the leaderboard tables.

The figures are the pages' own (`evaluations.boards.serving.board`), flattened
into rows; `?format=csv` (or the `.csv` URLs) gives the same rows as CSV.
"""
from __future__ import annotations

import csv
import functools
import json
from collections.abc import Sequence

from autolab_site.filters import refused
from autolab_site.spreadsheet import cell

from django.core.paginator import EmptyPage, Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from tasks.scoring import clipped
from trajectories import services as trajectories, statuses
from trajectories.forms import RolloutFilters
from trajectories.models import Rollout

from evaluations.boards import counting, serving, sorting
from evaluations.boards import pairs as board_pairs
from evaluations.figures import aggregation as agg
from evaluations.figures import paired
from evaluations.boards.board import Board, PublishedEntry, measure_value, to_json
from evaluations.figures.ranking import INTERVAL_PERCENT, INTERVAL_PERCENTILES
from evaluations.forms import BoardFilters, CompareForm
from evaluations.links import rollout_url, rollouts_url

API_VERSION = "v1"
MAX_PAGE_SIZE = 500
DEFINITIONS = {
    "avg": "Avg@k: mean of a task's counted rollouts, then over all tasks of the version or category; a task without a counted rollout counts 0.",
    "best": "Best@k: the per-task maximum, then the mean over all tasks (missing tasks 0).",
    "dominance": "Mean over tasks of the share of other comparison-set entries whose per-task Avg@k this entry beats (ties 1/2). None for ablations and entries outside the comparison set. The comparison set is the entries the filters (harness, open_weight) choose.",
    "ci": f"{INTERVAL_PERCENT}% percentile bootstrap, clustered: tasks redrawn within each category, then rollouts within each drawn task (the same task draws for every entry); seeded.",
    "rank": f"1 + the number of comparison-set entries whose Avg@k {INTERVAL_PERCENT}% interval lies wholly above this entry's (LMArena's rule): an entry whose interval lies wholly above another's always ranks better; overlapping intervals may share a rank. Entries with no counted rollout in the scope are unranked (null).",
    "rank_range": f"The {INTERVAL_PERCENTILES[0]:g}-{INTERVAL_PERCENTILES[1]:g}% range of the entry's rank by Avg@k over the paired bootstrap replicates (the same tasks drawn for every entry).",
    "counted": "Finished and failed rollouts count (an agent failure scores 0); superseded, unfinished, cancelled and infrastructure-error rollouts do not (reported under 'excluded').",
}


def csv_response(rows: list[dict], filename: str, columns: Sequence[str] = ()) -> HttpResponse:
    """`rows` as CSV: `columns` first (named even when no row comes), then any other key in order of appearance."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    columns = list(columns)
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    writer = csv.DictWriter(response, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else cell(v) for k, v in row.items()})
    return response


def wants_csv(request: HttpRequest, csv_url: bool) -> bool:
    return csv_url or request.GET.get("format", "").lower() == "csv"


def no_version(message: str = "no benchmark version has results yet") -> JsonResponse:
    return JsonResponse({"error": message}, status=404)


def api_filters(request: HttpRequest) -> dict | JsonResponse:
    """The pages' filters (forms.BoardFilters); for bad ones a JSON 400, for an unknown version a JSON 404."""
    form = BoardFilters(request.GET)
    if form.missing_version():
        return no_version(form.missing_version())
    if not form.is_valid():
        return refused(form)
    return form.cleaned_data if form.cleaned_data["version"] is not None else no_version()


def _ends(pair: tuple | None) -> tuple:
    """An interval's (low, high), or (None, None) where there is none."""
    return tuple(pair) if pair else (None, None)


def leaderboard_rows(data: Board, filters: dict) -> list[dict]:
    """One flat row per entry: overall figures (or the category's), per-category Avg, usage."""
    category = data.shown_category(filters["category"])
    rows = []
    entries = sorting.sort_entries(data.entries, "avg", True, category)
    for entry in entries:
        figures = entry.figures(category)
        scope = entry.scope(category)
        usage, medals = scope.usage, scope.medals
        rank_range = _ends(figures.rank_range if figures else None)
        avg_ci = _ends(figures.avg_ci if figures else None)
        dominance_ci = _ends(figures.dominance_ci if figures else None)
        row = {
            "version": data.version.name,
            "scope": category or "all",
            "model": entry.model,
            "harness": entry.harness,
            "open_weight": entry.open_weight,
            "ablation": entry.ablation,
            "in_comparison": entry.comparison,
            "kind": "human" if entry.human else "agent",
            "rank": figures.rank if figures else None,
            "rank_range_low": rank_range[0],
            "rank_range_high": rank_range[1],
            "avg": figures.avg if figures else None,
            "avg_ci_low": avg_ci[0],
            "avg_ci_high": avg_ci[1],
            "best": figures.best if figures else None,
            "dominance": figures.dominance if figures else None,
            "dominance_ci_low": dominance_ci[0],
            "dominance_ci_high": dominance_ci[1],
            "tasks_with_rollouts": figures.n_tasks if figures else None,
            "tasks_total": figures.n_tasks_total if figures else None,
            "rollouts_counted": figures.n_rollouts if figures else None,
            "rollouts_infra_error": entry.excluded.get(statuses.Disposition.INFRA, 0),
        }
        for name in data.categories:
            mine = entry.categories.get(name)
            row[f"avg_{name}"] = mine.avg if mine else None
        row.update(
            {
                "gold": medals.gold if medals else None,
                "silver": medals.silver if medals else None,
                "bronze": medals.bronze if medals else None,
                "cost_usd": usage.cost_usd,
                "cost_known_rollouts": usage.cost_known_rollouts,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "agent_hours": usage.agent_hours,
                "benchmark_calls_per_hour": usage.benchmark_calls_per_hour,
            }
        )
        rows.append(row)
    return rows


def published_figure(published: PublishedEntry, scope: str | None, measure: str) -> float | None:
    """The paper's printed figure where it gave one, else the one its per-task scores give (as the page shows)."""
    printed = published.printed(scope, measure)
    if printed is not None:
        return printed
    figures = published.figures(scope)
    return measure_value(figures, measure) if figures else None


def published_rows(data: Board, filters: dict) -> list[dict]:
    """The published entries as the leaderboard's rows (`published_figure`), with the source; never ranked."""
    category = data.shown_category(filters["category"])
    rows = []
    for published in data.published:
        row = {
            "version": data.version.name, "scope": category or "all", "model": published.model,
            "harness": published.harness, "open_weight": published.open_weight, "ablation": published.ablation,
            "in_comparison": False, "kind": "human" if published.human else "agent",
            "origin": "published", "source": "; ".join(published.sources),
            "avg": published_figure(published, category, "avg"), "best": published_figure(published, category, "best"),
            "dominance": published_figure(published, category, "dom"),
            "tasks_with_rollouts": published.n_tasks, "tasks_total": published.n_tasks_total,
            "rollouts_counted": published.n_scores,
        }
        for name in data.categories:
            row[f"avg_{name}"] = published_figure(published, name, "avg")
        rows.append(row)
    return rows


BUILDING_RETRY_SEC = 5


def building_response(version, freshness: serving.Freshness) -> JsonResponse:
    """The API's answer while the first board of a version and filters is built (boards.serving): 202
    Accepted, Retry-After, and a status a client can test ("building"; "unavailable" when the build could
    not be asked for: 503)."""
    status = "building" if freshness.rebuilding else "unavailable"
    detail = (
        "the board is being built: ask again in a few seconds" if freshness.rebuilding
        else "the board has not been built yet and its build could not be asked for: ask again later"
    )  # fmt: skip
    response = JsonResponse(
        {"api_version": API_VERSION, "status": status, "version": version.name, "detail": detail},
        status=202 if freshness.rebuilding else 503,
    )
    response["Retry-After"] = str(BUILDING_RETRY_SEC)
    response["X-Board-Status"] = status
    return response


def board_view(build):
    """An API view of the served board (serving.served_board) for the request's filters, its age in the headers.

    `build(request, filters, data, csv_url)` makes the response; a bad
    filter's JSON error is answered before. X-Board-Computed-At (ISO 8601)
    and X-Board-Stale (1 while the last board is served and a newer one is
    computed) go on every response of the board; the JSON stays as it is.
    Before the first board of the version and filters is built: 202, with
    Retry-After and {"status": "building"} (`building_response`).
    """

    @functools.wraps(build)
    def view(request: HttpRequest, csv_url: bool = False) -> HttpResponse:
        filters = api_filters(request)
        if isinstance(filters, JsonResponse):
            return filters
        data, freshness = serving.served_board(filters["version"], filters["harness"], filters["open_weight"])
        if data is None:
            return building_response(filters["version"], freshness)
        response = build(request, filters, data, csv_url)
        response["X-Board-Computed-At"] = freshness.computed.isoformat()
        response["X-Board-Stale"] = "1" if freshness.stale else "0"
        response["X-Board-Status"] = "stale" if freshness.stale else "current"
        return response

    return view


@board_view
def leaderboard(request: HttpRequest, filters: dict, data: Board, csv_url: bool) -> HttpResponse:
    rows = leaderboard_rows(data, filters)
    if wants_csv(request, csv_url):
        # The page's two tables in one file: measured entries, then the published ones with their source.
        measured = [{**row, "origin": "measured", "source": ""} for row in rows]
        return csv_response(measured + published_rows(data, filters), f"leaderboard-{data.version.name}.csv")
    category = data.shown_category(filters["category"])
    return JsonResponse(
        {
            "api_version": API_VERSION,
            "version": to_json(data.version),
            "scope": category or "all",
            "categories": data.categories,
            "definitions": DEFINITIONS,
            "entries": rows,
            "scoring": data.scoring,
            # Each published entry as the board has it, less the board's own keys and ids.
            "published": [
                {k: v for k, v in to_json(p).items() if k not in ("key", "model_id", "harness_id")} for p in data.published
            ],
            "curves": {
                "budget_fraction": data.budget_grid,
                "entries": [
                    {
                        "model": e.model,
                        "harness": e.harness,
                        "score_vs_budget": e.scope(category).budget_curve,
                        "score_at_k": e.scope(category).score_at_k,
                    }
                    for e in data.entries
                ],
            },
        }
    )


TIME_CURVE_DEFINITIONS = {
    "run_score": "A run's score is the best of its score log (every intermediate normalised score) and its final score; on a final-only task its final score alone.",
    "score_at_budget": "For a total time budget B split into k runs of L = B / k: per task, the expected best of k runs drawn without replacement from the task's runs, each cut at L (what it had scored by then), exact over subsets; then the mean over all tasks of the scope (a task without runs counts 0). best_k is the allocation that scores most.",
    "data_end": "The entry's longest run in hours: budgets whose runs would be longer are not extrapolated (null).",
    "elapsed": "The mean over runs (per task, then over tasks) of the best score so far at each elapsed time.",
    "cost": "The best-allocation curve at its cost: budget hours x the entry's dollars per hour (agents: their recorded cost over their hours; humans: the version's staff-set hourly rate).",
}


TIME_CURVE_COLUMNS = ("version", "scope", "model", "harness", "kind", "curve", "hours", "k", "score", "by_k", "cost_usd")


def time_curve_rows(data: Board, scope: str | None) -> list[dict]:
    """One row per entry x curve x point of the version's RE-Bench curves."""
    curves = data.curves(scope)
    rows = []
    for entry in data.entries:
        mine = curves.entries.get(entry.key) if curves else None
        if mine is None:
            continue
        base = {"version": data.version.name, "scope": scope or "all", "model": entry.model,
                "harness": entry.harness, "kind": "human" if entry.human else "agent"}
        for point in mine.budget:
            rows.append({**base, "curve": "score_at_budget", "hours": point.budget / 3600, "k": point.best_k,
                         "score": point.best, "by_k": json.dumps(point.by_k), "cost_usd": None})
        for t, value in zip(curves.elapsed, mine.elapsed):
            rows.append({**base, "curve": "elapsed", "hours": t / 3600, "k": 1, "score": value, "by_k": "", "cost_usd": None})
        for point in mine.cost:
            rows.append({**base, "curve": "cost", "hours": point.budget / 3600, "k": point.k, "score": point.score,
                         "by_k": "", "cost_usd": point.cost})
    return rows


@board_view
def time_curves(request: HttpRequest, filters: dict, data: Board, csv_url: bool) -> HttpResponse:
    """RE-Bench's three curves of a version scored by the best of the score log, as JSON or CSV."""
    if not data.time_curves:
        return JsonResponse(
            {"error": f"{data.version.label} is scored by the verifier's reward: it has no score-log curves"}, status=404
        )
    scope = data.shown_category(filters["category"])
    if wants_csv(request, csv_url):
        return csv_response(time_curve_rows(data, scope), f"time-curves-{data.version.name}.csv", TIME_CURVE_COLUMNS)
    curves = data.curves(scope)
    entries = []
    for entry in data.entries:
        mine = curves.entries.get(entry.key)
        if mine is None:
            continue
        entries.append({
            "model": entry.model, "harness": entry.harness, "kind": "human" if entry.human else "agent",
            "in_comparison": entry.comparison, "n_runs": mine.n_runs, "data_end_hours": mine.data_end / 3600,
            "dollars_per_hour": mine.dollars_per_hour, "score_at_data_end": mine.score_at_data_end,
            "score_at_budget": [{"hours": p.budget / 3600, "best_k": p.best_k, "score": p.best, "by_k": p.by_k}
                                for p in mine.budget],
            "elapsed": [{"hours": t / 3600, "score": v} for t, v in zip(curves.elapsed, mine.elapsed)],
            "cost": [{"cost_usd": p.cost, "score": p.score, "hours": p.budget / 3600, "k": p.k} for p in mine.cost],
        })
    return JsonResponse({
        "api_version": API_VERSION, "version": to_json(data.version), "scope": scope or "all", "scoring": data.scoring,
        "human_hourly_rate_usd": data.human_hourly_rate_usd, "definitions": TIME_CURVE_DEFINITIONS, "entries": entries,
    })


HEATMAP_COLUMNS = ("version", "task", "category", "model", "harness", "avg", "best", "n_rollouts", "scores", "n_infra_error",
                   "rollouts_url", "origin", "source")


def heatmap_rows(data: Board, filters: dict) -> list[dict]:
    """One row per (task, entry) with a rollout: long format, easy to pivot."""
    rows = []
    for task in data.tasks:
        if filters["category"] and task.category != filters["category"]:
            continue
        for entry in data.entries:
            cell = data.cell(task.id, entry.key)
            rows.append(
                {
                    "version": data.version.name,
                    "task": task.name,
                    "category": task.category,
                    "model": entry.model,
                    "harness": entry.harness,
                    "avg": cell.avg if cell else None,
                    "best": cell.best if cell else None,
                    "n_rollouts": len(cell.scores) if cell else 0,
                    "scores": " ".join(f"{s:g}" for s in cell.scores) if cell else "",
                    "n_infra_error": len(cell.infra_rollout_ids) if cell else 0,
                    "rollouts_url": rollouts_url(task.id, entry.model_id, entry.harness_id),
                }
            )
    return rows


def published_heatmap_rows(data: Board, filters: dict) -> list[dict]:
    """The published per-task scores as heatmap rows, with their source."""
    rows = []
    for task in data.tasks:
        if filters["category"] and task.category != filters["category"]:
            continue
        for published in data.published:
            cell = published.cells.get(task.id)
            if cell is None:
                continue
            rows.append({
                "version": data.version.name, "task": task.name, "category": task.category,
                "model": published.model, "harness": published.harness, "avg": cell.avg, "best": cell.best,
                "n_rollouts": len(cell.scores), "scores": " ".join(f"{s:g}" for s in cell.scores),
                "n_infra_error": 0, "rollouts_url": "", "origin": "published", "source": "; ".join(published.sources),
            })
    return rows


@board_view
def heatmap(request: HttpRequest, filters: dict, data: Board, csv_url: bool) -> HttpResponse:
    rows = [{**row, "origin": "measured", "source": ""} for row in heatmap_rows(data, filters)]
    rows += published_heatmap_rows(data, filters)
    if wants_csv(request, csv_url):
        return csv_response(rows, f"heatmap-{data.version.name}.csv", HEATMAP_COLUMNS)
    return JsonResponse({"api_version": API_VERSION, "version": to_json(data.version), "cells": rows})


def compare(request: HttpRequest, csv_url: bool = False) -> HttpResponse:
    """Two entries' paired difference of Avg@k (the compare page's figures): ?version=&a=&b= and the board's filters.

    CSV: one row per scope, the two entries named on each."""
    form = CompareForm(request.GET)
    if form.missing_version():
        return no_version(form.missing_version())
    if not form.is_valid():
        return refused(form)
    filters = form.cleaned_data
    if filters["version"] is None:
        return no_version()
    data, freshness = serving.served_board(filters["version"], filters["harness"], filters["open_weight"])
    if data is None:
        return building_response(filters["version"], freshness)
    known = board_pairs.comparables(data)
    chosen = form.entries(known, board_pairs.default_entries(data))
    if chosen is None and form.errors:
        return refused(form)
    a, b = chosen or (None, None)  # None: fewer than two entries with a counted score, nothing to compare
    if wants_csv(request, csv_url):
        rows = [
            {"version": data.version.name, "a": known[a].label, "b": known[b].label, **d.as_dict(), "scope": d.scope or "all"}
            for d in board_pairs.compare_two(data, a, b)
        ] if chosen else []
        return csv_response(rows, f"compare-{data.version.name}.csv", ("version", "a", "b", "scope"))
    response = JsonResponse({
        "api_version": API_VERSION,
        "version": to_json(data.version),
        "a": {"key": a, "label": known[a].label, "published": known[a].published} if a else None,
        "b": {"key": b, "label": known[b].label, "published": known[b].published} if b else None,
        "interval_percent": INTERVAL_PERCENT,
        "method": f"{paired.METHOD}: tasks redrawn within each category, then rollouts within each drawn task, the same task draws for both entries",
        "n_resamples": agg.DEFAULT_RESAMPLES,
        "seed": agg.DEFAULT_SEED,
        "definitions": COMPARE_DEFINITIONS,
        "differences": [d.as_dict() for d in board_pairs.compare_two(data, a, b)] if chosen else [],
    })
    response["X-Board-Computed-At"] = freshness.computed.isoformat()
    response["X-Board-Stale"] = "1" if freshness.stale else "0"
    return response


COMPARE_DEFINITIONS = {
    "avg_difference": "Avg@k of a minus Avg@k of b over the tasks both have a counted score on (n_tasks_both), each task weighing the same.",
    "ci": f"The {INTERVAL_PERCENT}% percentile interval of the difference over the paired clustered bootstrap's resamples.",
    "p_first_ahead": "The share of resamples in which a is ahead (ties count one half).",
    "p_value": "Two-sided bootstrap p-value of no difference; per category Holm-corrected over the categories compared (p_value_holm_over_categories).",
    "separated": f"All tasks: the interval excludes 0; a category: its Holm-corrected p-value is below {paired.ALPHA:g}. Never on fewer than {paired.MIN_TASKS} common tasks.",
    "rollouts_per_task_needed": "Rollouts per task each entry would need for the difference to be separated at the current variance (normal approximation: between-task variance / tasks + within-task variance / (tasks x rollouts)); null where more tasks, not rollouts, are needed, or there is no difference.",
}


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def with_latest_regrade(queryset):
    """The rollouts with their latest done regrade's time and verifier version (one subquery each, no query per row)."""
    from django.db.models import OuterRef, Subquery

    from trajectories.models import Grade

    latest = Grade.objects.filter(rollout=OuterRef("pk"), kind=Grade.Kind.REGRADE, state=Grade.State.DONE).order_by("-pk")
    return queryset.annotate(
        regraded_at=Subquery(latest.values("graded_at")[:1]),
        graded_verifier_version=Subquery(latest.values("verifier_version")[:1]),
    )


def rollout_row(r: Rollout) -> dict:
    """A rollout as its page shows it: results, failure analysis, verifier output, anchors, usage."""
    anchors = r.anchors or {}
    ruling = r.verdict
    return {
        "id": r.id,
        "trial_name": r.trial_name,
        "version": r.task.version.name,
        "task": r.task.name,
        "task_id": r.task_id,
        "category": r.task.category,
        "model": r.model.name,
        "model_id": r.model_id,
        "harness": str(r.harness),
        "harness_id": r.harness_id,
        "index": r.index,
        "status": r.status,
        "status_reason": r.status_reason,
        # "atif", "converted from <native format>", "none" (no trajectory: reward and result only), "" (not recorded).
        "trajectory": r.trajectory_format,
        "reward": r.reward,
        # The task's metric as the verifier measured it (reward.json; tasks.anchors.verifier_metric), null without one.
        "metric": trajectories.rollout_metric(r),
        # The counted score, under the version's convention: the reward (AutoLab) or the best of the score log
        # (RE-Bench); null for a rollout the figures leave out (an errored Inspect sample, an infrastructure error).
        "score": ruling.score,
        "score_log": list(r.score_log or []),
        # The version clipped the verifier's reward to [0, 1] for the figures ("score" is the clipped one).
        "clipped": clipped(r.reward, r.task.version.clip_rewards),
        "kind": r.model.kind,
        "counted": ruling.disposition,
        # Why it counts or not, in words (trajectories.verdict's reason, as the rollout page says it).
        "counted_reason": ruling.reason,
        "excluded": r.excluded,
        "superseded": r.superseded,
        "infra_error": r.infra_error,
        "outcome": r.outcome,
        "cause": trajectories.effective_cause(r),
        "cause_source": trajectories.cause_source(r),
        "automatic_cause": r.failure_cause,
        "secondary_causes": list(r.failure_secondary or []),
        "behaviour_flags": list(r.behaviour_flags or []),
        # What backs a flag: {"flag", "kind", "text", "step_id", "url"}; sealed_below_visible's benchmark call
        # ("the agent measured 0.62 at step 41; the sealed verifier gave 0.31") and the verifier's output.
        "flag_evidence": trajectories.flag_evidence(r),
        "exception_type": r.exception_type,
        "exception_message": r.exception_message,
        "verifier_fields": r.verifier_fields or {},
        # The latest regrade the reward comes from (evaluations.regrades.regrade): when, and the verifier's version; null: never regraded.
        "regraded_at": _iso(getattr(r, "regraded_at", None)),
        "verifier_version": getattr(r, "graded_verifier_version", None),
        "anchors_baseline": anchors.get("baseline"),
        "anchors_reference": anchors.get("reference"),
        "anchors_status": anchors.get("status", ""),
        "cost_usd": r.cost_usd,
        "input_tokens": r.n_input_tokens,
        "output_tokens": r.n_output_tokens,
        # Where they come from (harness: measured on the host; agent: only the agent's side knows, so the counted
        # fields above are null and `reported_usage` holds its claim; none: no model; trial: an imported folder's own).
        "usage_source": r.usage_source,
        "reported_usage": r.reported_usage or {},
        # harness, agent (written inside its sandbox: its own account, counted nowhere) or trial.
        "trajectory_source": r.trajectory_source,
        # The image it ran in (engine, image, image_id) and each base image the worker substituted
        # (requested, used: a stand-in is not the published environment); {} for an imported folder.
        "environment": r.environment or {},
        # What the trial ran with, as Harbor recorded it (lock.json, config.json): the task's digest, Harbor's version,
        # where the verifier ran (separate: sealed; shared: the agent's sandbox), and the agent, multipliers and overrides.
        "task_digest": r.task_digest,
        "harbor_version": r.harbor_version,
        "verifier_mode": r.verifier_mode,
        "run_settings": r.run_settings or {},
        "agent_seconds": r.agent_duration_sec,
        "n_steps": r.n_steps,
        "n_benchmark_calls": r.n_benchmark_calls,
        "best_score": r.best_score,
        "budget_used_fraction": r.budget_used_fraction,
        "url": rollout_url(r.id),
        # Readings against a rubric (Harbor's analysis.json, our judge's): summary, checks with outcome and steps.
        "reviews": trajectories.review_records(r),
    }


def csv_cells(row: dict) -> dict:
    """A rollout row for CSV: lists joined with "; ", objects as JSON."""
    flat = {}
    for key, value in row.items():
        if key in ("score_log", "reviews", "flag_evidence"):
            value = json.dumps(value)  # a list of objects: JSON, not joined
        elif isinstance(value, list):
            value = "; ".join(str(item) for item in value)
        elif isinstance(value, dict):
            value = json.dumps(value, sort_keys=True)
        flat[key] = value
    return flat


def rollouts(request: HttpRequest, csv_url: bool = False) -> HttpResponse:
    """Rollouts as the rollouts page selects them (trajectories.forms.RolloutFilters), by id unless ?sort= says."""
    form = RolloutFilters(request.GET)
    if not form.is_valid():
        return refused(form)
    queryset = with_latest_regrade(trajectories.with_reviews(form.rollouts(default_order=["pk"])))
    if wants_csv(request, csv_url):
        return csv_response([csv_cells(rollout_row(r)) for r in queryset], "rollouts.csv")
    try:
        size = min(MAX_PAGE_SIZE, max(1, int(request.GET.get("page_size", 100))))
        number = max(1, int(request.GET.get("page", 1)))
    except ValueError:
        return JsonResponse({"error": "page and page_size must be whole numbers"}, status=400)
    paginator = Paginator(queryset, size)
    try:
        page = paginator.page(number)
    except EmptyPage:
        return JsonResponse({"error": f"page {number} does not exist ({paginator.num_pages} pages)"}, status=404)
    params = request.GET.copy()

    def link(n: int) -> str:
        params["page"] = n
        return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")

    return JsonResponse(
        {
            "api_version": API_VERSION,
            "count": paginator.count,
            "page": number,
            "pages": paginator.num_pages,
            "next": link(number + 1) if page.has_next() else None,
            "previous": link(number - 1) if page.has_previous() else None,
            "results": [rollout_row(r) for r in page.object_list],
        }
    )


def docs(request: HttpRequest) -> HttpResponse:
    return render(request, "evaluations/api.html", {"nav": "leaderboard", "definitions": DEFINITIONS, "flags": trajectories.BEHAVIOUR_FLAGS})
