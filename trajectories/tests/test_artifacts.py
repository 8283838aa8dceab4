"""trajectories.storing.artifacts: a trial folder in the shared storage, on a folder and on an S3-compatible server."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from trajectories.storing import artifacts

from . import factories
from .trialdata import make_task, make_trial

pytestmark = pytest.mark.django_db


def use_folder(settings, path) -> None:
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(path)}}}


@pytest.fixture
def s3_storage(settings):
    """A real S3 API (moto's server on a local port) behind django-storages, as MinIO would be."""
    pytest.importorskip("storages", reason="django-storages is not installed (pip install '.[s3]')")
    server_module = pytest.importorskip("moto.server", reason="moto[server] is not installed (the dev extra has it)")
    import boto3

    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    credentials = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}
    boto3.client("s3", endpoint_url=endpoint, **credentials).create_bucket(Bucket="autolab-artifacts")
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": "autolab-artifacts", "endpoint_url": endpoint, "addressing_style": "path",
                    "access_key": "test", "secret_key": "test", "region_name": "us-east-1",
                    "default_acl": None, "file_overwrite": True},
    }}
    yield endpoint
    server.stop()


def store_and_serve(tmp_path, settings) -> None:
    trial = make_trial(tmp_path / "trials")
    (trial / "verifier" / "test-stdout.txt").write_text("graded 1.0\n")
    (trial / "agent" / "huge.log").write_bytes(b"a" * 600 + b"b" * 600)
    settings.AUTOLAB_ARTIFACT_FILE_LIMIT = 1000
    (trial / "agent" / "planted").symlink_to("/etc/passwd")
    rollout = factories.make_rollout(trial_name=json.loads((trial / "config.json").read_text())["trial_name"])

    stored = {entry.path: entry for entry in artifacts.store_files(rollout, trial)}

    assert "agent/planted" not in stored  # a link is never followed, nor stored
    assert {"config.json", "result.json", "agent/trajectory.json", "verifier/test-stdout.txt"} <= set(stored)
    assert stored["agent/huge.log"].cut and stored["agent/huge.log"].size == 1200
    client = Client()
    response = client.get(f"/rollouts/{rollout.pk}/files/verifier/test-stdout.txt")
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"graded 1.0\n"
    assert response["Content-Type"] == "text/plain; charset=utf-8" and response["X-Content-Type-Options"] == "nosniff"
    huge = b"".join(client.get(f"/rollouts/{rollout.pk}/files/agent/huge.log").streaming_content)
    assert huge.startswith(b"a" * 500) and huge.endswith(b"b" * 500) and b"cut by autolab-site" in huge
    assert client.get(f"/rollouts/{rollout.pk}/files/agent/planted").status_code == 404
    # A second store of an unchanged folder sends nothing again, and a grown file is sent again.
    (trial / "verifier" / "test-stdout.txt").write_text("graded 1.0\nand more\n")
    artifacts.store_files(rollout, trial)
    assert artifacts.shown_tail(rollout, "verifier/test-stdout.txt", 10) == ("and more\n", True)
    # The list is the Artifacts tab, fetched when opened: the rollout page itself does not carry it.
    assert f"/rollouts/{rollout.pk}/files/agent/huge.log" not in client.get(f"/rollouts/{rollout.pk}/").content.decode()
    listing = client.get(f"/rollouts/{rollout.pk}/tabs/artifacts/", HTTP_X_REQUESTED_WITH="fetch").content.decode()
    assert f"/rollouts/{rollout.pk}/files/agent/huge.log" in listing and "only its head and tail were kept" in listing


def test_a_trial_folder_in_a_storage_folder(tmp_path, settings):
    use_folder(settings, tmp_path / "artifacts")
    store_and_serve(tmp_path, settings)


def test_a_trial_folder_in_an_s3_compatible_bucket(tmp_path, settings, s3_storage):
    store_and_serve(tmp_path, settings)
    import boto3

    keys = [item["Key"] for item in boto3.client(
        "s3", endpoint_url=s3_storage, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1",
    ).list_objects_v2(Bucket="autolab-artifacts")["Contents"]]
    assert any(key.endswith("/verifier/test-stdout.txt") and key.startswith("rollouts/") for key in keys)


def test_the_s3_settings_come_from_the_environment(monkeypatch):
    import subprocess
    import sys

    env = {"AUTOLAB_ARTIFACTS_S3_BUCKET": "autolab-artifacts", "AUTOLAB_ARTIFACTS_S3_ENDPOINT_URL": "http://minio:9000",
           "DJANGO_SETTINGS_MODULE": "autolab_site.settings", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; import json; "
                               "print(json.dumps(settings.STORAGES['artifacts']))"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    config = json.loads(done.stdout.strip().splitlines()[-1])
    assert config["BACKEND"] == "storages.backends.s3.S3Storage"
    assert config["OPTIONS"]["bucket_name"] == "autolab-artifacts"
    assert config["OPTIONS"]["endpoint_url"] == "http://minio:9000" and config["OPTIONS"]["addressing_style"] == "path"


def test_an_import_with_store_files_stores_and_serves_no_hard_link(tmp_path, settings):
    """Hard links to files outside the folder (the site's secret key, say) are neither stored nor served (issue 43)."""
    import io
    import os

    from django.core.management import call_command

    from trajectories.models import Rollout

    use_folder(settings, tmp_path / "artifacts")
    secret = tmp_path / "site" / "secret_key"
    secret.parent.mkdir()
    secret.write_text("the site's secret key")
    make_task("demo_task")
    trial = make_trial(tmp_path / "trials")
    os.link(secret, trial / "agent" / "secret_key")
    (trial / "verifier" / "test-stdout.txt").unlink()
    os.link(secret, trial / "verifier" / "test-stdout.txt")

    call_command("import_trials", str(tmp_path / "trials"), "--store-files", stdout=io.StringIO())

    rollout = Rollout.objects.get()
    stored = {entry["path"] for entry in rollout.artifacts}
    assert "agent/trajectory.json" in stored
    assert not stored & {"agent/secret_key", "verifier/test-stdout.txt"}, stored
    assert "secret key" not in rollout.verifier_stdout
    assert {w.split(":")[0] for w in rollout.validation_warnings if "hard link" in w} == {
        "agent/secret_key", "verifier/test-stdout.txt"}
    for path in ("agent/secret_key", "verifier/test-stdout.txt"):
        assert Client().get(f"/rollouts/{rollout.pk}/files/{path}").status_code == 404


def test_what_is_shown_of_a_file_cut_short_ends_at_a_whole_line(tmp_path, settings):
    """A head or a tail read from a longer file shows whole lines only: a cut line could hold the start (or
    the end) of a key the rule cannot recognise in part."""
    use_folder(settings, tmp_path / "artifacts")
    trial = make_trial(tmp_path / "trials")
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    (trial / "agent" / "keys.log").write_text(f"first line\nthe key {key}\nlast line\n")
    rollout = factories.make_rollout(trial_name=trial.name)
    artifacts.store_files(rollout, trial)
    rollout.refresh_from_db()
    cut_inside_the_key = len("first line\nthe key sk-proj-abc")
    assert artifacts.shown_head(rollout, "agent/keys.log", cut_inside_the_key) == ("first line\n", len("first line\n"))
    assert artifacts.shown_tail(rollout, "agent/keys.log", len("uvwxyz0123\nlast line\n")) == ("last line\n", True)
    assert artifacts.shown_head(rollout, "agent/keys.log", 1000)[0] == "first line\nthe key ********\nlast line\n"
