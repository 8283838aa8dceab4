"""Leaderboard, per-task heatmap, model page and the published-results upload.

Views only read GET filters (`forms.BoardFilters`), ask
`evaluations.boards.serving` for the (cached) board and shape it for
templates; figures are computed in `evaluations.figures.aggregation`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from autolab_site.filters import refused
from autolab_site.staff import staff_required
from tasks.models import BenchmarkVersion
from trajectories.services import failed_rollouts
from trajectories.forms import FailureFilters
from trajectories.models import Rollout

from evaluations import api
from evaluations.boards import board_html
from evaluations.boards import pairs as board_pairs
from evaluations.boards import queries, serving, sorting
from evaluations.boards.board import Board, BoardEntry, Cell, PublishedEntry, measure_interval, measure_value
from evaluations.figures.paired import ALPHA, METHOD, MIN_TASKS
from evaluations.forms import BoardFilters, CompareForm, HeatmapFilters, LeaderboardFilters, from_origin
from evaluations.links import rollout_url, rollouts_url
from agents.models import AgentModel
from evaluations.models import PublishedFigure, PublishedResult
from evaluations.templatetags.board import SCORE_DECIMALS, category_label, heat, score, sortval


def board_filters(request: HttpRequest, form_class: type[BoardFilters] = BoardFilters) -> BoardFilters:
    """The boards' filters of this request (not yet validated); an unknown version is a 404, as a missing page."""
    form = form_class(request.GET)
    if form.missing_version():
        raise Http404(form.missing_version())
    return form


def filter_choices(data: Board) -> dict:
    harnesses = {e.harness_id: e.harness for e in data.entries}
    versions = queries.versions_with_results() or list(BenchmarkVersion.objects.all())
    if all(version.pk != data.version.id for version in versions):
        # Shown, so chosen: else the browser shows the first as chosen and Apply switches to it.
        versions = [*versions, BenchmarkVersion.objects.get(pk=data.version.id)]
    return {
        "versions": versions,
        "harnesses": sorted(harnesses.items(), key=lambda h: h[1]),
        "categories": data.categories,
    }


# ?part=board asks a board page for only the parts that a sort or a page of entries changes (the
# same template partials as the page, one source for the rows): static/js/board_swap.js swaps them in.
PART_PARAM = "part"
PART_BOARD = "board"


def wants_part(request: HttpRequest) -> bool:
    return request.GET.get(PART_PARAM) == PART_BOARD


def query_without(request: HttpRequest, *names: str) -> str:
    """The current query string minus some parameters (and never ?part=), for the page's links."""
    params = request.GET.copy()
    for name in (*names, PART_PARAM):
        params.pop(name, None)
    return params.urlencode()


def sort_headers(request: HttpRequest, current: str, columns: list[tuple[str, str]]) -> list[dict]:
    """Header links that sort by a column (?sort=); clicking again reverses."""
    base = query_without(request, "sort", "entries")  # a new order starts at its first page
    headers = []
    for key, label in columns:
        first = f"-{key}" if key in sorting.DESCENDING_FIRST or key.startswith("cat:") else key
        if current.lstrip("-") == key:
            target = key if current.startswith("-") else f"-{key}"
            state = "descending" if current.startswith("-") else "ascending"
        else:
            target, state = first, ""
        query = f"{base}&sort={target}" if base else f"sort={target}"
        headers.append({"key": key, "label": label, "href": f"?{query}", "state": state, "first": first})
    return headers


def chart_score(value: float | None) -> float | None:
    """A score as the charts carry it: to the decimals the tables show, which their hover shows too.

    A float's repr has up to 17 digits, and a page's charts draw every entry:
    at 100 entries their data was 144 KB of a 240 KB page. Rounded as the
    tables round (correctly, from the same float), a hover never shows a
    digit the table does not.
    """
    return None if value is None else round(value, SCORE_DECIMALS)


def chart_scores(values) -> list[float | None]:
    return [chart_score(value) for value in values]


# Significant digits of the hours and dollars the time charts carry.
MEASURE_DIGITS = 4


def chart_measure(value: float | None) -> float | None:
    """Hours or dollars as the time charts carry them: to MEASURE_DIGITS significant digits.

    Their axes are logarithmic and their hovers show three digits; a
    float's repr carried up to 17 (a budget of 5 minutes was
    0.08333333333333333 hours).
    """
    return None if value is None else float(f"{value:.{MEASURE_DIGITS}g}")


