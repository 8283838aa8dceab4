"""The reviews panel's data: every reading of a rollout (Harbor's analysis.json, our judge's), with its checks."""
from __future__ import annotations

from django import template
from django.db.models import Prefetch

from trajectories.models import Review, ReviewCheck

register = template.Library()

OUTCOME_BADGES = {"pass": "good", "fail": "bad", "not_applicable": "plain"}


@register.simple_tag
def rollout_reviews(rollout) -> list[Review]:
    """The rollout's reviews, Harbor's first, then the judges' by name, each with its checks in order.

    Any page can include `_reviews.html` with just `rollout`.
    """
    reviews = list(
        Review.objects.filter(rollout=rollout)
        .select_related("requested_by")
        .prefetch_related(Prefetch("checks", queryset=ReviewCheck.objects.order_by("id")))
    )
    return sorted(reviews, key=lambda review: (review.source != Review.Source.HARBOR, review.judge, review.rubric, review.pk))


@register.filter
def outcome_badge(outcome: str) -> str:
    """The badge class of a check's outcome: pass good, fail bad, not applicable plain."""
    return OUTCOME_BADGES.get(outcome, "warn")


@register.filter
def outcome_text(outcome: str) -> str:
    """Harbor's outcome word as read: pass, fail, not applicable."""
    return outcome.replace("_", " ")
