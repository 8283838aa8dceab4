"""The job summary's histogram as SVG geometry (attributes, not styles: the site's CSP allows no style attribute)."""
from __future__ import annotations

from django import template

from trajectories.analysis.job_summary import JobSummary, compact_count

register = template.Library()

WIDTH, HEIGHT, GAP = 240, 60, 2


@register.filter
def histogram_bars(summary: JobSummary) -> list[dict]:
    """One rect per bar, scaled to the tallest; an empty bar keeps a hairline so the axis reads."""
    if not summary.bins:
        return []
    width = WIDTH / len(summary.bins)
    tallest = summary.tallest or 1
    bars = []
    for index, bar in enumerate(summary.bins):
        height = max(1.0, HEIGHT * bar.count / tallest)
        bars.append({
            "x": round(index * width + GAP / 2, 2), "y": round(HEIGHT - height, 2), "w": round(width - GAP, 2),
            "h": round(height, 2), "count": bar.count, "low": bar.low, "high": bar.high,
        })
    return bars


@register.filter
def compact(count: int | None) -> str:
    """A token count as the job line writes it (14.5 M); "—" when unknown."""
    return "—" if count is None else compact_count(count)
