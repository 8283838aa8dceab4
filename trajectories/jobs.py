"""Rollouts summed up as a job: Harbor's job line and reward histogram (analysis.job_summary) read from the database.

The campaign page (our runner's jobs) and the job page (trials imported
from one Harbor job, sharing its `job_id`) both ask `summary_of`.
"""
from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from trajectories import statuses
from trajectories.analysis.job_summary import JobSummary, TrialFacts, summarise
from trajectories.models import JobReview, Rollout

FIELDS = ("status", "exception_type", "infra_error", "n_input_tokens", "n_output_tokens", "cost_usd", "started_at",
          "finished_at", "agent_started_at", "agent_finished_at", "reward")


def facts(rollout: Rollout) -> TrialFacts:
    """What the job summary reads of a rollout: the trial's whole duration where both ends are known, else the agent's."""
    if rollout.started_at and rollout.finished_at:
        seconds = (rollout.finished_at - rollout.started_at).total_seconds()
    elif rollout.agent_started_at and rollout.agent_finished_at:
        seconds = (rollout.agent_finished_at - rollout.agent_started_at).total_seconds()
    else:
        seconds = None
    return TrialFacts(
        ended=rollout.status in statuses.ENDED,
        errored=bool(rollout.exception_type) or rollout.infra_error,
        # A cancel stops the trial with an exception (CancelledError): cancelled, not an error.
        cancelled=rollout.status == statuses.CANCELLED,
        input_tokens=rollout.n_input_tokens,
        output_tokens=rollout.n_output_tokens,
        cost_usd=rollout.cost_usd,
        seconds=seconds,
        reward=rollout.reward,
    )


def summary_of(rollouts: QuerySet[Rollout] | Iterable[Rollout]) -> JobSummary:
    """The job line and histogram of these rollouts (superseded ones included: they ran).

    A queryset is read for the summary's columns only; rows already loaded are read as they are.
    """
    if isinstance(rollouts, QuerySet):
        rollouts = rollouts.select_related(None).prefetch_related(None).only(*FIELDS)
    return summarise(facts(rollout) for rollout in rollouts)


def job_rollouts(job_id: str) -> QuerySet[Rollout]:
    """The rollouts imported from one Harbor job, in the order its page lists them."""
    return (
        Rollout.objects.filter(job_id=job_id, held_back=False)
        .select_related("task__version", "model", "harness")
        .order_by("task__name", "model__name", "index", "pk")
    )


def job_review(job_id: str) -> JobReview | None:
    """Harbor's reading of the whole job (its job folder's analysis.json), if imported."""
    return JobReview.objects.filter(job_id=job_id).first() if job_id else None
