"""Staff upload of an archive of Harbor trials, imported on the spot."""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import user_passes_test
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .archives import ARCHIVE_SUFFIXES, is_archive, limits
from .services import import_path


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
        return upload


def _is_staff(user) -> bool:
    return user.is_active and user.is_staff


def safe_file_name(name: str) -> str:
    """The upload's base name with only harmless characters, suffix kept."""
    base = Path(name.replace("\\", "/")).name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".") or "upload.tar.gz"


@user_passes_test(_is_staff)
def upload(request: HttpRequest) -> HttpResponse:
    report = None
    if request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            report = _import_upload(form.cleaned_data["archive"], form.cleaned_data["version"] or None)
    else:
        form = UploadForm()
    status = 400 if report is not None and not report.ok else 200
    return render(request, "trajectories/upload.html", {"form": form, "report": report, "nav": "rollouts"}, status=status)


def _import_upload(upload, version: str | None):
    """Save the upload under its own name in a private folder, import, delete."""
    settings.UPLOADS_DIR.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="upload-", dir=settings.UPLOADS_DIR))
    try:
        target = folder / safe_file_name(upload.name)
        with open(target, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        return import_path(target, version=version)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
