"""The staff-only archive upload form at /rollouts/upload/."""
from __future__ import annotations

import io
import tarfile

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from trajectories.models import Rollout
from trajectories.upload_views import safe_file_name

from .trialdata import make_task, make_trial

pytestmark = pytest.mark.django_db
URL = "/rollouts/upload/"


@pytest.fixture
def staff_client(client):
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(user)
    return client


def tarball(folder, name="trials.tar.gz", extra=None) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        if folder is not None:
            tar.add(folder, arcname=folder.name)
        if extra:
            info = tarfile.TarInfo(extra)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/gzip")


def test_url_name():
    assert reverse("trajectories:upload") == URL


def test_anonymous_is_sent_to_login(client):
    response = client.get(URL)
    assert response.status_code == 302 and "login" in response["Location"]


def test_non_staff_is_sent_to_login(client):
    client.force_login(User.objects.create_user("someone", password="pw"))
    response = client.post(URL, {})
    assert response.status_code == 302
    assert not Rollout.objects.exists()


def test_form_shows(staff_client):
    response = staff_client.get(URL)
    assert response.status_code == 200
    assert b'enctype="multipart/form-data"' in response.content


def test_upload_imports_and_reports(staff_client, tmp_path):
    make_task("demo_task")
    folder = make_trial(tmp_path, "lib__demo_task__up1", reward={"reward": 0.0, "reason": "no_lora_file"})
    response = staff_client.post(URL, {"archive": tarball(folder)})
    assert response.status_code == 200
    rollout = Rollout.objects.get()
    assert rollout.source_path == "trials.tar.gz:lib__demo_task__up1"
    text = response.content.decode()
    assert "1 created" in text and "lib__demo_task__up1" in text and "reason=no_lora_file" in text
    assert reverse("trajectories:rollout_detail", args=[rollout.pk]) in text

    response = staff_client.post(URL, {"archive": tarball(folder)})
    assert "1 unchanged" in response.content.decode()
    assert Rollout.objects.count() == 1


def test_upload_with_unknown_task_reports_it(staff_client, tmp_path):
    folder = make_trial(tmp_path, "lib__nope__1", task_name="lib__nope")
    response = staff_client.post(URL, {"archive": tarball(folder)})
    assert response.status_code == 400
    assert "no registered task matches" in response.content.decode()


def test_evil_archive_is_refused(staff_client, tmp_path):
    response = staff_client.post(URL, {"archive": tarball(None, extra="../../escape.txt")})
    assert response.status_code == 400
    assert "leaving the archive" in response.content.decode()
    assert not Rollout.objects.exists()


def test_not_an_archive_is_a_form_error(staff_client):
    response = staff_client.post(URL, {"archive": SimpleUploadedFile("notes.txt", b"hello")})
    assert response.status_code == 200
    assert "Not a supported archive" in response.content.decode()


def test_archive_over_the_size_limit_is_a_form_error(staff_client, settings):
    settings.AUTOLAB_ARCHIVE_MAX_BYTES = 10
    response = staff_client.post(URL, {"archive": SimpleUploadedFile("big.zip", b"x" * 11)})
    assert response.status_code == 200 and "larger than the limit" in response.content.decode()


def test_safe_file_name():
    assert safe_file_name("../../etc/passwd.tar.gz") == "passwd.tar.gz"
    assert safe_file_name("C:\\Users\\me\\my trials.zip") == "my_trials.zip"
    assert safe_file_name("..") == "upload.tar.gz"
