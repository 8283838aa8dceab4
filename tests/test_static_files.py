"""Static files: the vendored chart bundle, and collected files served compressed and cached for good."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from django.core.management import call_command

VENDOR = Path(__file__).resolve().parent.parent / "static" / "vendor"


def test_the_chart_bundle_is_the_partial_build_with_its_licence():
    bundle = (VENDOR / "plotly-basic.min.js").read_bytes()
    version = re.search(rb"plotly\.js \(basic - minified\) v([\d.]+)", bundle[:300]).group(1).decode()
    assert len(bundle) < 1_300_000  # the full plotly.min.js is 4.8 MB
    assert "MIT License" in (VENDOR / "plotly-basic.LICENSE.txt").read_text()
    record = (VENDOR / "plotly-basic.VERSION.txt").read_text()
    assert f"plotly.js-basic-dist-min {version}" in record
    assert hashlib.sha256(bundle).hexdigest() in record  # what scripts/vendor-plotly.sh wrote


@pytest.mark.django_db
def test_collected_files_are_hashed_compressed_and_cached_for_good(tmp_path, settings, client):
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "autolab_site.storage.StaticStorage"}}
    call_command("collectstatic", "--noinput", verbosity=0)
    from django.templatetags.static import static

    url = static("vendor/plotly-basic.min.js")
    assert re.fullmatch(r"/static/vendor/plotly-basic\.min\.[0-9a-f]{12}\.js", url), url
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert int(response["Content-Length"]) < 450_000
    assert "max-age=315360000" in response["Cache-Control"] and "immutable" in response["Cache-Control"]
    # Pages name the hashed files.
    html = client.get("/tasks/").content.decode()
    assert re.search(r'href="/static/css/site\.[0-9a-f]{12}\.css"', html)


def test_without_collectstatic_pages_name_files_plainly(tmp_path, settings):
    settings.STATIC_ROOT = tmp_path  # nothing collected there
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "autolab_site.storage.StaticStorage"}}
    from django.templatetags.static import static

    assert static("js/charts.js") == "/static/js/charts.js"


@pytest.mark.django_db
def test_every_page_has_an_icon_and_favicon_ico_leads_to_it(client):
    """/favicon.ico was a 404 on every page."""
    page = client.get("/").content.decode()
    assert '<link rel="icon" href="/static/img/favicon.svg"' in page
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/img/favicon.svg"
    assert client.get("/static/img/favicon.svg").status_code == 200
