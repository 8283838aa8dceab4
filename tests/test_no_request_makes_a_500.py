"""No request answers 500: generated strings in every URL pattern's path and query parameters.

The URL patterns come from walking the resolver (a new view is covered
without editing this file); each is requested with generated values for its
path parameters and for the query parameters the site's views read, as an
anonymous visitor and as staff. Meant for PostgreSQL, which refuses NUL
characters in text (SQLite takes them); it runs on both.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, reverse
from django.urls.exceptions import NoReverseMatch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluations.models import Campaign
from trajectories.tests import factories

from .url_patterns import url_patterns

pytestmark = pytest.mark.django_db

# Every query parameter some view reads (request.GET and the filter forms), plus a few no view knows.
QUERY_NAMES = [
    "a", "b", "category", "focus", "format", "hardware", "harness", "kind", "model", "only", "open_weight",
    "order", "page", "page_size", "position", "q", "sort", "step", "sub", "task", "version", "window",
    "cause", "outcome", "flag", "status", "min", "max", "next", "e", "o", "p",
]
NASTY = [
    "\x00", "a\x00b", "%00", "%", "'", "\\", "\"", "--", "-1", "0", "1.1", "1e309", "nan", "99999999999999999999",
    "\x1b[31m", "\u202e", "\ufeff", " ", "", "..", "../../etc/passwd", "🙂", "\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
    "a" * 5000, "cat:", "cat:x:best", "-cat:", "sort", "step-1",
]
values = st.one_of(st.sampled_from(NASTY), st.text(max_size=40), st.integers(-(10**20), 10**20).map(str))
query = st.dictionaries(st.sampled_from(QUERY_NAMES), values, max_size=4)


def path_strategy(pattern: URLPattern, ids: list[int]):
    """Generated keyword arguments for one pattern's converters."""
    converters = getattr(pattern.pattern, "converters", {})
    kwargs = {}
    for name, converter in converters.items():
        kind = type(converter).__name__
        if kind == "IntConverter":
            kwargs[name] = st.one_of(st.sampled_from(ids), st.integers(0, 10**20))
        else:
            kwargs[name] = values.filter(lambda v: v and (kind == "PathConverter" or "/" not in v))
    return st.fixed_dictionaries(kwargs)


OUR_PATTERNS = [(n, p) for n, p in url_patterns() if not n.startswith("admin:")]
ADMIN_PATTERNS = [(n, p) for n, p in url_patterns() if n.startswith("admin:")]


@pytest.fixture
def site(db):
    """A rollout with steps, its task, model and version, a campaign, and a staff user."""
    rollout = factories.make_explored_rollout()
    campaign = Campaign.objects.create(model=rollout.model, harness=rollout.harness, version=rollout.task.version)
    staff = get_user_model().objects.create_user("staff", password="pw", is_staff=True, is_superuser=True)
    ids = sorted({rollout.pk, campaign.pk, rollout.task_id, rollout.model_id, 1, 0})
    return {"ids": ids, "rollout": rollout.pk, "staff": staff, "names": [rollout.task.name, rollout.model.name, rollout.task.version.name]}


def clients(staff) -> list[Client]:
    anonymous = Client(raise_request_exception=True)
    logged_in = Client(raise_request_exception=True)
    logged_in.force_login(staff)
    return [anonymous, logged_in]


def request_all(client: Client, name: str, kwargs: dict, params: dict) -> None:
    try:
        url = reverse(name, kwargs=kwargs)
    except NoReverseMatch:
        return  # a value the pattern's converter refuses is no request of this pattern
    response = client.get(url, params)
    assert response.status_code < 500, (url, params, response.status_code)


@pytest.mark.parametrize("name,pattern", OUR_PATTERNS, ids=[n for n, _ in OUR_PATTERNS])
def test_generated_parameters_never_make_a_500(site, name, pattern):
    http = clients(site["staff"])

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(kwargs=path_strategy(pattern, site["ids"]), params=query, as_staff=st.booleans())
    def check(kwargs, params, as_staff):
        request_all(http[as_staff], name, kwargs, params)

    check()


def test_generated_parameters_on_the_admin_never_make_a_500(site):
    http = clients(site["staff"])

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(data=st.data(), params=query)
    def check(data, params):
        name, pattern = data.draw(st.sampled_from(ADMIN_PATTERNS))
        request_all(http[1], name, data.draw(path_strategy(pattern, site["ids"])), params)

    check()


@pytest.mark.parametrize(
    "url",
    [
        "/?version=%00", "/?category=a%00", "/heatmap/?harness=%00&version=%00", "/rollouts/?q=%00&task=%00&model=%00",
        "/failures/?model=%00", "/failures/export.csv?task=%00", "/tasks/?version=%00", "/api/v1/rollouts/?model=%00",
        "/api/v1/rollouts.csv?version=%00", "/api/v1/leaderboard/?version=%00", "/search/?q=%00",
        "/models/%00/", "/tasks/1.1/%00/", "/rollouts/?%00=1",
    ],
)
def test_a_nul_character_is_a_400(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert b"NUL" in response.content
    if url.startswith("/api/"):
        assert response.json()["error"].startswith("The request's")


def test_a_nul_character_in_a_posted_form_is_a_400(site):
    client = Client()
    client.force_login(site["staff"])
    response = client.post(f"/rollouts/{site['rollout']}/label/", {"cause": "unknown", "notes": "a\x00b"})
    assert response.status_code == 400


@pytest.mark.parametrize("query, status", [
    ("harness=99999999999999999999", 400),  # past 64 bits: the admin's lookup raised OverflowError
    ("harness=-99999999999999999999", 400),
    ("harness=9223372036854775807", 200),  # the biggest id there can be: no row, no error
    ("q=99999999999999999999", 400),
])
def test_a_number_past_64_bits_in_an_admin_query_is_a_400(site, query, status):
    client = Client()
    client.force_login(site["staff"])
    response = client.get(f"/admin/evaluations/entry/?{query}")
    assert response.status_code in {status, 302} if status == 200 else response.status_code == status
    if status == 400:
        assert b"larger than any id" in response.content


def test_a_number_past_64_bits_in_a_search_is_searched(client):
    assert client.get("/search/", {"q": "99999999999999999999"}).status_code == 200
