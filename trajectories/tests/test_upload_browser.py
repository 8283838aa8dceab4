"""An upload's page in a real browser follows its job until it ends, without a reload, under the site's CSP.

Playwright is handed functions, never expression strings: those it would
eval, which the Content-Security-Policy forbids.
"""
from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from trajectories.models import UploadJob

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_job_page_shows_progress_then_the_report(live_server, page):
    staff = User.objects.create_user("staff", password="pw", is_staff=True)
    client = Client()
    client.force_login(staff)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": live_server.url}])
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    job = UploadJob.objects.create(file_name="trials.tar.gz", status="queued", sent=True)
    page.goto(f"{live_server.url}/rollouts/upload/{job.pk}/")
    assert "waiting for a worker" in page.inner_text("#upload-job")
    page.evaluate("() => { window.__notReloaded = true; }")
    UploadJob.objects.filter(pk=job.pk).update(status="importing", phase="importing trials", done=1, total=3)
    page.wait_for_function("() => document.getElementById('upload-job').innerText.includes('1 of 3 trials')", timeout=10_000)
    report = {"source": "trials.tar.gz", "total": 3, "done": 3, "interrupted": False, "errors": [],
              "counts": {"created": 3, "updated": 0, "unchanged": 0, "failed": 0}, "trials": []}
    UploadJob.objects.filter(pk=job.pk).update(status="done", done=3, report=report)
    page.wait_for_function("() => document.getElementById('upload-job').innerText.includes('3 created')", timeout=10_000)
    assert page.evaluate("() => window.__notReloaded") is True
    assert page.get_attribute("#upload-job", "data-active") == "false"
    assert not errors
