"""The staff's "Analyse with the judge" button (failures page, rollout page): it queues, a worker reads.

Thin: the reading is `trajectories.judge`, run by the Celery task
`trajectories.analyze_rollouts`; this view checks the request through
`AnalyseForm`, picks the rollouts and sends the task.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from autolab_site.staff import staff_required
from trajectories import services
from trajectories.forms import AnalyseForm


@staff_required
@require_POST
def analyze(request: HttpRequest) -> HttpResponse:
    form = AnalyseForm(request.POST, judges=[model.name for model in services.judges()])
    back = _back(request)
    if not form.is_valid():
        errors = "; ".join(f"{name}: {' '.join(texts)}" if name != "__all__" else " ".join(texts) for name, texts in form.errors.items())
        if not services.judges().exists():
            errors = "no model is registered as a judge (tick “is judge” on an Agent model in the admin)"
        messages.error(request, f"Nothing was queued: {errors}")
        return HttpResponseRedirect(back, status=303)
    rollout = form.cleaned_data["rollout"]
    if rollout is not None:
        ids = [rollout.pk]
    else:
        ids = list(services.failed_rollouts(form.cleaned_data["filters"]).values_list("pk", flat=True))
    if not ids:
        messages.error(request, "Nothing was queued: no failed rollout matches these filters.")
        return HttpResponseRedirect(back, status=303)
    judge = form.cleaned_data["judge"]
    sent = services.send_analysis(
        ids, judge=judge, budget=form.cleaned_data["max_tokens"], replace=form.cleaned_data["replace"],
        requested_by=request.user,
    )
    if sent:
        # A rollout by the number its page gives it, not its database id.
        what = f"rollout {rollout.number} of {rollout.task.name}" if rollout is not None else f"{len(ids)} rollout{'s' * (len(ids) != 1)}"
        messages.success(request, f"Analysis of {what} by {judge} queued: the verdicts appear as a worker reads them.")
    else:
        messages.error(request, "Nothing was queued: the task queue (Celery's broker) is not reachable; try again.")
    return HttpResponseRedirect(back, status=303)


def _back(request: HttpRequest) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("trajectories:failures")
