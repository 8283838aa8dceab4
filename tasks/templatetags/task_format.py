"""Small formatting filters for task pages."""
from __future__ import annotations

from django import template

from tasks.lib.numbers import format_number
from tasks import models

register = template.Library()


@register.filter
def budget(seconds: int | None) -> str:
    """7200 -> "2 h", 5400 -> "1.5 h", 600 -> "10 min"."""
    if not seconds:
        return "–"
    if seconds < 3600:
        return f"{seconds / 60:g} min"
    return f"{round(seconds / 3600, 2):g} h"


@register.filter
def megabytes(value: int | None) -> str:
    """4096 -> "4 GB", 512 -> "512 MB"."""
    if not value:
        return "–"
    if value >= 1024:
        return f"{round(value / 1024, 1):g} GB"
    return f"{value} MB"


@register.filter
def score(value: float | None) -> str:
    return format_number(value, "–")


@register.filter
def category_label(value: str) -> str:
    return models.category_label(value)


@register.filter
def listing(value) -> str:
    """Lists as "a, b, c"; anything else as text."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value)
    return str(value)