def chart_data(rows: list[BoardEntry], category: str | None, grid: list[float]) -> dict:
    """What the plotly charts draw, embedded with json_script: all of the scope shown, scores as chart_score."""
    bars, pareto, budget, at_k = [], [], [], []
    for entry in rows:
        figures = entry.figures(category)
        if not figures:
            continue
        scope = entry.scope(category)
        label = f"{entry.model_label} / {entry.harness}"
        avg = chart_score(figures.avg)
        bars.append({"label": label, "avg": avg, "avg_ci": chart_scores(figures.avg_ci), "best": chart_score(figures.best)})
        pareto.append(
            {
                "label": label,
                "score": avg,
                "cost": scope.usage.cost_per_rollout,
                "tokens": scope.usage.tokens_per_rollout,
                "frontier_cost": scope.pareto_cost,
                "frontier_tokens": scope.pareto_tokens,
            }
        )
        budget.append({"label": label, "y": chart_scores(scope.budget_curve)})
        at_k.append({"label": label, "y": chart_scores(scope.score_at_k)})
    return {"bars": bars, "pareto": pareto, "budget": {"x": chart_scores(grid), "series": budget}, "score_at_k": at_k}


def time_chart_data(data: Board, rows: list[BoardEntry], category: str | None) -> dict | None:
    """RE-Bench's three curves of the scope shown (versions scored by the best of the score log), in hours."""
    curves = data.curves(category)
    if not curves:
        return None
    series = []
    for entry in rows:
        mine = curves.entries.get(entry.key)
        if mine is None or not mine.n_runs:
            continue
        budget = [p for p in mine.budget if p.best is not None]
        series.append({
            "label": f"{entry.model_label} / {entry.harness}" if not entry.human else entry.model_label,
            "model": entry.model,
            "human": entry.human,
            "data_end": chart_measure(mine.data_end / 3600),
            "budget": {"x": [chart_measure(p.budget / 3600) for p in budget], "y": chart_scores(p.best for p in budget),
                       "k": [p.best_k for p in budget]},
            "elapsed": {"x": [chart_measure(t / 3600) for t, v in zip(curves.elapsed, mine.elapsed) if v is not None],
                        "y": chart_scores(v for v in mine.elapsed if v is not None)},
            "cost": {"x": [chart_measure(p.cost) for p in mine.cost], "y": chart_scores(p.score for p in mine.cost),
                     "hours": [chart_measure(p.budget / 3600) for p in mine.cost]},
            "dollars_per_hour": chart_measure(mine.dollars_per_hour),
        })
    return {"series": series, "human_hourly_rate_usd": data.human_hourly_rate_usd}


def empty_page(request: HttpRequest, template: str, nav: str = "leaderboard") -> HttpResponse:
    return render(request, template, {"nav": nav, "data": None})


# A page whose board is being built asks the browser to load it again after this many seconds.
BUILDING_RETRY_SEC = 5


def building_page(request: HttpRequest, template: str, version: BenchmarkVersion, freshness: serving.Freshness) -> HttpResponse:
    """A board page before its first board is built (boards.serving): a notice, no figures, and a reload soon
    (202 Accepted with Retry-After: a script comes back instead of reading an empty board; not a 5xx, which
    the server's log would report as an error at every view while the board is built)."""
    response = render(
        request, template,
        {"nav": "leaderboard", "data": None, "building": version, "freshness": freshness, "retry": BUILDING_RETRY_SEC},
        status=202,
    )  # fmt: skip
    response["Retry-After"] = str(BUILDING_RETRY_SEC)
    return response


def refused_page(request: HttpRequest, template: str, form: BoardFilters) -> HttpResponse:
    """A board page asked for with bad filters: their errors instead of the board (400)."""
    return render(request, template, {"nav": "leaderboard", "data": None, "form": form}, status=400)


FIGURE_COLUMNS = (("avg", "Avg@k"), ("best", "Best@k"), ("dom", "Dom."))


def figure_groups(data: Board, category: str | None) -> list[dict]:
    """The paper table's column groups: the scope shown, then (over all tasks) each category."""
    if category:
        return [{"category": category, "label": category_label(category), "prefix": ""}]
    groups = [{"category": None, "label": "All tasks", "prefix": ""}]
    groups += [{"category": c, "label": category_label(c), "prefix": f"cat:{c}"} for c in data.categories]
    return groups


def group_columns(group: dict) -> list[tuple[str, str]]:
    """Sort keys and labels of one group: "avg" or "cat:<c>", "cat:<c>:best", ..."""
    if not group["prefix"]:
        return list(FIGURE_COLUMNS)
    return [(group["prefix"] if key == "avg" else f"{group['prefix']}:{key}", label) for key, label in FIGURE_COLUMNS]


