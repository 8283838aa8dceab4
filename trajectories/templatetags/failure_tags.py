"""Template helpers for the failure analysis partials."""
from __future__ import annotations

from typing import Any

from django import template

from trajectories import verdict
from trajectories.failures import service as failure_service
from trajectories.failures.rules import CAUSES, FLAG_LABELS, FLAGS

register = template.Library()


@register.simple_tag
def failure_panel_data(rollout) -> dict[str, Any]:
    """Everything `_failure_panel.html` shows, so that any page can include it with just `rollout`."""
    return failure_service.panel(rollout)


@register.filter
def cause_label(cause: str) -> str:
    return CAUSES.get(cause, cause)


@register.filter
def flag_label(flag: str) -> str:
    """A behaviour flag's name ("regressed_after_best" -> "Regressed after its best"); an unknown one as stored."""
    return FLAG_LABELS.get(flag, flag)


@register.filter
def outcome_label(outcome: str) -> str:
    """A rollout's outcome by its name ("no_reward" -> "No reward"), as trajectories.verdict names it."""
    return verdict.outcome_label(outcome)


@register.filter
def flag_help(flag: str) -> str:
    """What a behaviour flag means, for its hover text."""
    return FLAGS.get(flag, "")


@register.simple_tag
def flag_table() -> list[tuple[str, str, str]]:
    """Every flag: its id, name and meaning (the failures page's explanation)."""
    return [(flag, FLAG_LABELS[flag], help) for flag, help in FLAGS.items()]


@register.filter
def effective_cause(rollout) -> str:
    """The staff label's cause when there is one, else the automatic cause."""
    return failure_service.effective_cause(rollout)
