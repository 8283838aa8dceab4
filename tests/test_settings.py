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
        "'debug': settings.DEBUG, 'hosts': settings.ALLOWED_HOSTS, 'secret_key': settings.SECRET_KEY,"
        "'session_cookie_secure': settings.SESSION_COOKIE_SECURE, 'csrf_cookie_secure': settings.CSRF_COOKIE_SECURE,"
        "'hsts': settings.SECURE_HSTS_SECONDS, 'proxy_ssl_header': settings.SECURE_PROXY_SSL_HEADER}))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=environment(env), cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


SETTINGS_VARIABLES = {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "ALLOWED_HOSTS", "SECRET_KEY", "AUTOLAB_HTTPS"}


def environment(env: dict[str, str]) -> dict[str, str]:
    """This process's environment without the settings' switches, plus `env`."""
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    clean["DJANGO_SETTINGS_MODULE"] = "autolab_site.settings"
    return {**clean, **env}


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
    for label in ("Leaderboard", "Tasks", "Rollouts", "Failures"):
        assert f">{label}</a>" in body
    assert ">Admin</a>" not in body  # staff only (tests/test_words_shown.py)
    assert "cdn" not in body.lower()


def test_no_environment_generates_a_private_secret_key_once(tmp_path):
    first = settings_under({"AUTOLAB_DATA_DIR": str(tmp_path)})
    key_file = tmp_path / "secret_key"
    assert key_file.is_file()
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert first["secret_key"] == key_file.read_text().strip()
    assert len(first["secret_key"]) >= 50 and "insecure" not in first["secret_key"]
    # The same key on the next start (sessions survive a restart); another data directory, another key.
    assert settings_under({"AUTOLAB_DATA_DIR": str(tmp_path)})["secret_key"] == first["secret_key"]
    assert settings_under({"AUTOLAB_DATA_DIR": str(tmp_path / "other")})["secret_key"] != first["secret_key"]


def test_a_key_file_others_can_read_is_made_private(tmp_path):
    (tmp_path / "secret_key").write_text("k" * 60)
    (tmp_path / "secret_key").chmod(0o644)
    assert settings_under({"AUTOLAB_DATA_DIR": str(tmp_path)})["secret_key"] == "k" * 60
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


def test_the_environments_secret_key_wins_and_writes_no_file(tmp_path):
    s = settings_under({"AUTOLAB_DATA_DIR": str(tmp_path), "SECRET_KEY": "s" * 60, "ALLOWED_HOSTS": "example.org"})
    assert s["secret_key"] == "s" * 60
    assert not (tmp_path / "secret_key").exists()


def test_a_public_host_without_secret_key_refuses_to_start(tmp_path):
    env = environment({"AUTOLAB_DATA_DIR": str(tmp_path), "ALLOWED_HOSTS": "leaderboard.example.org"})
    result = subprocess.run([sys.executable, "manage.py", "check"], env=env, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr and "leaderboard.example.org" in result.stderr
    assert not (tmp_path / "secret_key").exists()
    # DEBUG (a developer's machine) may still use a generated key.
    assert settings_under({"AUTOLAB_DATA_DIR": str(tmp_path), "ALLOWED_HOSTS": "*", "DEBUG": "true"})["secret_key"]


def test_default_allowed_hosts_are_this_machine_only(tmp_path):
    assert settings_under({"AUTOLAB_DATA_DIR": str(tmp_path)})["hosts"] == ["127.0.0.1", "localhost", "[::1]"]


def test_autolab_https_turns_on_secure_cookies_hsts_and_the_proxy_header(tmp_path):
    plain = settings_under({"AUTOLAB_DATA_DIR": str(tmp_path)})
    assert (plain["session_cookie_secure"], plain["hsts"], plain["proxy_ssl_header"]) == (False, 0, None)
    s = settings_under({"AUTOLAB_DATA_DIR": str(tmp_path), "AUTOLAB_HTTPS": "true", "SECRET_KEY": "x" * 60})
    assert s["session_cookie_secure"] and s["csrf_cookie_secure"]
    assert s["hsts"] >= 365 * 24 * 3600
    assert s["proxy_ssl_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_check_deploy_is_clean_for_the_documented_production_configuration(tmp_path):
    """docker-compose's production example: a real key, public hosts, AUTOLAB_HTTPS=true."""
    env = environment(
        {
            "AUTOLAB_DATA_DIR": str(tmp_path),
            "SECRET_KEY": "4f0c3e0b9d2a7c1e8b6f5a4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "ALLOWED_HOSTS": "leaderboard.example.org",
            "AUTOLAB_HTTPS": "true",
        }
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env, cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_compose_production_example_sets_autolab_https():
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "AUTOLAB_HTTPS:" in compose


def test_the_admins_login_with_a_refused_next_lands_on_the_leaderboard(client, django_user_model):
    """The admin keeps its own login (staff only); the site's is tests/test_login.py's."""
    django_user_model.objects.create_user("staff", password="pw-long-enough", is_staff=True)
    response = client.post(
        "/admin/login/?next=https://evil.example/steal",
        {"username": "staff", "password": "pw-long-enough", "next": "https://evil.example/steal"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
