"""URLs of pages other apps own, with a plain-path fallback.

The explorer's pages may be wired after ours; a missing URL name must not
break the leaderboard. A heatmap page links ~900 cells: each path is
reversed once per URLconf and script prefix, not once per cell.
"""
from __future__ import annotations

from functools import lru_cache

from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse


@lru_cache(maxsize=64)
def _path(name: str, fallback: str, urlconf: str | None, prefix: str) -> str:
    try:
        return reverse(name, urlconf=urlconf)
    except NoReverseMatch:
        return fallback


def _base(name: str, fallback: str) -> str:
    return _path(name, fallback, get_urlconf(), get_script_prefix())


def rollout_url(rollout_id: int) -> str:
    try:
        return reverse("trajectories:rollout_detail", args=[rollout_id])
    except NoReverseMatch:
        return f"/rollouts/{rollout_id}/"


def rollouts_url(task_id: int, model_id: int, harness_id: int) -> str:
    """The rollout list filtered to one task of one entry."""
    return _base("trajectories:rollout_list", "/rollouts/") + f"?task={int(task_id)}&model={int(model_id)}&harness={int(harness_id)}"
