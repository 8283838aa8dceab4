"""Template filters for the trajectory explorer (all output escaped)."""
from __future__ import annotations

import json
import math
from typing import Any

from django import template

from autolab_site.durations import format_duration

from trajectories import ansi, explorer
from trajectories.analysis import diffs
from trajectories.analysis.step_kinds import StepKind

register = template.Library()


@register.filter
def ansi_html(text: str):
    """Terminal text as escaped HTML with colour spans."""
    return ansi.ansi_to_html(text)


@register.filter
def diff_lines(diff: str) -> list[tuple[str, str]]:
    return diffs.diff_lines(diff)


register.filter("duration", format_duration)


@register.filter
def command_text(arguments: Any) -> str:
    """What a tool call typed: terminus keystrokes, else a command, else JSON."""
    if isinstance(arguments, dict):
        for key in ("keystrokes", "command", "cmd"):
            value = arguments.get(key)
            if isinstance(value, str):
                return value
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False)


@register.filter
def command_extra(arguments: Any) -> str:
    """The remaining arguments beside the command ("duration: 1.0")."""
    if not isinstance(arguments, dict):
        return ""
    shown = next((k for k in ("keystrokes", "command", "cmd") if isinstance(arguments.get(k), str)), None)
    if shown is None:
        return ""
    return ", ".join(f"{k}: {v}" for k, v in arguments.items() if k != shown)


@register.filter
def reward(value: Any) -> str:
    """A reward to four decimals at most (0.9102, 0.359, 0); the exact value stays in the data."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—"
    if not math.isfinite(value):
        return str(value)
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@register.filter
def field_value(value: Any) -> str:
    """A verifier field as text: nested values as compact JSON, not Python reprs."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@register.simple_tag
def timeline_marks(timeline, page_step_ids, only_param: str = ""):
    """The strip's marks as HTML, built in one pass.

    A long rollout's strip has a thousand marks; rendering each through the
    template engine was most of its page's time.
    """
    from django.utils.html import escape
    from django.utils.safestring import mark_safe

    only = f"&amp;only={escape(only_param)}" if only_param else ""
    parts = []
    for mark in timeline.marks:
        step_id = mark["step_id"]
        href = f"#step-{step_id}" if step_id in page_step_ids else f"?step={step_id}{only}"
        when = format_duration(mark["elapsed"])
        if mark["count"] > 1:
            title = f"#{mark['first']}–#{mark['last']}, {mark['count']} steps ({mark['kinds'] or StepKind.OTHER.value}) around {when}"
            span = f' data-first="{mark["first"]}" data-last="{mark["last"]}"'
        else:
            title = f"#{step_id} {mark['kinds'] or 'step'} at {when}"
            span = ""
        parts.append(
            f'<a class="mark k-{escape(mark["kind"])}" href="{href}" data-left="{mark["percent"]:.3f}" '
            f'title="{escape(title)}" data-step-id="{step_id}"{span} aria-label="step {step_id}"></a>'
        )
    return mark_safe("".join(parts))
