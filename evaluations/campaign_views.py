"""Campaign pages: the list, one campaign's live grid (with its JSON), cancel actions.

Viewing is public; actions are POST-only and staff-only (403 otherwise).
"""
from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.http import HttpResponseForbidden, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from trajectories.models import Rollout

from .campaigns import campaign_progress, cancel_campaign, request_cancel
from .models import Campaign


def staff_only(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not (request.user.is_authenticated and request.user.is_staff):
            return HttpResponseForbidden("Only staff can do this.")
        return view(request, *args, **kwargs)

    return wrapped


def campaign_list(request):
    campaigns = Campaign.objects.select_related("model", "harness", "version").order_by("-created_at")[:200]
    return render(request, "evaluations/campaign_list.html", {"campaigns": campaigns, "nav": "campaigns"})


def campaign_detail(request, pk: int):
    campaign = get_object_or_404(Campaign.objects.select_related("model", "harness", "version", "created_by"), pk=pk)
    progress = campaign_progress(campaign)
    width = max((len(row["cells"]) for row in progress["rows"]), default=0)
    return render(
        request,
        "evaluations/campaign_detail.html",
        {
            "campaign": campaign,
            "progress": progress,
            "columns": range(width),
            "is_staff": request.user.is_staff,
            "nav": "campaigns",
        },
    )


def campaign_progress_json(request, pk: int):
    campaign = get_object_or_404(Campaign, pk=pk)
    return JsonResponse(campaign_progress(campaign))


@require_POST
@staff_only
def campaign_cancel(request, pk: int):
    campaign = get_object_or_404(Campaign, pk=pk)
    n = cancel_campaign(campaign, detail=f"campaign cancelled by {request.user.get_username()}")
    messages.success(request, f"Campaign {campaign.pk} cancelled ({n} rollouts stopped).")
    return redirect("evaluations:campaign_detail", pk=campaign.pk)


@require_POST
@staff_only
def rollout_cancel(request, pk: int):
    rollout = get_object_or_404(Rollout, pk=pk)
    if request_cancel(rollout, detail=f"cancelled by {request.user.get_username()}"):
        messages.success(request, f"Rollout {rollout.pk} is being cancelled.")
    else:
        messages.info(request, f"Rollout {rollout.pk} is not running.")
    if rollout.campaign_id:
        return redirect("evaluations:campaign_detail", pk=rollout.campaign_id)
    return redirect(f"/rollouts/{rollout.pk}/")
