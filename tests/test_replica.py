"""Pages read from a read replica when one is configured; writes, transactions and a client that just wrote use the primary."""
from __future__ import annotations

import pytest
from django.db import transaction
from django.http import HttpResponse
from django.test import RequestFactory

from autolab_site import replica


@pytest.mark.parametrize(
    ("method", "cookies", "now", "expected"),
    [
        ("GET", {}, 1000.0, True),
        ("HEAD", {}, 1000.0, True),
        ("POST", {}, 1000.0, False),
        ("PUT", {}, 1000.0, False),
        ("GET", {replica.COOKIE: "995.0"}, 1000.0, False),  # wrote 5 s ago: its own change must show
        ("GET", {replica.COOKIE: "989.0"}, 1000.0, True),
        ("GET", {replica.COOKIE: "not a time"}, 1000.0, True),
    ],
)
def test_which_requests_read_the_replica(method, cookies, now, expected):
    assert replica.reads_replica(method, cookies, now) is expected


@pytest.fixture
def with_replica(settings):
    settings.DATABASES = {**settings.DATABASES, replica.REPLICA: {**settings.DATABASES["default"]}}


def aliases_seen(method: str, cookies: dict | None = None) -> tuple[str, object]:
    """The alias a view's reads go to, and the response, through the middleware."""
    seen = []

    def view(request):
        seen.append(replica.read_alias())
        with transaction.atomic():
            seen.append(replica.read_alias())
        return HttpResponse("ok")

    request = getattr(RequestFactory(), method.lower())("/")
    request.COOKIES.update(cookies or {})
    response = replica.ReplicaReadsMiddleware(view)(request)
    return seen, response


@pytest.mark.django_db(transaction=True)
def test_a_page_reads_the_replica_outside_transactions(with_replica):
    seen, response = aliases_seen("GET")
    assert seen == [replica.REPLICA, "default"]
    assert replica.COOKIE not in response.cookies
    # After the request, nothing is marked: a worker's or a command's reads go to the primary.
    assert replica.read_alias() == "default"


@pytest.mark.django_db(transaction=True)
def test_a_write_marks_the_client_for_the_primary(with_replica):
    seen, response = aliases_seen("POST")
    assert seen == ["default", "default"]
    wrote = response.cookies[replica.COOKIE].value
    seen, _ = aliases_seen("GET", {replica.COOKIE: wrote})
    assert seen == ["default", "default"]


@pytest.mark.django_db(transaction=True)
def test_without_a_replica_everything_reads_the_primary():
    seen, response = aliases_seen("GET")
    assert seen == ["default", "default"]


def test_the_router_writes_and_migrates_on_the_primary():
    router = replica.ReplicaRouter()
    assert router.db_for_write(None) == "default"
    assert router.allow_migrate("default", "trajectories") and not router.allow_migrate(replica.REPLICA, "trajectories")
