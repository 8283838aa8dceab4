"""The embedded default and the environment switches of settings."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def settings_under(env: dict[str, str]) -> dict:
    code = (
        "import json, django; from django.conf import settings; django.setup();"
        "print(json.dumps({'engine': settings.DATABASES['default']['ENGINE'],"
        "'name': str(settings.DATABASES['default']['NAME']), 'broker': settings.CELERY_BROKER_URL,"
        "'debug': settings.DEBUG, 'hosts': settings.ALLOWED_HOSTS}))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "ALLOWED_HOSTS"}}
    clean["DJANGO_SETTINGS_MODULE"] = "autolab_site.settings"
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_no_environment_means_sqlite_and_filesystem_broker(tmp_path):
    s = settings_under({"AUTOLAB_DATA_DIR": str(tmp_path)})
    assert s["engine"] == "django.db.backends.sqlite3"
    assert s["name"] == str(tmp_path / "db.sqlite3")
    assert s["broker"] == "filesystem://"
    assert s["debug"] is False
    assert (tmp_path / "celery" / "queue").is_dir()


def test_database_url_selects_postgresql_and_broker_url_selects_redis(tmp_path):
    s = settings_under(
        {
            "AUTOLAB_DATA_DIR": str(tmp_path),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/autolab_site",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
            "DEBUG": "true",
            "ALLOWED_HOSTS": "example.org,www.example.org",
        }
    )
    assert s["engine"] == "django.db.backends.postgresql"
    assert s["name"] == "autolab_site"
    assert s["broker"] == "redis://127.0.0.1:6379/0"
    assert s["debug"] is True
    assert s["hosts"] == ["example.org", "www.example.org"]


def test_plotly_is_served_from_our_static_files(client):
    response = client.get("/static/vendor/plotly-basic.min.js")
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"plotly.js (basic - minified)" in body[:2000]


def test_pages_have_navigation(client, db):
    body = client.get("/tasks/").content.decode()
    for label in ("Leaderboard", "Tasks", "Rollouts", "Failures", "Admin"):
        assert f">{label}</a>" in body
    assert "cdn" not in body.lower()
