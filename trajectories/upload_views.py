"""Staff upload of an archive of Harbor trials, imported in the background (trajectories.storing.uploads)."""
from __future__ import annotations

import re
from pathlib import Path

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from autolab_site.staff import staff_required
from trajectories.storing import uploads
from tasks.models import BenchmarkVersion
from trajectories.storing.archives import ARCHIVE_SUFFIXES, is_archive, kind_problem, limits
from trajectories.models import UploadJob

RECENT_JOBS = 20


class UploadForm(forms.Form):
    archive = forms.FileField(
        help_text="A .tar.gz, .tgz, .tar or .zip of a trial folder, a Harbor job folder or a folder of jobs."
    )
    version = forms.CharField(
        required=False, max_length=50, help_text="Benchmark version of the tasks (blank: the newest that has the task)."
    )

    def clean_archive(self):
        upload = self.cleaned_data["archive"]
        if not is_archive(upload.name):
            raise forms.ValidationError(f"Not a supported archive; use one of {', '.join(ARCHIVE_SUFFIXES)}.")
        max_bytes, _ = limits()
        if upload.size > max_bytes:
            raise forms.ValidationError(f"The archive is larger than the limit of {max_bytes} bytes.")
        # Said here, not by the worker minutes later: the bytes are the kind the name says.
        problem = kind_problem(upload.name, upload)
        upload.seek(0)
        if problem:
            raise forms.ValidationError(problem)
        return upload

    def clean_version(self):
        name = self.cleaned_data["version"].strip()
        if name and not BenchmarkVersion.objects.filter(name=name).exists():
            known = ", ".join(BenchmarkVersion.objects.order_by("name").values_list("name", flat=True)) or "none yet"
            raise forms.ValidationError(f"No benchmark version {name!r} (there are: {known}).")
        return name


def safe_file_name(name: str) -> str:
    """The upload's base name with only harmless characters, suffix kept."""
    base = Path(name.replace("\\", "/")).name
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".")
    if f".{safe}".lower() in ARCHIVE_SUFFIXES:
        return f"upload.{safe}"  # ".tar.gz": the name was only its suffix, which the worker reads
    return safe or "upload.tar.gz"


@staff_required
def upload(request: HttpRequest) -> HttpResponse:
    """The form; a valid upload is stored, queued for a worker, and its job's page shown."""
    if request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            archive = form.cleaned_data["archive"]
            job = uploads.create(archive, safe_file_name(archive.name), form.cleaned_data["version"], request.user)
            return redirect("trajectories:upload_job", pk=job.pk)
    else:
        form = UploadForm()
    jobs = UploadJob.objects.select_related("created_by")[:RECENT_JOBS]
    return render(request, "trajectories/upload.html", {"form": form, "jobs": jobs, "nav": "rollouts"})


@staff_required
def upload_job(request: HttpRequest, pk: int) -> HttpResponse:
    """An upload's progress while it runs (the page refreshes itself, or by its link), then its report."""
    job = get_object_or_404(UploadJob, pk=pk)
    return render(request, "trajectories/upload_job.html", {"job": job, "report": job.report, "nav": "rollouts"})
