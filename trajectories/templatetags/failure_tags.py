"""Template helpers for the failure analysis partials."""
from __future__ import annotations

from typing import Any

from django import template

from trajectories.failures import service as failure_service
from trajectories.failures.rules import CAUSES

register = template.Library()


@register.simple_tag
def failure_panel_data(rollout) -> dict[str, Any]:
    """Everything `_failure_panel.html` shows, so that any page can include it with just `rollout`."""
    return failure_service.panel(rollout)


@register.filter
def cause_label(cause: str) -> str:
    return CAUSES.get(cause, cause)


@register.filter
def effective_cause(rollout) -> str:
    """The staff label's cause when there is one, else the automatic cause."""
    return failure_service.effective_cause(rollout)