def shown_figure(entry: BoardEntry | PublishedEntry, category: str | None, measure: str) -> float | None:
    """An entry's figure of one column as its table shows it (SCORE_DECIMALS): what the marks compare."""
    figures = entry.figures(category)
    value = measure_value(figures, measure) if figures else None
    return None if value is None else round(value, SCORE_DECIMALS)


def published_shown(entry: PublishedEntry, category: str | None, measure: str) -> float | None:
    """A published entry's figure of one column as its table shows it (api.published_figure: the paper's as
    printed where it printed one, else the one its per-task scores give), to SCORE_DECIMALS."""
    value = api.published_figure(entry, category, measure)
    return None if value is None else round(value, SCORE_DECIMALS)


def podium(
    entries: list[BoardEntry] | list[PublishedEntry], groups: list[dict], shown: Callable = shown_figure,
) -> dict[str, tuple]:
    """The best and second figure of each column among `entries` (the compared set), as the paper marks them:
    entry key -> per group, {measure: "best" | "second"}. Figures are compared as shown (`shown`: the measured
    table's, or `published_shown`), so a tie shares its mark; an entry without a mark has none here.
    The one rule of both tables: the measured one and the published one."""
    marks: dict[str, list[dict]] = {}
    for position, group in enumerate(groups):
        for measure, _ in FIGURE_COLUMNS:
            values = {e.key: value for e in entries if (value := shown(e, group["category"], measure)) is not None}
            levels = sorted(set(values.values()), reverse=True)[:2]
            for key, value in values.items():
                if value in levels:
                    mark = "best" if value == levels[0] else "second"
                    marks.setdefault(key, [{} for _ in groups])[position][measure] = mark
    return {key: tuple(tuple(sorted(m.items())) for m in per_group) for key, per_group in marks.items()}


def board_rows(
    data: Board, entries: list[BoardEntry], groups: list[dict], category: str | None, marks: dict | None = None,
) -> list[dict]:
    """The rows of the leaderboard's two tables, each with its HTML (board_html: rendered once per board)."""
    rows = []
    made = board_html.made_for(data)
    for e in entries:
        mine = (marks or {}).get(e.key, ())
        row = {
            "entry": e,
            "fig": e.figures(category),
            "groups": [e.figures(g["category"]) for g in groups],
            "usage": e.scope(category).usage,
        }
        row["marked"] = [(g, dict(mine[i]) if mine else {}) for i, g in enumerate(row["groups"])]
        row["html"] = made.rendered(board_html.BOARD_ROW, category, e.key, row, mine)
        row["usage_html"] = made.rendered(board_html.USAGE_ROW, category, e.key, row)
        rows.append(row)
    return rows


def published_main_set(published: list[PublishedEntry]) -> list[PublishedEntry]:
    """A paper's main set: its entries but the ablations, and an ablation staff put in the published comparison
    (PublishedEntry.compared). What the published table marks and its chart draws."""
    return [p for p in published if not p.ablation or p.compared]


def published_text(entry: PublishedEntry, category: str | None, measure: str) -> str | None:
    """A published figure as its table writes it: the paper's text where it printed one, else `score`."""
    printed = next((f.printed for f in entry.paper if f.scope == (category or "") and f.measure == measure), None)
    if printed is not None:
        return printed
    value = api.published_figure(entry, category, measure)
    return None if value is None else score(value)


def published_chart_data(published: list[PublishedEntry], category: str | None) -> dict:
    """The published main set as the paper draws it (leaderboard_v1.1.png): per entry Avg@k and Best@k as its
    table shows them (`published_shown`: as printed where the paper printed them), sorted by Avg@k, ties by
    Best@k; the sources they come from, and whether every figure drawn is printed (else some are the ones
    the per-task scores give)."""
    bars, sources, printed = [], [], True
    for entry in published_main_set(published):
        avg, best = published_shown(entry, category, "avg"), published_shown(entry, category, "best")
        if avg is None:
            continue
        printed = printed and entry.printed(category, "avg") is not None and (
            best is None or entry.printed(category, "best") is not None
        )
        sources.extend(source for source in entry.sources if source not in sources)
        bars.append({
            "model": entry.model, "label": entry.model_label, "avg": avg, "best": best,
            # Written on the bars as the table writes them: as printed ("0.50"), else to SCORE_DECIMALS.
            "avg_text": published_text(entry, category, "avg"), "best_text": published_text(entry, category, "best"),
        })
    bars.sort(key=lambda b: (-b["avg"], -(b["best"] if b["best"] is not None else -1.0), b["label"]))
    return {"bars": bars, "sources": sources, "printed": printed}


