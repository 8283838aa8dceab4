"""What a trial ran in: the image, its id, and every base image the worker substituted (the one reader of it).

Our container sandbox writes `FILE_NAME` at the root of a trial folder once
the task's image is built (evaluations.sandbox.containers). A worker
without a registry builds real tasks from stand-ins (a Debian image for
`ubuntu:22.04`, tasks.images' mirror map): a timed task measured there is
not the published environment, and the rollout's page says so in words.

A folder from elsewhere has no such file: nothing is known of its image,
and nothing is claimed. Django-free.
"""
from __future__ import annotations

import json
from typing import Any

FILE_NAME = "autolab-environment.json"
SUBSTITUTION_KEYS = ("requested", "used", "image_id", "stand_in_for")


class RunEnvironmentError(ValueError):
    """An environment file that does not say what it must."""


def parse(raw: bytes | str) -> dict[str, Any]:
    """The record kept on the rollout: engine, image, image_id and the substitutions, each a plain string."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise RunEnvironmentError(f"{FILE_NAME} is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("image"), str):
        raise RunEnvironmentError(f"{FILE_NAME} names no image")
    substitutions = data.get("substitutions") or []
    if not isinstance(substitutions, list) or not all(isinstance(item, dict) for item in substitutions):
        raise RunEnvironmentError(f"{FILE_NAME}: substitutions is not a list of records")
    text = lambda value: value[:300] if isinstance(value, str) else ""  # noqa: E731
    return {
        "engine": text(data.get("engine")),
        "image": text(data["image"]),
        "image_id": text(data.get("image_id")),
        "substitutions": [{key: text(item.get(key)) for key in SUBSTITUTION_KEYS} for item in substitutions[:20]],
    }


def summary(record: dict[str, Any]) -> str:
    """One line for the page and the API: what was built instead of what (or "" when nothing was substituted)."""
    return "; ".join(f"{item.get('used')} instead of {item.get('requested')}"
                     for item in (record or {}).get("substitutions") or [])
