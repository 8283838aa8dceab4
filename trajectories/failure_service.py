"""Failure classification of stored rollouts. STUB: replaced by the failure-analysis work."""
from __future__ import annotations


def classify_and_store(rollout) -> None:
    """Classify `rollout` (outcome, cause, evidence, flags) and save those fields."""
    return None