def published_rows(published: list[PublishedEntry], groups: list[dict]) -> tuple[list[dict], list[str]]:
    """Published entries laid out like the main table, and their sources (footnotes, in order of first use).

    A cell is the paper's figure as printed where the paper gives one, with
    a mark saying whether the entry's published per-task scores reproduce
    it; else the figure those scores give, with its interval. The best and
    second of each column are marked among the published main set (a
    paper's ablations are shaded, not marked), by the measured table's rule
    (`podium`).
    """
    rows, sources = [], []
    marks = podium(published_main_set(published), groups, published_shown)
    for entry in published:
        sources.extend(source for source in entry.sources if source not in sources)
        paper = {(f.scope, f.measure): f for f in entry.paper}
        mine = marks.get(entry.key)
        cells = []
        for position, group in enumerate(groups):
            figures = entry.figures(group["category"])
            for column, (measure, _) in enumerate(FIGURE_COLUMNS):
                printed = paper.get((group["category"] or "", measure))
                cells.append(
                    {
                        "printed": printed,
                        "value": measure_value(figures, measure) if figures else None,
                        "ci": measure_interval(figures, measure) if figures and printed is None else None,
                        "mark": dict(mine[position]).get(measure) if mine else None,
                        "extra": position > 0,
                        "group_start": column == 0,
                    }
                )
        notes = [{"number": sources.index(source) + 1, "source": source} for source in entry.sources]
        rows.append({"entry": entry, "cells": cells, "notes": notes})
    return rows, sources


def leaderboard(request: HttpRequest) -> HttpResponse:
    form = board_filters(request, LeaderboardFilters)
    if not form.is_valid():
        return refused_page(request, "evaluations/leaderboard.html", form)
    filters = form.cleaned_data
    if filters["version"] is None:
        return empty_page(request, "evaluations/leaderboard.html")
    data, freshness = serving.served_board(filters["version"], filters["harness"], filters["open_weight"])
    if data is None:
        return building_page(request, "evaluations/leaderboard.html", filters["version"], freshness)
    category = data.shown_category(filters["category"])
    sort_key, descending = sorting.parse_sort(request.GET.get("sort"), data.categories)
    rows = [e for e in sorting.sort_entries(data.entries, sort_key, descending, category) if from_origin(e, filters["origin"])]
    context = leaderboard_page(request, data, rows, category, ("-" if descending else "") + sort_key, filters["entries"])
    if wants_part(request):
        # A sort or page click on a paged table: its parts alone, from the same cached board.
        return render(request, "evaluations/_leaderboard_part.html", context)
    groups = context["groups"]
    published = published_rows(data.published, groups)
    charts_url = f"{reverse('evaluations:leaderboard_charts')}?{context['query']}"
    context.update({
        "freshness": freshness,
        # The charts' data is fetched when a chart is about to be seen (leaderboard_charts): embedded, it
        # grew the page by ~780 bytes an entry (333 KB of HTML at 300 entries).
        "charts_url": charts_url,
        "n_bars": sum(1 for e in rows if e.figures(category)),
        "time_charts": data.curves(category) is not None,
        "published": published[0],
        "published_sources": published[1],
        # The chart's title and whether there is one; its data is fetched with the others' (?chart=published).
        "published_chart": published_chart_data(data.published, category),
        "published_main": sum(1 for p in data.published if not p.ablation),
        "published_ablations": sum(1 for p in data.published if p.ablation),
        "filters": filters,
        # "Results from" only where a team's submission is on the board (or the filter is set): on a
        # phone every select pushes the table below the first screen.
        "with_origin": bool(filters["origin"]) or any(e.submission_mark for e in data.entries),
        "scope_tasks": sum(1 for t in data.tasks if not category or t.category == category),
        **filter_choices(data),
    })
    return render(request, "evaluations/leaderboard.html", context)


# ?chart= of leaderboard_charts: the four board charts, RE-Bench's time curves, the published main set's bars.
CHARTS = ("board", "time", "published")


