"""The staff-only archive upload form at /rollouts/upload/ and an upload's page.

Uploads are imported by a Celery task: most tests run it eagerly (inside
the request, as a worker would run it), the first one as a worker does,
after the request has ended.
"""
from __future__ import annotations

import io
import os
import socket
import tarfile
import zipfile

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from autolab_site.celery import app
from trajectories import services
from trajectories.models import Rollout, UploadJob
from trajectories.upload_views import safe_file_name

from .trialdata import make_task, make_trial

pytestmark = pytest.mark.django_db
URL = "/rollouts/upload/"


@pytest.fixture(autouse=True)
def uploads_dir(settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    return settings.UPLOADS_DIR


@pytest.fixture
def eager():
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


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


def test_non_staff_is_refused(client):
    client.force_login(User.objects.create_user("someone", password="pw"))
    response = client.post(URL, {})
    assert response.status_code == 403
    assert not Rollout.objects.exists()


def test_form_shows(staff_client):
    response = staff_client.get(URL)
    assert response.status_code == 200
    assert b'enctype="multipart/form-data"' in response.content


def test_an_upload_is_stored_and_queued_and_imported_by_the_task(staff_client, tmp_path, uploads_dir):
    make_task("demo_task")
    folder = make_trial(tmp_path, "lib__demo_task__up1", reward={"reward": 0.0, "reason": "no_lora_file"})
    response = staff_client.post(URL, {"archive": tarball(folder)})
    job = UploadJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("trajectories:upload_job", args=[job.pk])
    # The request imported nothing: a worker will.
    assert not Rollout.objects.exists()
    assert job.status == "queued" and job.sent and job.file_name == "trials.tar.gz"
    page = staff_client.get(response["Location"]).content.decode()
    assert "waiting for a worker" in page
    assert f'href="{response["Location"]}" class="refresh">Refresh</a>' in page
    assert "js/upload.js" in page and "<script>" not in page
    assert services.run_upload(job.pk) == "done"
    assert services.run_upload(job.pk) == "skipped"  # a message delivered twice imports once
    rollout = Rollout.objects.get()
    assert rollout.source_path == "trials.tar.gz:lib__demo_task__up1"
    page = staff_client.get(response["Location"]).content.decode()
    assert "1 created" in page and "lib__demo_task__up1" in page and "reason=no_lora_file" in page
    assert reverse("trajectories:rollout_detail", args=[rollout.pk]) in page
    assert "Refresh" not in page and "upload.js" not in page
    assert list(uploads_dir.iterdir()) == []  # the stored archive and its extraction are gone
    assert f"#{job.pk}" in staff_client.get(URL).content.decode()


def test_upload_imports_and_reports(staff_client, tmp_path, eager):
    make_task("demo_task")
    folder = make_trial(tmp_path, "lib__demo_task__up1", reward={"reward": 0.0, "reason": "no_lora_file"})
    response = staff_client.post(URL, {"archive": tarball(folder)}, follow=True)
    assert response.status_code == 200
    assert "1 created" in response.content.decode()
    response = staff_client.post(URL, {"archive": tarball(folder)}, follow=True)
    assert "1 unchanged" in response.content.decode()
    assert Rollout.objects.count() == 1


def test_upload_with_unknown_task_reports_it(staff_client, tmp_path, eager):
    folder = make_trial(tmp_path, "lib__nope__1", task_name="lib__nope")
    response = staff_client.post(URL, {"archive": tarball(folder)}, follow=True)
    assert response.status_code == 200
    assert "no registered task matches" in response.content.decode()
    assert UploadJob.objects.get().report["counts"]["failed"] == 1


def test_evil_archive_is_refused(staff_client, tmp_path, eager):
    response = staff_client.post(URL, {"archive": tarball(None, extra="../../escape.txt")}, follow=True)
    assert "leaving the archive" in response.content.decode()
    assert UploadJob.objects.get().status == "failed"
    assert not Rollout.objects.exists()


def test_a_zip_bomb_is_refused_before_anything_is_extracted(staff_client, tmp_path, eager, settings, uploads_dir):
    settings.AUTOLAB_ARCHIVE_MAX_BYTES = 4 << 20
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        with zipped.open("job/trial/agent/trajectory.json", "w", force_zip64=True) as member:
            for _ in range(16):
                member.write(b"\0" * (1 << 20))
    response = staff_client.post(URL, {"archive": SimpleUploadedFile("bomb.zip", buffer.getvalue())}, follow=True)
    text = response.content.decode()
    assert "declares 16777216 bytes uncompressed, over the limit of 4194304" in text
    assert UploadJob.objects.get().status == "failed"
    assert list(uploads_dir.iterdir()) == []


def test_the_sweep_removes_leftovers_and_fails_imports_whose_worker_died(uploads_dir):
    host = socket.gethostname()
    ended = UploadJob.objects.create(file_name="a.tar", status="done")
    dead = UploadJob.objects.create(file_name="b.tar", status="importing", worker=f"999999999@{host}")
    running = UploadJob.objects.create(file_name="c.tar", status="importing", worker=f"{os.getpid()}@{host}")
    for job in (ended, dead, running):
        (uploads_dir / f"job-{job.pk}").mkdir(parents=True)
    (uploads_dir / f"extract-999999999@{host}~abc").mkdir()
    (uploads_dir / f"extract-{os.getpid()}@{host}~def").mkdir()
    (uploads_dir / f"extract-999999999@elsewhere~ghi").mkdir()
    swept = services.sweep_uploads(enqueue=False)
    assert sorted(os.path.basename(path) for path in swept) == sorted(
        [f"job-{ended.pk}", f"extract-999999999@{host}~abc"]
    )
    assert sorted(p.name for p in uploads_dir.iterdir()) == sorted(
        [f"job-{running.pk}", f"extract-{os.getpid()}@{host}~def", "extract-999999999@elsewhere~ghi"]
    )
    dead.refresh_from_db()
    assert dead.status == "failed" and "worker process ended" in dead.error
    running.refresh_from_db()
    assert running.status == "importing"


def test_a_job_whose_message_was_never_sent_is_sent_by_the_sweep(staff_client, tmp_path, eager):
    make_task("demo_task")
    folder = make_trial(tmp_path, "lib__demo_task__up2")
    job = UploadJob.objects.create(file_name="trials.tar.gz", status="queued", sent=False)
    target = tmp_path / "uploads" / f"job-{job.pk}"
    target.mkdir(parents=True)
    (target / "trials.tar.gz").write_bytes(tarball(folder).read())
    services.sweep_uploads()
    job.refresh_from_db()
    assert job.status == "done" and Rollout.objects.count() == 1


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


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("fake.zip", b"hello", "fake.zip is not a zip archive"),
        ("fake.tar.gz", b"hello", "fake.tar.gz is not a tar archive"),
        ("fake.tgz", b"PK\x03\x04" + b"\0" * 100, "fake.tgz is not a tar archive"),
        ("fake.tgz", b"\x1f\x8b\x08\x00" + b"\0" * 20, "fake.tgz is not a tar archive"),
        ("fake.tar", b"hello" * 200, "fake.tar is not a tar archive"),
    ],
)
def test_a_file_that_is_not_the_archive_its_name_says_is_a_form_error(staff_client, name, content, problem):
    """A staff QA pass's fake.zip was accepted, stored and queued; only the worker said what was wrong."""
    response = staff_client.post(URL, {"archive": SimpleUploadedFile(name, content)})
    assert response.status_code == 200
    assert problem in response.content.decode()
    assert not UploadJob.objects.exists()


def test_an_unknown_version_is_a_form_error(staff_client, tmp_path):
    make_task("hash_join", "1.1")
    folder = make_trial(tmp_path, "lib__hash_join__1", task_name="lib__hash_join")
    response = staff_client.post(URL, {"archive": tarball(folder), "version": "nonexistent-version"})
    assert response.status_code == 200
    assert "No benchmark version &#x27;nonexistent-version&#x27; (there are: 1.1)" in response.content.decode()
    assert not UploadJob.objects.exists()


def test_a_name_that_is_only_a_suffix_keeps_it():
    assert safe_file_name(".tar.gz") == "upload.tar.gz"
    assert safe_file_name("...zip") == "upload.zip"
