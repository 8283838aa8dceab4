"""URLs of pages other apps own, with a plain-path fallback.

The explorer's pages may be wired after ours; a missing URL name must not
break the leaderboard.
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.urls import NoReverseMatch, reverse


def rollout_url(rollout_id: int) -> str:
    try:
        return reverse("trajectories:rollout_detail", args=[rollout_id])
    except NoReverseMatch:
        return f"/rollouts/{rollout_id}/"


def rollouts_url(task_id: int, model_id: int, harness_id: int) -> str:
    """The rollout list filtered to one task of one entry."""
    try:
        base = reverse("trajectories:rollout_list")
    except NoReverseMatch:
        base = "/rollouts/"
    return f"{base}?{urlencode({'task': task_id, 'model': model_id, 'harness': harness_id})}"
