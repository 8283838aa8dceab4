"""Template helpers of the judge's button and verdicts (so pages include them without view changes)."""
from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from trajectories import services
from trajectories.analysis.judge_digest import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from trajectories.failures.judge_agreement import DISAGREEMENTS

register = template.Library()


@register.simple_tag
def judge_button_data() -> dict[str, Any]:
    """What `_judge_button.html` offers: the registered judges, the default budget, where it posts."""
    return {
        "judges": [model.name for model in services.judges()],
        "budget": DEFAULT_BUDGET, "min": MIN_BUDGET, "max": MAX_BUDGET,
        "url": reverse("trajectories:analyze"),
    }


@register.filter
def disagreement_label(kind: str) -> str:
    return DISAGREEMENTS.get(kind, "")
