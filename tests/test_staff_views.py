"""One staff check, one behaviour, on every staff URL: anonymous -> the login page, logged in but not staff -> 403.

The staff URLs are found by walking the resolver for views wrapped in
`autolab_site.staff.staff_required`, and compared with the table below: a
staff view that loses its decorator, or a new one, fails here until the
table says so. A second check of `is_staff` written in Python elsewhere
fails too: it would be a second rule that could drift from the first.
"""
from __future__ import annotations

import ast
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from autolab_site.staff import staff_required
from evaluations.models import Campaign
from submissions.models import Submission, Team
from trajectories.models import UploadJob
from trajectories.tests import factories

from .url_patterns import url_patterns

ROOT = Path(__file__).resolve().parent.parent

# Every staff-only URL of the site, and the object its path names.
STAFF_URLS = {
    "evaluations:import_results": None,
    "evaluations:campaign_new": None,
    "evaluations:campaign_cancel": "campaign",
    "evaluations:rollout_cancel": "rollout",
    "trajectories:upload": None,
    "trajectories:upload_job": "upload",
    "trajectories:failure_label": "rollout",
    "evaluations:regrade_rollout": "rollout",
    "evaluations:regrade_campaign": "campaign",
    "evaluations:regrade_task": "task",
    "trajectories:analyze": None,
    "submissions:regrade": "submission",
    "submissions:verify": "submission",
    "submissions:self_report": "submission",
    "submissions:publish": "submission",
    "submissions:reject": "submission",
}


def staff_url_names() -> set[str]:
    return {name for name, pattern in url_patterns() if getattr(pattern.callback, "staff_required", False)}


def test_the_staff_urls_are_the_table():
    assert staff_url_names() == set(STAFF_URLS)


@pytest.fixture
def urls(db) -> dict[str, str]:
    rollout = factories.make_rollout(status="finished")
    objects = {
        "rollout": rollout,
        "campaign": Campaign.objects.create(model=rollout.model, harness=rollout.harness, version=rollout.task.version),
        "upload": UploadJob.objects.create(file_name="trials.tar.gz"),
        "task": rollout.task,
        "submission": Submission.objects.create(
            team=Team.objects.create(name="A team"), version=rollout.task.version, model_name="m", harness_name="h",
            contact="c", file_name="job.tar.gz",
        ),
    }
    return {
        name: reverse(name, args=[objects[kind].pk] if kind else [])
        for name, kind in STAFF_URLS.items()
    }


def logged_in(**fields) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user(fields.pop("username"), password="pw", **fields))
    return client


@pytest.mark.parametrize("name", sorted(STAFF_URLS))
@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_is_sent_to_the_login_page(urls, name, method):
    url = urls[name]
    response = getattr(Client(), method)(url)
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert (location.path, parse_qs(location.query)) == (reverse("login"), {"next": [url]})


@pytest.mark.parametrize("name", sorted(STAFF_URLS))
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_visitor_who_is_not_staff_gets_403(urls, name, method):
    response = getattr(logged_in(username="visitor"), method)(urls[name])
    assert response.status_code == 403
    # The site's own page, not a bare word.
    assert '<nav aria-label="Main">' in response.content.decode()


@pytest.mark.parametrize("name", sorted(STAFF_URLS))
def test_staff_get_through(urls, name):
    client = logged_in(username="staff", is_staff=True)
    for method in ("get", "post"):
        response = getattr(client, method)(urls[name])
        # A POST-only action answers its GET with 405: past the check either way.
        assert response.status_code not in (401, 403), (method, response.status_code)
        assert not response.get("Location", "").startswith(reverse("login"))


def view(request):
    return HttpResponse("done")


@pytest.mark.parametrize(
    "user, expected",
    [
        (AnonymousUser(), 302),
        (get_user_model()(username="visitor", is_active=True, is_staff=False), 403),
        # An inactive account cannot log in through the site; were it logged in, it would still be nobody's.
        (get_user_model()(username="gone", is_active=False, is_staff=True), 403),
        (get_user_model()(username="staff", is_active=True, is_staff=True), 200),
    ],
    ids=["anonymous", "not staff", "inactive staff", "staff"],
)
def test_the_decorator_alone(user, expected):
    from django.core.exceptions import PermissionDenied

    request = RequestFactory().get("/somewhere/?a=1")
    request.user = user
    try:
        status = staff_required(view)(request).status_code
    except PermissionDenied:
        status = 403
    assert status == expected


# Python files that are the project's code: not its tests, migrations or virtualenv.
def code_files() -> list[Path]:
    skipped = {".venv", "tests", "migrations", "node_modules", "staticfiles", "data", ".git"}
    return [
        path for path in ROOT.rglob("*.py")
        if not skipped & set(path.relative_to(ROOT).parts) and path.name != "conftest.py"
    ]


# Other ways of writing a staff check: each would be a second rule.
OTHER_GATES = {"staff_member_required", "user_passes_test", "permission_required"}


def second_staff_checks(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source, filename=where)):
        if isinstance(node, ast.Attribute) and node.attr == "is_staff" and isinstance(node.ctx, ast.Load):
            found.append(f"{where}:{node.lineno} reads .is_staff")
        elif isinstance(node, ast.Name) and node.id in OTHER_GATES:
            found.append(f"{where}:{node.lineno} uses {node.id}")
        elif isinstance(node, ast.alias) and node.name in OTHER_GATES:
            found.append(f"{where}:{node.lineno} imports {node.name}")
    return found


def test_is_staff_is_checked_in_one_module():
    owner = ROOT / "autolab_site" / "staff.py"
    files = code_files()
    assert owner in files and len(files) > 100
    found = [
        line for path in files if path != owner
        for line in second_staff_checks(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert found == [], "the staff check is autolab_site.staff's (templates may still show links by user.is_staff)"


def test_the_scan_sees_a_second_check():
    source = (
        "from django.contrib.admin.views.decorators import staff_member_required\n"
        "def v(request):\n    return request.user.is_staff\n"
        "def w(user):\n    user.is_staff = True  # setting it is no check\n"
    )
    assert second_staff_checks(source, "views.py") == [
        "views.py:1 imports staff_member_required", "views.py:3 reads .is_staff",
    ]
