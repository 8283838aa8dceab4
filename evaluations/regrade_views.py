"""Staff actions that regrade rollouts (one, a campaign's, a task's): thin over evaluations.regrades.regrade.

Each checks its rollouts at once and says, in the page's messages, which
were queued and why the others are left as they were; the work runs on a
worker (evaluations.regrades.regrade.run), and the rollout page's grade history
shows it as it ends.
"""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from autolab_site.staff import staff_required
from tasks.models import Task
from trajectories.models import Rollout

from evaluations.forms import RegradeForm
from evaluations.models import Campaign
from evaluations.regrades import regrade

# How many refusals a message lists by rollout before counting the rest.
LISTED = 10


def _regrade(request, rollouts, back: str):
    form = RegradeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Regrade: " + "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect(back)
    if not rollouts:
        messages.info(request, "Nothing to regrade: no current rollout.")
        return redirect(back)
    report = regrade.request(rollouts, requested_by=request.user, backend=form.cleaned_data["backend"])
    if report.grades:
        messages.success(request, f"Regrade queued for {len(report.grades)} rollout{'s' * (len(report.grades) != 1)}: "
                         "the task's current verifier runs on the recorded outputs; each rollout's grade history shows the result.")
    named = {rollout.pk: rollout for rollout in rollouts}
    for pk, why in list(report.refused.items())[:LISTED]:
        messages.warning(request, f"{_called(named[pk]) if pk in named else f'Rollout {pk}'} cannot be regraded and is left as it was: {why}")
    if len(report.refused) > LISTED:
        messages.warning(request, f"… and {len(report.refused) - LISTED} more rollouts cannot be regraded.")
    if report.unsent:
        messages.warning(request, report.unsent)
    return redirect(back)


def _called(rollout: Rollout) -> str:
    """A rollout as the pages call it: by its number ("rollout 1"), never its database id."""
    return f"Rollout {rollout.number} of {rollout.task.name} by {rollout.model}"


@staff_required
@require_POST
def regrade_rollout(request, pk: int):
    rollout = get_object_or_404(Rollout, pk=pk)
    return _regrade(request, regrade.select(ids=[rollout.pk]), f"/rollouts/{rollout.pk}/#grades")


@staff_required
@require_POST
def regrade_campaign(request, pk: int):
    campaign = get_object_or_404(Campaign, pk=pk)
    return _regrade(request, regrade.select(campaign_id=campaign.pk), f"/campaigns/{campaign.pk}/")


@staff_required
@require_POST
def regrade_task(request, pk: int):
    task = get_object_or_404(Task.objects.select_related("version"), pk=pk)
    back = f"/tasks/{task.version.name}/{task.name}/"
    return _regrade(request, regrade.select(task=f"{task.version.name}/{task.name}"), back)