def leaderboard_charts(request: HttpRequest) -> HttpResponse:
    """The leaderboard's chart data as JSON, for the page's query (version, filters, category, sort) and
    ?chart= (CHARTS): what static/js/leaderboard.js and time_curves.js fetch when a chart is about to be seen.
    From the served board, never a build: 202 {"status": "building"} before the first (api.building_response).
    The JSON text is made once per board, scope, order and chart (board_html)."""
    form = board_filters(request, LeaderboardFilters)
    if not form.is_valid():
        return refused(form)
    filters = form.cleaned_data
    chart = request.GET.get("chart") or CHARTS[0]
    if filters["version"] is None or chart not in CHARTS:
        return JsonResponse({"error": "no such chart" if chart not in CHARTS else "no benchmark version has results yet"}, status=404)
    data, freshness = serving.served_board(filters["version"], filters["harness"], filters["open_weight"])
    if data is None:
        return api.building_response(filters["version"], freshness)
    category = data.shown_category(filters["category"])
    sort_key, descending = sorting.parse_sort(request.GET.get("sort"), data.categories)

    def made() -> SafeString:
        rows = sorting.sort_entries(data.entries, sort_key, descending, category)
        if chart == "published":
            found = published_chart_data(data.published, category)
        elif chart == "board":
            found = chart_data(rows, category, data.budget_grid)
        else:
            found = time_chart_data(data, rows, category)
        return mark_safe(JsonResponse(found, safe=False).content.decode())  # noqa: S308 (JSON text, sent as JSON)

    text = board_html.made_for(data).get(("charts", chart, category, sort_key, descending), made)
    return HttpResponse(text, content_type="application/json")


def measured_coverage(data: Board, entries: list[BoardEntry], category: str | None) -> dict | None:
    """How many of the scope's tasks `entries` (the measured entries listed) have a counted score on, when that
    is fewer than half of them: the table says so beside it (a task without one counts 0 in every figure)."""
    keys = {e.key for e in entries}
    scope = [t for t in data.tasks if not category or t.category == category]
    measured = sum(1 for t in scope if any(c.scores for key, c in data.cells.get(t.id, {}).items() if key in keys))
    return {"measured": measured, "total": len(scope)} if entries and 2 * measured < len(scope) else None


def leaderboard_page(
    request: HttpRequest, data: Board, rows: list[BoardEntry], category: str | None, sort: str, number: int,
) -> dict:
    """What a sort and a page of entries decide: the tables' rows and headers, the medals, the links that carry them."""
    # Listed in three parts: the comparison set, human baselines (unless
    # staff put them in it), the rest; a page is a slice of that listing.
    listed = (
        [e for e in rows if e.comparison] + [e for e in rows if not e.comparison and e.human]
        + [e for e in rows if not e.comparison and not e.human]
    )
    page = entry_page(len(listed), number, LEADERBOARD_ROWS)
    shown = {e.key for e in listed[page.first - 1:page.last]}
    groups = figure_groups(data, category)
    medals = sorted(
        ({"entry": e, "medals": e.scope(category).medals} for e in rows if e.key in shown and e.scope(category).medals),
        key=lambda m: (-m["medals"].gold, -m["medals"].silver, -m["medals"].bronze, m["entry"].model),
    )
    headers = sort_headers(request, sort, [("rank", "Rank"), ("model", "Entry")] + [c for g in groups for c in group_columns(g)])
    for position, header in enumerate(headers):
        # Column groups after the scope's own are the categories: the phone layout leaves them out.
        group = (position - 2) // len(FIGURE_COLUMNS) if position >= 2 else None
        header["extra"] = bool(group)
        header["group_start"] = group is not None and (position - 2) % len(FIGURE_COLUMNS) == 0
    return {
        "nav": "leaderboard",
        "data": data,
        # The paper's main table: the comparison set, then ablations and the rest apart.
        "rows": board_rows(
            data, [e for e in rows if e.comparison and e.key in shown], groups, category,
            podium([e for e in rows if e.comparison and not e.scripted], groups),
        ),
        # Human baselines apart (unless staff put them in the comparison set), then the rest.
        "human_rows": board_rows(data, [e for e in rows if not e.comparison and e.human and e.key in shown], groups, category),
        "other_rows": board_rows(
            data, [e for e in rows if not e.comparison and not e.human and e.key in shown], groups, category
        ),
        "page": page,
        "page_query": query_without(request, "entries"),
        "query": query_without(request),
        "groups": groups,
        "medals": medals,
        "coverage": measured_coverage(data, rows, category),
        "category": category,
        "sort": sort,
        "scope_query": query_without(request, "category"),
        "headers": headers,
        "usage_headers": sort_headers(
            request, sort,
            [("model", "Entry"), ("rollouts", "Counted"), ("cost", "Cost"), ("tokens", "Tokens in / out"),
             ("hours", "Agent hours"), ("calls", "Benchmark calls / h")],
        ),
    }


