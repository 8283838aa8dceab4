"""Number formatting for leaderboard pages: one place, so every page agrees."""
from __future__ import annotations

from types import SimpleNamespace

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from evaluations.figures.ranking import INTERVAL_PERCENT
from tasks.lib.numbers import parse_float

register = template.Library()

DASH = "—"


# Decimals a normalised score is shown with, on every page and in the charts' data.
SCORE_DECIMALS = 3


@register.filter
def signed_score(value) -> str:
    """A difference of scores with its sign and SCORE_DECIMALS decimals: "+0.133", "-0.023" (0 as "+0.000")."""
    value = parse_float(value)
    if value is None:
        return DASH
    return f"{0.0 if abs(value) < 0.5 * 10.0**-SCORE_DECIMALS else value:+.{SCORE_DECIMALS}f}"


@register.filter
def signed_interval(value) -> str:
    """A difference's interval as "[-0.023, +0.224]": signed ends, so a negative end is not read as a dash."""
    if not value:
        return DASH
    return f"[{signed_score(value[0])}, {signed_score(value[1])}]"


@register.filter
def score(value) -> str:
    """A normalised score with SCORE_DECIMALS decimals."""
    value = parse_float(value)
    return DASH if value is None else f"{value:.{SCORE_DECIMALS}f}"


@register.filter
def interval(value) -> str:
    """An interval as "0.415–0.565": its ends with SCORE_DECIMALS, as the figure beside it, on every page.

    No page rounds coarser: at 2 decimals two entries ranked apart showed
    touching intervals (0.33–0.47 over 0.22–0.33, from 0.3272 and 0.3267).
    """
    if not value:
        return ""
    lo, hi = value
    return f"{lo:.{SCORE_DECIMALS}f}–{hi:.{SCORE_DECIMALS}f}"


@register.simple_tag
def interval_level() -> str:
    """The intervals' level as pages print it: evaluations.figures.ranking.INTERVAL_PERCENT and a percent sign."""
    return f"{INTERVAL_PERCENT}%"


@register.filter
def usd(value) -> str:
    value = parse_float(value)
    if value is None:
        return "unknown"
    return f"${value:,.2f}"


@register.filter
def compact(value) -> str:
    """1234567 -> 1.23M: token counts are read for their size, not their digits."""
    value = parse_float(value)
    if value is None:
        return DASH
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:.0f}"


@register.filter
def number(value, digits: int = 1) -> str:
    value = parse_float(value)
    return DASH if value is None else f"{value:.{int(digits)}f}"


@register.filter
def get(mapping, key):
    if not mapping:
        return None
    return mapping.get(key)


HEAT_STEPS = 10


@register.filter
def heat(value) -> str:
    """CSS classes of a heatmap cell: `heat-0` (white, score 0) to `heat-10` (deep blue, 1), `heat-none` for no rollout.

    Classes, not inline styles: each step's text colour is chosen in
    leaderboard.css to stay legible on its background.
    """
    value = parse_float(value)
    if value is None:
        return "heat heat-none"
    step = round(min(1.0, max(0.0, value)) * HEAT_STEPS)
    return f"heat heat-{step}"


@register.simple_tag
def heat_scale() -> list[dict]:
    """The heatmap's legend: each step of `heat` with the scores it stands for (the last holds everything
    from its lower bound up: a version that does not clip has scores above 1)."""
    half = 0.5 / HEAT_STEPS
    steps = []
    for step in range(HEAT_STEPS + 1):
        low, high = max(0.0, step / HEAT_STEPS - half), step / HEAT_STEPS + half
        label = f"{step / HEAT_STEPS:g}"
        span = f"{low:.2f} or more" if step == HEAT_STEPS else f"{low:.2f} to {high:.2f}"
        steps.append({"css": f"heat heat-{step}", "label": label, "title": f"Avg@k {span}"})
    return steps


@register.filter
def sortval(value) -> str:
    """A data-sort value for the JS sorter: numbers as they are, None empty."""
    if value is None:
        return ""
    return str(value)


# What figure_cells shows for an entry with no figures in a scope.
NO_FIGURES = SimpleNamespace(avg=None, best=None, dominance=None, avg_ci=None, best_ci=None, dominance_ci=None)


