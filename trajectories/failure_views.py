"""Failure analysis pages: the list and matrix, label edits, exports.

Thin: the queries and rules live in `failure_service` and `failures`.
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from autolab_site import spreadsheet
from autolab_site.filters import refused
from autolab_site.staff import staff_required

from trajectories.failures import judge_service
from trajectories.failures import service as failure_service
from trajectories.failures.service import LabelError
from trajectories.failures.rules import CAUSE_HELP, CAUSES
from trajectories.forms import FailureFilters, JudgeOrder, check_choices
from trajectories.models import Rollout

PAGE_SIZE = 100


@require_GET
def failures(request: HttpRequest) -> HttpResponse:
    form = FailureFilters(request.GET)
    order = JudgeOrder(request.GET)
    # Bad filters: the page as asked, with their errors above an empty list (400).
    valid = form.is_valid() & order.is_valid()
    # The judge's verdict beside the rule's cause (failures/judge_service); the effective cause is unchanged.
    listed = judge_service.with_judge_verdict(failure_service.failed_rollouts(form) if valid else Rollout.objects.none())
    judging = judge_service.summary(listed) if valid else None
    if valid and order.cleaned_data["order"] == judge_service.DISAGREE_FIRST:
        listed = judge_service.disagreements_first(listed)
    page = Paginator(listed, PAGE_SIZE).get_page(request.GET.get("page"))
    verdicts = judge_service.verdicts([r.judge_review for r in page.object_list])
    rollouts = [
        {
            "rollout": r,
            "url": failure_service.rollout_url(r.pk),
            "cause": r.effective_cause,
            "cause_label": CAUSES.get(r.effective_cause, r.effective_cause),
            "source": failure_service.cause_source(r),
            "first_evidence": next(iter(r.failure_evidence or []), None),
            "judge": verdicts.get(r.judge_review),
            "disagreement": r.disagreement,
        }
        for r in page.object_list
    ]
    query = {**form.as_query(), **order.as_query()}
    return render(
        request,
        "trajectories/failures.html",
        {
            "nav": "failures",
            "form": form,
            "filters": form.values(),
            "options": failure_service.filter_options(form.cleaned_data["version"] if valid else ""),
            "checks": check_choices(),
            "matrix": failure_service.failure_matrix(form) if valid else {"columns": [], "rows": []},
            "page": page,
            "rollouts": rollouts,
            "query": urlencode(query),
            "has_filters": bool(query),
            "cause_help": [(c, CAUSES[c], CAUSE_HELP[c]) for c in CAUSES],
            "unclassified": failure_service.unclassified_count(),
            "judging": judging,
            "order": order,
            "filter_query": urlencode(form.as_query()),
        },
        status=200 if valid else 400,
    )


@staff_required
@require_POST
def failure_label(request: HttpRequest, pk: int) -> HttpResponse:
    """Set, change or clear a rollout's staff label."""
    rollout = get_object_or_404(Rollout, pk=pk)
    if request.POST.get("action") == "clear":
        cause, notes, tags = "", "", ""
    else:
        cause, notes, tags = request.POST.get("cause", ""), request.POST.get("notes", ""), request.POST.get("tags", "")
    try:
        label = failure_service.set_label(rollout, request.user, cause=cause, notes=notes, tags=tags)
    except LabelError as exc:
        messages.error(request, str(exc))
        return HttpResponseRedirect(_next_url(request, rollout), status=303)
    if label is None:
        messages.success(request, "Label cleared: the automatic cause applies again.")
    else:
        messages.success(request, "Label saved.")
    return HttpResponseRedirect(_next_url(request, rollout), status=303)


def _next_url(request: HttpRequest, rollout: Rollout) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return failure_service.rollout_url(rollout.pk) + "#failure"


@require_GET
def export_csv(request: HttpRequest) -> HttpResponse:
    form = FailureFilters(request.GET)
    if not form.is_valid():
        return refused(form)
    rows = failure_service.export_rows(form)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="failures.csv"'
    writer = spreadsheet.writer(response)
    writer.writerow(failure_service.EXPORT_COLUMNS)
    for row in rows:
        writer.writerow(failure_service.flat_row(row))
    return response


@require_GET
def export_json(request: HttpRequest) -> HttpResponse:
    form = FailureFilters(request.GET)
    if not form.is_valid():
        return refused(form)
    rows = failure_service.export_rows(form)
    return JsonResponse(
        {"filters": form.as_query(), "count": len(rows), "rollouts": rows},
        json_dumps_params={"indent": 1},
    )