def heatmap_rows(
    data: Board, entries: list[BoardEntry], category: str | None, order: str, ranked: list[BoardEntry] | None = None,
    published: list[PublishedEntry] = (),
) -> list[dict]:
    """Task rows grouped by category, each with one cell per entry of `entries`, then one per `published` entry.

    `order`: "score" (the default: within each category, tasks by their mean
    Avg@k over every entry in `ranked` (all pages; default `entries`),
    easiest first, a missing cell counting 0 as in Avg@k), "task" (by name)
    or an entry's key (by that entry's score, on any page).
    """
    ranked = entries if ranked is None else ranked
    rows = []
    made = board_html.made_for(data)
    for task in data.tasks:
        if category and task.category != category:
            continue
        row_cells = []
        for entry in entries:
            cell = data.cell(task.id, entry.key)
            html = made.get(("cell", task.id, entry.key), lambda task=task, entry=entry, cell=cell: cell_html(
                cell, rollouts_url(task.id, entry.model_id, entry.harness_id), cell_title(cell)
            ))  # fmt: skip
            row_cells.append({"entry": entry, "cell": cell, "html": html})
        averages = [(cell.avg if (cell := data.cell(task.id, entry.key)) else None) or 0.0 for entry in ranked]
        rows.append({"task": task, "cells": row_cells, "mean": sum(averages) / len(averages) if averages else 0.0,
                     "published": [published_cell_html(task, p) for p in published]})
    place = {name: i for i, name in enumerate(data.categories)}

    def by_entry(row: dict) -> float:
        cell = data.cell(row["task"].id, order)
        return cell.avg if cell and cell.avg is not None else -1.0

    if order == "task":
        rows.sort(key=lambda r: (place.get(r["task"].category, len(place)), r["task"].name))
    elif order in {e.key for e in ranked}:
        rows.sort(key=lambda r: (place.get(r["task"].category, len(place)), -by_entry(r), r["task"].name))
    else:
        rows.sort(key=lambda r: (place.get(r["task"].category, len(place)), -r["mean"], r["task"].name))
    return rows


def cell_html(cell: Cell | None, url: str, title: str) -> SafeString:
    """One heatmap cell's <td>, built here (a 100-entry page has 900; the template's per-cell lookups
    and filters were most of its render), with the filters the rest of the page uses."""
    avg = cell.avg if cell else None
    if cell is None:
        text = "·"
    else:
        text = score(avg) + ("*" if cell.infra_rollout_ids else "") + ("†" if cell.clipped_rollout_ids else "")
    return mark_safe(  # noqa: S308 (every value is escaped)
        f'<td class="num cell {escape(heat(avg))}"><a href="{escape(url)}" title="{escape(title)}" '
        f'data-avg="{escape(sortval(avg))}">{escape(text)}</a></td>'
    )


def published_cell_html(task, published: PublishedEntry) -> SafeString:
    """A published entry's cell on a task: the per-task score its source printed, as the heatmap's CSV and JSON
    carry it; no link (no rollout of ours stands behind it)."""
    cell = published.cells.get(task.id)
    avg = cell.avg if cell else None
    if cell is None:
        title = "not published (counts 0)"
    else:
        title = f"Published · Avg {score(cell.avg)} · Best {score(cell.best)}\nscores: {', '.join(score(s) for s in cell.scores)}"
    return mark_safe(  # noqa: S308 (every value is escaped)
        f'<td class="num cell published {escape(heat(avg))}" title="{escape(title)}" data-avg="{escape(sortval(avg))}" '
        f'data-task="{escape(task.name)}" data-model="{escape(published.model)}">{escape(score(avg) if cell else "·")}</td>'
    )


def cell_title(cell: Cell | None) -> str:
    """A heatmap cell's hover text: its figures, not whose they are.

    The entry and the task are its column's and row's headers (both sticky);
    static/js/cell_titles.js puts their names in front on hover. Written in
    each of a page's 900 cells, names of 26 characters (the shared trials'
    xai-grok-4-20-reasoning with a number) took a 100-entry page of
    scale_bench's board to 258.5 KB, over the 250 KB it is held to.
    """
    if cell is None:
        return "no rollout (counts 0)"
    scores = ", ".join(score(s) for s in cell.scores) or "none counted"
    text = f"Avg {score(cell.avg or 0)} · Best {score(cell.best or 0)}\nrollouts: {scores}"
    if cell.infra_rollout_ids:
        text += f"\n{len(cell.infra_rollout_ids)} infrastructure error(s) excluded"
    if cell.clipped_rollout_ids:
        text += f"\n{len(cell.clipped_rollout_ids)} reward(s) above 1 counted as 1.0 (this version clips rewards)"
    return text