# A best or second figure of its column among the compared entries, as the paper marks it.
MARKS = {
    "best": '<strong class="best" title="the best of this column among the compared entries">{}</strong>',
    "second": '<span class="second" title="the second best of this column among the compared entries">{}</span>',
}


@register.filter
def shade(value) -> str:
    """A paper-table cell's shading class: `shade-0` (0, rose) through `shade-5` (0.5, white) to `shade-10`
    (1, green); none without a figure. Scores above 1 (a version that does not clip) shade as 1."""
    value = parse_float(value)
    if value is None:
        return ""
    return f" shade-{round(min(1.0, max(0.0, value)) * HEAT_STEPS)}"


def marked(text: str, mark: str | None) -> SafeString:
    return format_html(MARKS[mark], text) if mark else format_html("{}", text)


def figure_cell(value, body: SafeString, css: str, after: SafeString) -> SafeString:
    """One figure's <td> in a paper table, measured or published: shaded by `value` (`shade`), `body` (the
    figure as shown, `marked`), then `after` (its interval, or a printed figure's check). `css`: its classes
    after "num" (" group-start", " extra")."""
    return format_html('<td class="num{}{}" data-value="{}">{}{}</td>', css, shade(value), sortval(value), body, after)


def interval_span(ci) -> SafeString:
    return format_html('<span class="ci">{}</span>', interval(ci))


@register.simple_tag
def figure_cells(figures, first: bool, marks: dict | None = None) -> SafeString:
    """A leaderboard row's Avg@k, Best@k and Dominance cells for one scope, each with its interval,
    shaded by its figure, the best and second of its column marked (`marks`: measure -> "best"/"second").

    In Python rather than the row template's loop: a row has them for every
    scope, and rendering them through the template was most of the first
    view of a new board (every row is made again for it).
    """
    if figures is None:  # an entry without this scope's figures: dashes, as the template's loop showed
        figures = NO_FIGURES
    marks = marks or {}
    extra = "" if first else " extra"
    return format_html(
        "{}{}{}",
        figure_cell(figures.avg, marked(score(figures.avg), marks.get("avg")), " group-start" + extra, interval_span(figures.avg_ci)),
        figure_cell(figures.best, marked(score(figures.best), marks.get("best")), extra, interval_span(figures.best_ci)),
        figure_cell(
            figures.dominance, marked(score(figures.dominance), marks.get("dom")), extra, interval_span(figures.dominance_ci)
        ),
    )


# A printed figure's check against its entry's per-task scores (PaperFigure.status): its sign and what it says.
CHECKS = {
    "reproduced": ("✓", "the per-task scores reproduce it ({})"),
    "differs": ("≠", "the per-task scores give {}"),
    "unchecked": ("–", "no per-task scores to check it against"),
}


@register.simple_tag
def published_cell(cell: dict) -> SafeString:
    """A published table's cell (views.published_rows): the paper's figure as printed, with its check, where it
    printed one; else the figure its per-task scores give, with its interval. Shaded and marked as the measured
    table's cells are (`figure_cell`), by the figure shown."""
    css = (" group-start" if cell["group_start"] else "") + (" extra" if cell["extra"] else "")
    printed = cell["printed"]
    if printed is None:
        value = cell["value"]
        return figure_cell(value, marked(score(value), cell["mark"]), css, interval_span(cell["ci"]))
    sign, title = CHECKS[printed.status]
    return figure_cell(
        printed.value,
        format_html('<span class="printed">{}</span>', marked(printed.printed, cell["mark"])),
        css,
        format_html('<span class="mark {}" title="{}">{}</span>', printed.status, title.format(score(printed.ours)), sign),
    )


@register.simple_tag
def shade_scale() -> list[dict]:
    """The paper table's legend: its shading at 0, 0.25, 0.5, 0.75 and 1."""
    return [{"css": f"shade-{step}", "label": f"{step / HEAT_STEPS:g}"} for step in (0, 2, 5, 8, 10)]


@register.filter
def category_label(value) -> str:
    """"model_development" -> "Model development", "cuda" -> "CUDA" (unknown ones readable too)."""
    from tasks.models import category_label as label

    return label(value)
