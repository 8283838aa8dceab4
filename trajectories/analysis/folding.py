"""Which steps fold into one row: one rule for the rollout page (trajectories.explorer) and the judge's digest.

Most of a long training run is the agent waiting on it: 122 of a 139-step
rollout's steps, which hid its three edits and its one evaluation among
pages of "sleep 600". An agent polling a log with the same `tail` again and
again says as little. A run of at least FOLD_MIN_STEPS such steps is shown
(and sent to the judge) as one fold.
"""
from __future__ import annotations

from collections.abc import Iterable

from trajectories.analysis.step_kinds import StepKind

FOLD_MIN_STEPS = 3
# Kinds that say nothing on their own: a step of only these folds.
FOLDABLE_KINDS = frozenset({StepKind.WAIT.value})
# A check repeated (Step.repeats: the same look as the step before) of only these folds too.
REPEATED_KINDS = frozenset({StepKind.INSPECT.value, StepKind.WAIT.value})


def only_waits(kinds: Iterable[str]) -> bool:
    """A step of FOLDABLE_KINDS alone (a step of no kind says something: a message)."""
    kinds = set(kinds)
    return bool(kinds) and kinds <= FOLDABLE_KINDS


def foldable(kinds: Iterable[str], repeats: bool) -> bool:
    """Whether a step of these kinds (repeating the look before it or not) folds."""
    kinds = set(kinds)
    return bool(kinds) and (kinds <= FOLDABLE_KINDS or (repeats and kinds <= REPEATED_KINDS))
