"""The one writer of a rollout's status, by the tables in trajectories.statuses.

Three kinds of change, one function each:
- our runner moves a rollout it runs (`change`, on a row the caller locked;
  evaluations.running.lifecycle decides when, and updates the campaign in the same
  transaction), by `statuses.TRANSITIONS`;
- a campaign's new rollout starts queued (`create_queued`);
- an import sets what its source says (`set_imported`: a trial folder, an
  Inspect log, a human baseline, synthetic data), by `statuses.IMPORTS`.
Nothing else writes `Rollout.status`: tests/test_status_writers.py reads the
source and fails on a second writer.

It is also the one writer of a rollout's verdict fields, as
`trajectories.verdict` decides them: the flag that says its end was not the
agent's doing (`infra_error`: a runner's `fault` on a change, a cause that
stands in `settle_cause`) and its outcome (`settle_cause`).
tests/test_verdict.py fails on a second writer.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from autolab_site.masking import mask_text

from . import statuses, verdict
from .models import Rollout, RolloutEvent

# Fields a change may set that hold text from the trial or its tools: masked as they are written.
MASKED_FIELDS = ("exception_message", "exception_traceback")


class TransitionError(ValueError):
    """A status change the tables do not allow (a bug, or a race lost)."""


def create_queued(*, detail: str = "", **fields: Any) -> Rollout:
    """A new rollout waiting for a worker, with its first event."""
    rollout = Rollout.objects.create(status=statuses.QUEUED, **fields)
    RolloutEvent.objects.create(rollout=rollout, status=statuses.QUEUED, detail=mask_text(detail)[:2000])
    return rollout


def change(
    rollout: Rollout, to: str, detail: str = "", *, now: datetime | None = None, fault: str | None = None, **fields: Any
) -> None:
    """Move a rollout the caller locked to `to`: its status, `fields`, timestamps and event.

    `fault` (a `verdict.Fault`) is whose doing the end was, as the runner
    read it; a new attempt (preparing) starts with none. Raises
    TransitionError for a change the runner's table forbids, before
    anything is written.
    """
    if not statuses.allowed(rollout.status, to):
        raise TransitionError(f"rollout {rollout.pk}: {rollout.status} -> {to} is not allowed")
    now = now or timezone.now()
    # A reason or an exception may quote what the trial printed (an API client's error names its key).
    detail = mask_text(detail)
    fields = {name: mask_text(value) if name in MASKED_FIELDS and isinstance(value, str) else value for name, value in fields.items()}
    rollout.status = to
    # An attempt under way explains itself; an ended or re-queued rollout says why.
    rollout.status_reason = "" if to in statuses.IN_ATTEMPT else detail[:1000]
    for name, value in fields.items():
        setattr(rollout, name, value)
    if to == statuses.PREPARING:
        rollout.infra_error = False
    if fault is not None:
        rollout.infra_error = verdict.not_the_agents(fault)
    if to in statuses.IN_ATTEMPT:
        rollout.heartbeat_at = now
    elif to not in statuses.ACTIVE and rollout.finished_at is None:
        rollout.finished_at = now
    # save() (not update()) so that Rollout signals (the boards' caches) fire.
    rollout.save()
    RolloutEvent.objects.create(rollout=rollout, status=to, detail=detail[:2000])


def note(rollout: Rollout, detail: str) -> None:
    """An event that changes no status (a cancel asked of a running rollout)."""
    RolloutEvent.objects.create(rollout=rollout, status=rollout.status, detail=mask_text(detail)[:2000])


def set_imported(rollout: Rollout, status: str) -> None:
    """Set the status an import's source gives (the caller saves), with the reason an incomplete trial shows.

    A new rollout (no primary key yet) may be any status an import makes;
    a stored one only what `statuses.IMPORTS` allows from its own.
    """
    old = rollout.status if rollout.pk else ""
    if not statuses.import_allowed(old, status):
        raise TransitionError(f"rollout {rollout.pk}: an import cannot make {old or 'a new rollout'} {status}")
    rollout.status = status
    if status == statuses.INCOMPLETE:
        rollout.status_reason = statuses.INCOMPLETE_REASON
    elif rollout.status_reason == statuses.INCOMPLETE_REASON:
        rollout.status_reason = ""


def settle_cause(rollout: Rollout, classified: str, *, cause: str, cause_was: str = "") -> list[str]:
    """Write the outcome and the not-the-agent's flag once a rollout's effective cause stands (the caller saves).

    `classified` is the failure classifier's outcome, `cause` the effective
    cause now (a staff label's, else the classifier's) and `cause_was` the
    one before. Returns the fields that changed.
    """
    was, now = cause_was in verdict.NOT_THE_AGENTS, cause in verdict.NOT_THE_AGENTS
    values = {
        "outcome": verdict.outcome(classified, rollout.reward, now),
        "infra_error": verdict.infra_flag(rollout.infra_error, cause_was_not_the_agents=was, cause_is_not_the_agents=now),
    }
    changed = [name for name, value in values.items() if getattr(rollout, name) != value]
    for name in changed:
        setattr(rollout, name, values[name])
    return changed