# Entries per page: 36 tasks x 25 heatmap columns, and 30 leaderboard rows (15 figures each, with their
# usage rows), stay under 2,500 DOM nodes with the page around them at 100 entries.
HEATMAP_COLUMNS = 25
LEADERBOARD_ROWS = 30


@dataclass(frozen=True)
class EntryPage:
    """Which entries one page of a board shows (1-based positions, in the board's order), and its neighbours."""

    number: int
    first: int
    last: int
    total: int
    previous: int | None
    next: int | None

    @property
    def paged(self) -> bool:
        return self.total > self.last - self.first + 1


def entry_page(n_entries: int, number: int, size: int) -> EntryPage:
    """The page `number` of `n_entries` columns, `size` at a time (a number past the end shows the last page)."""
    pages = max(1, -(-n_entries // size))
    number = min(number, pages)
    first = (number - 1) * size + 1
    return EntryPage(
        number=number, first=first, last=min(n_entries, number * size), total=n_entries,
        previous=number - 1 if number > 1 else None, next=number + 1 if number < pages else None,
    )


def heatmap(request: HttpRequest) -> HttpResponse:
    form = board_filters(request, HeatmapFilters)
    if not form.is_valid():
        return refused_page(request, "evaluations/heatmap.html", form)
    filters = form.cleaned_data
    if filters["version"] is None:
        return empty_page(request, "evaluations/heatmap.html")
    data, freshness = serving.served_board(filters["version"], filters["harness"], filters["open_weight"])
    if data is None:
        return building_page(request, "evaluations/heatmap.html", filters["version"], freshness)
    category = data.shown_category(filters["category"])
    ranked = sorting.sort_entries(data.entries, "avg", True, category)
    page = entry_page(len(ranked), filters["columns"], HEATMAP_COLUMNS)
    entries = ranked[page.first - 1:page.last]
    order = filters["order"]
    # Tasks are ordered over every entry, so that each page lists them alike.
    # The published entries with per-task scores, after ours on every page: what the heatmap's exports carry.
    published = [p for p in data.published if p.cells]
    rows = heatmap_rows(data, entries, category, order, ranked, published)
    context = {
        "nav": "leaderboard",
        "data": data,
        "freshness": freshness,
        "entries": entries,
        "rows": rows,
        "order": order,
        "category": category,
        "filters": filters,
        "page": page,
        "order_query": query_without(request, "order"),
        "page_query": query_without(request, "columns"),
        "board_query": query_without(request, "order", "columns"),
        "entry_figures": [e.figures(category) for e in entries],
        # The published entries' columns, after ours: their per-task scores as the heatmap's exports carry them.
        "published": published,
        "published_avgs": [figures.avg if (figures := p.figures(category)) else None for p in published],
        # The footnotes of the marks some cell carries, and of no other.
        "any_infra": any(c["cell"] and c["cell"].infra_rollout_ids for r in rows for c in r["cells"]),
        "any_clipped": any(c["cell"] and c["cell"].clipped_rollout_ids for r in rows for c in r["cells"]),
    }
    if wants_part(request):
        # An order or page click: the heatmap's board alone, from the same cached board.
        return render(request, "evaluations/heatmap.html#heatmap-board", context)
    context.update(filter_choices(data))
    return render(request, "evaluations/heatmap.html", context)


def model_detail(request: HttpRequest, name: str) -> HttpResponse:
    model = get_object_or_404(AgentModel, name=name)
    found, building = queries.model_board(model)
    sections = []
    numbers = queries.rollout_numbers(
        cell.best_rollout_id for item in found for task in item.board.tasks if (cell := item.board.cell(task.id, item.entry.key))
    )
    for item in found:
        entry, data = item.entry, item.board
        tasks = []
        for task in data.tasks:
            cell = data.cell(task.id, entry.key)
            tasks.append(
                {
                    "task": task,
                    "cell": cell,
                    "best_url": rollout_url(cell.best_rollout_id) if cell and cell.best_rollout_id else None,
                    "best_number": numbers.get(cell.best_rollout_id) if cell else None,
                    "url": rollouts_url(task.id, entry.model_id, entry.harness_id),
                }
            )
        sections.append(
            {
                "entry": entry,
                "usage": entry.scope(None).usage,
                "version": data.version,
                "categories": data.categories,
                "tasks": tasks,
            }
        )
    rollouts = list(
        Rollout.objects.filter(model=model, held_back=False)
        .select_related("task", "task__version", "harness")
        .order_by("-imported_at", "-id")[:200]
    )
    for rollout in rollouts:
        rollout.url = rollout_url(rollout.id)
    # Causes as the failure analysis sees them: a staff label overrides the classifier.
    failures = (
        failed_rollouts(FailureFilters.of(model=str(model.pk)))
        .order_by()
        .values("effective_cause")
        .annotate(n=Count("id"))
        .order_by("-n", "effective_cause")
    )
    context = {
        "nav": "leaderboard",
        "model": model,
        "sections": sections,
        "building": building,
        "rollouts": rollouts,
        "n_rollouts": Rollout.objects.filter(model=model, held_back=False).count(),
        "failures": [f for f in failures if f["effective_cause"]],
        "published": [p for item in found for p in item.board.published if p.model == model.name]
        + published_elsewhere(model, {item.board.version.id for item in found}),
        "failures_url": f"{reverse('trajectories:failures')}?{urlencode({'model': model.name})}",
    }
    return render(request, "evaluations/model_detail.html", context)


def published_elsewhere(model: AgentModel, seen_versions: set[int]) -> list[PublishedEntry]:
    """Published results of a model on versions where it has no rollouts."""
    rows = []
    versions = set(PublishedResult.objects.filter(model=model).values_list("version", flat=True))
    versions |= set(PublishedFigure.objects.filter(model=model).values_list("version", flat=True))
    for version in BenchmarkVersion.objects.filter(id__in=versions - seen_versions):
        data = serving.board(version)  # None while being built: its published rows appear once it is
        rows.extend(p for p in (data.published if data else []) if p.model == model.name)
    return rows


@staff_required
def import_results_upload(request: HttpRequest) -> HttpResponse:
    """Staff upload of published scores: the same checks as the command."""
    from evaluations.results.published import ResultsImportError, import_results

    errors: list[str] = []
    if request.method == "POST":
        upload = request.FILES.get("file")
        if upload is None:
            errors = ["Choose a CSV or JSON file."]
        else:
            as_json = upload.name.lower().endswith(".json") or request.POST.get("format") == "json"
            try:
                report = import_results(upload.read().decode("utf-8-sig"), as_json=as_json)
            except UnicodeDecodeError:
                errors = ["The file is not UTF-8 text."]
            except ResultsImportError as error:
                errors = error.errors
            else:
                messages.success(request, report.summary())
                # The figures the per-task scores do not reproduce are what staff must look at.
                for line in [c for c in report.checks if ": differs," in c][:50]:
                    messages.warning(request, line)
                return redirect("evaluations:import_results")
    return render(request, "evaluations/import_results.html", {"nav": "leaderboard", "errors": errors})


def compare(request: HttpRequest) -> HttpResponse:
    """Two entries' paired difference of Avg@k, overall and per category (evaluations.figures.paired)."""
    form = board_filters(request, CompareForm)
    if not form.is_valid():
        return refused_page(request, "evaluations/compare.html", form)
    filters = form.cleaned_data
    if filters["version"] is None:
        return empty_page(request, "evaluations/compare.html")
    data, freshness = serving.served_board(filters["version"], filters["harness"], filters["open_weight"])
    if data is None:
        return building_page(request, "evaluations/compare.html", filters["version"], freshness)
    known = board_pairs.comparables(data)
    chosen = form.entries(known, board_pairs.default_entries(data))
    if chosen is None and form.errors:
        return render(request, "evaluations/compare.html", {"nav": "leaderboard", "data": None, "form": form}, status=400)
    context = {"nav": "leaderboard", "data": data, "freshness": freshness, "filters": filters, **filter_choices(data)}
    if chosen is None:  # fewer than two entries with a counted score
        return render(request, "evaluations/compare.html", {**context, "too_few": True, "known": known.values()})
    a, b = chosen
    return render(request, "evaluations/compare.html", {
        **context, "a": known[a], "b": known[b], "known": known.values(),
        "differences": board_pairs.compare_two(data, a, b), "alpha": ALPHA, "matrix": board_pairs.top_matrix(data),
        "min_tasks": MIN_TASKS, "method": METHOD,
    })

