"""Campaign pages: the list, the staff launch page, one campaign's live grid (with its JSON), cancels.

Viewing is public; launching and cancelling are staff-only
(`autolab_site.staff`), each a GET page (a form, or "are you sure?") and its POST.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render

from autolab_site.staff import is_staff, staff_required
from trajectories import services as trajectories, statuses
from trajectories.models import Rollout

from evaluations import launch_form
from evaluations.running import campaigns
from evaluations.running.campaign_progress import campaign_progress
from evaluations.running.campaigns import AlreadyLaunched, CampaignError, launch
from agents.models import AgentModel
from evaluations.models import Campaign
from evaluations.sandbox.backends import BACKENDS


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
            # Harbor's job line and the rewards' histogram, as the job page of imported trials shows them.
            "summary": trajectories.job_summary(campaign.rollouts.all()),
            "is_staff": is_staff(request.user),
            "nav": "campaigns",
        },
    )


def campaign_progress_json(request, pk: int):
    campaign = Campaign.objects.filter(pk=pk).first()
    if campaign is None:  # the page's script reads JSON, an error too
        return JsonResponse({"error": f"no campaign {pk}"}, status=404)
    return JsonResponse(campaign_progress(campaign))


@staff_required
def campaign_new(request):
    """The launch page: model, harness, version, tasks, k, backend; an estimate; then the live grid."""
    if request.method == "POST":
        form = launch_form.LaunchForm(request.POST)
        if form.is_valid() and "launch" in request.POST:
            data = form.cleaned_data
            try:
                campaign = launch(
                    data["model"], data["harness"], data["version"], tasks=list(data["tasks"]), k=data["k"],
                    backend=data["backend"], created_by=request.user, notes=data["notes"],
                    supersede=data.get("earlier") == launch_form.SUPERSEDE, token=data["launch_token"] or None,
                )
            except AlreadyLaunched as exc:
                messages.info(request, str(exc))
                return redirect("evaluations:campaign_detail", pk=exc.campaign.pk)
            except CampaignError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Campaign {campaign.pk}: a worker checks it, then its rollouts start.")
                return redirect("evaluations:campaign_detail", pk=campaign.pk)
    else:
        model_id = request.GET.get("model", "")
        model = AgentModel.objects.filter(pk=int(model_id)).first() if model_id.isdigit() else None
        form = launch_form.LaunchForm(initial={"model": model, "launch_token": launch_form.new_launch_token()})
    context = {"form": form, "nav": "campaigns", "estimate": None, "earlier": 0, "backends": BACKENDS.items()}
    data = form.cleaned_data if form.is_bound else {}
    if all(data.get(name) for name in ("model", "harness", "version", "k")):
        tasks = list(data.get("tasks") or [])
        context["estimate"] = launch_form.campaign_estimate(data["model"], data["harness"], data["version"], tasks,
                                                           data["k"])
        context["earlier"] = launch_form.earlier_rollouts(data["model"], data["harness"], data["version"], tasks)
    return render(request, "evaluations/campaign_new.html", context)


@staff_required
def campaign_cancel(request, pk: int):
    campaign = get_object_or_404(Campaign.objects.select_related("model", "harness"), pk=pk)
    active = campaign.rollouts.filter(status__in=statuses.ACTIVE).count()
    ended = not active and campaign.status not in (Campaign.Status.CHECKING, Campaign.Status.PENDING)
    ended_text = f"has ended ({campaign.get_status_display().lower()}): there is nothing to cancel."
    if request.method != "POST":
        what = f"campaign {campaign.pk} ({campaign.model} / {campaign.harness})"
        if ended:
            return render(request, "evaluations/cancel_confirm.html", {
                "nav": "campaigns", "what": what, "back": campaign.get_absolute_url(), "ended": f"It {ended_text}",
            })
        return render(request, "evaluations/cancel_confirm.html", {
            "nav": "campaigns", "what": what,
            "consequence": f"{active} rollouts that are queued or running stop; the finished ones stay.",
            "back": campaign.get_absolute_url(),
        })
    if ended:  # a second click or a resend: nothing to stop, and its status stays what it is
        messages.info(request, f"Campaign {campaign.pk} {ended_text}")
        return redirect("evaluations:campaign_detail", pk=campaign.pk)
    n = campaigns.cancel(campaign, detail=f"campaign cancelled by {request.user.get_username()}")
    messages.success(request, f"Campaign {campaign.pk} cancelled ({n} rollouts stopped).")
    return redirect("evaluations:campaign_detail", pk=campaign.pk)


@staff_required
def rollout_cancel(request, pk: int):
    rollout = get_object_or_404(Rollout.objects.select_related("task"), pk=pk)
    back = f"/campaigns/{rollout.campaign_id}/" if rollout.campaign_id else f"/rollouts/{rollout.pk}/"
    if request.method != "POST":
        what = f"rollout {rollout.number} of {rollout.task.name}"
        if not rollout.is_active:
            # Offered only where it works: an ended rollout has nothing to cancel.
            return render(request, "evaluations/cancel_confirm.html", {
                "nav": "campaigns", "what": what, "ended": f"It has ended ({rollout.get_status_display().lower()}): "
                "there is nothing to cancel.", "back": back,
            })
        return render(request, "evaluations/cancel_confirm.html", {
            "nav": "campaigns", "what": f"{what} ({rollout.status})",
            "consequence": "Its trial stops within seconds; what it did so far is kept.",
            "back": back,
        })
    if campaigns.cancel_rollout(rollout, detail=f"cancelled by {request.user.get_username()}"):
        messages.success(request, f"Rollout {rollout.pk} is being cancelled.")
    else:
        messages.info(request, f"Rollout {rollout.pk} is not running.")
    # The live rollout page's button comes back to that page; the grid's link to the grid.
    if rollout.campaign_id and request.POST.get("next") != f"/rollouts/{rollout.pk}/":
        return redirect("evaluations:campaign_detail", pk=rollout.campaign_id)
    return redirect(f"/rollouts/{rollout.pk}/")
