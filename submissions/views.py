"""A team's submissions (upload, list, record) and staff's review of them (regrade, mark, publish, reject).

Who sees what: anonymous visitors are sent to log in; a logged-in member
sees only their teams' submissions (another team's is a 404, as one that
does not exist); staff see all. Members never publish, regrade or reject:
those views are `staff_required`.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from autolab_site.staff import is_staff, staff_required
from trajectories.models import Rollout

from submissions import services, states
from submissions.forms import RegradeForm, RejectForm, SubmissionForm
from submissions.models import Submission


def _visible(request: HttpRequest, pk: int) -> Submission:
    submission = services.visible_to(request.user, staff=is_staff(request.user)).select_related("team", "version").filter(pk=pk).first()
    if submission is None:
        raise Http404("No such submission.")
    return submission


def _own_or_published(request: HttpRequest, pk: int) -> tuple[Submission, bool]:
    """The submission and whether the viewer is its team's or staff; a published one is public (its record, not its contact)."""
    staff = is_staff(request.user)
    own = services.visible_to(request.user, staff=staff).filter(pk=pk).exists()
    submission = Submission.objects.select_related("team", "version").filter(pk=pk).first()
    if submission is None or not (own or submission.state == states.PUBLISHED):
        raise Http404("No such submission.")
    return submission, own


def _login_first(view):
    def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    checked.__name__ = view.__name__
    checked.__doc__ = view.__doc__
    return checked


@_login_first
def submission_list(request: HttpRequest) -> HttpResponse:
    staff = is_staff(request.user)
    teams = services.teams_of(request.user)
    if not staff and not teams:
        raise PermissionDenied("Only members of a submitting team (and staff) see submissions.")
    submissions = services.visible_to(request.user, staff=staff).select_related("team", "version")
    return render(request, "submissions/list.html", {
        "submissions": submissions, "teams": teams, "staff": staff, "labels": states.LABELS, "nav": "submissions",
    })


@_login_first
def submission_new(request: HttpRequest) -> HttpResponse:
    """A member's upload: stored, then checked and (every check passing) imported held back by a worker."""
    teams = services.teams_of(request.user)
    if not teams:
        raise PermissionDenied("Only members of a submitting team can submit.")
    if request.method == "POST":
        form = SubmissionForm(request.POST, request.FILES, teams=teams)
        if form.is_valid():
            data = form.cleaned_data
            submission = services.receive(
                team=data["team"], user=request.user, version=data["version"], upload=data["archive"],
                file_name=form.file_name(), model_name=data["model_name"], harness_name=data["harness_name"],
                harness_version=data["harness_version"], contact=data["contact"], note=data["note"],
            )
            services.send_check(submission)  # a worker checks it: an archive of any size never holds a web worker
            return redirect("submissions:detail", pk=submission.pk)
    else:
        form = SubmissionForm(teams=teams)
    return render(request, "submissions/new.html", {"form": form, "nav": "submissions"})


def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Its record: to its team and staff; to anyone once published (the board's marks link here), without its contact."""
    if not request.user.is_authenticated and not Submission.objects.filter(pk=pk, state=states.PUBLISHED).exists():
        return redirect_to_login(request.get_full_path())
    submission, own = _own_or_published(request, pk)
    staff = is_staff(request.user)
    rollouts = Rollout.objects.filter(pk__in=submission.rollout_ids).select_related("task").order_by("task__name", "pk")
    comparison = services.compare_regrades(submission) if staff and submission.rollout_ids else {}
    return render(request, "submissions/detail.html", {
        "submission": submission, "staff": staff, "own": own, "rollouts": rollouts, "comparison": comparison,
        "events": submission.events.select_related("by"), "labels": states.LABELS,
        "reject_form": RejectForm(), "regrade_form": RegradeForm(), "nav": "submissions",
    })


@staff_required
@require_POST
def submission_regrade(request: HttpRequest, pk: int) -> HttpResponse:
    submission = _visible(request, pk)
    form = RegradeForm(request.POST)
    valid = form.is_valid()
    per_task = form.cleaned_data["per_task"] if valid else 1
    backend = form.cleaned_data["backend"] if valid else ""
    report = services.request_regrade(submission, by=request.user, per_task=per_task, backend=backend)
    for line in report.lines():
        messages.info(request, line)
    return redirect("submissions:detail", pk=pk)


@staff_required
@require_POST
def submission_verify(request: HttpRequest, pk: int) -> HttpResponse:
    submission = _visible(request, pk)
    ok, why = services.verify(submission, by=request.user)
    (messages.success if ok else messages.error)(request, why)
    return redirect("submissions:detail", pk=pk)


@staff_required
@require_POST
def submission_self_report(request: HttpRequest, pk: int) -> HttpResponse:
    submission = _visible(request, pk)
    if submission.state != states.CHECKED:
        messages.error(request, f"a submission {states.LABELS[submission.state]} cannot be self-reported")
    else:
        ok, why = services.self_report(submission, by=request.user)
        (messages.success if ok else messages.error)(request, why)
    return redirect("submissions:detail", pk=pk)


@staff_required
@require_POST
def submission_publish(request: HttpRequest, pk: int) -> HttpResponse:
    submission = _visible(request, pk)
    try:
        services.publish(submission, by=request.user)
        messages.success(request, f"published as {states.MARKS.get(submission.mark, submission.mark)}")
    except states.TransitionError as exc:
        messages.error(request, str(exc))
    return redirect("submissions:detail", pk=pk)


@staff_required
@require_POST
def submission_reject(request: HttpRequest, pk: int) -> HttpResponse:
    submission = _visible(request, pk)
    form = RejectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "say why it is rejected")
        return redirect("submissions:detail", pk=pk)
    try:
        services.reject(submission, by=request.user, reason=form.cleaned_data["reason"])
    except states.TransitionError as exc:
        messages.error(request, str(exc))
    return redirect("submissions:detail", pk=pk)
