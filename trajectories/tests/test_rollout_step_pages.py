"""The rollout page in pages of steps, and step permalinks (?step=N) that find their page."""
import json
import re

import pytest
from django.urls import reverse

from trajectories import explorer

from . import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_per_page(monkeypatch):
    monkeypatch.setattr(explorer, "STEPS_PER_PAGE", 3)


def url(rollout, query=""):
    return reverse("trajectories:rollout_detail", args=[rollout.pk]) + query


def shown_steps(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<article class="step[^"]*" id="step-(\d+)"', html)]


def test_a_long_rollout_shows_one_page_of_steps_and_links_to_the_others(client, three_per_page):
    rollout = factories.make_explored_rollout()  # steps 1..8
    html = client.get(url(rollout)).content.decode()
    assert shown_steps(html) == [1, 2, 3]
    assert "8 steps, 3 on this page" in html
    assert '<strong aria-current="page">#1–#3</strong>' in html
    assert '<a href="?page=2" rel="next">#4–#6</a>' in html and '<a href="?page=3">#7–#8</a>' in html

    html = client.get(url(rollout, "?page=3")).content.decode()
    assert shown_steps(html) == [7, 8]
    assert '<a href="?page=2" rel="prev">#4–#6</a>' in html
    # The timeline and the plot still cover the whole rollout.
    assert 'href="?step=1"' in html and 'href="#step-7"' in html
    plot = json.loads(re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert [p["step_id"] for p in plot["points"]] == [3, 5, 7]
    assert plot["outline"]["ids"] == [[1, 8]]  # every step, as one run of ids


def test_out_of_range_or_bad_page_numbers_are_clamped(client, three_per_page):
    rollout = factories.make_explored_rollout()
    assert shown_steps(client.get(url(rollout, "?page=99")).content.decode()) == [7, 8]
    assert shown_steps(client.get(url(rollout, "?page=x")).content.decode()) == [1, 2, 3]


def test_a_short_rollout_has_no_page_links(client):
    rollout = factories.make_explored_rollout()
    html = client.get(url(rollout)).content.decode()
    assert shown_steps(html) == list(range(1, 9))
    assert "step-pages" not in html


def test_the_only_filter_pages_the_filtered_steps(client, three_per_page):
    rollout = factories.make_explored_rollout()
    html = client.get(url(rollout, "?only=benchmark,edit&page=2")).content.decode()
    assert shown_steps(html) == [7]
    assert "4 steps of kind benchmark,edit, 1 on this page" in html
    assert '<a href="?page=1&amp;only=benchmark,edit" rel="prev">#3–#5</a>' in html


def test_a_running_rollout_opens_on_its_last_page(client, three_per_page):
    rollout = factories.make_explored_rollout(status="running")
    assert shown_steps(client.get(url(rollout)).content.decode()) == [7, 8]
    assert shown_steps(client.get(url(rollout, "?page=1")).content.decode()) == [1, 2, 3]


def test_later_steps_get_their_time_and_latency_from_the_whole_trajectory(client, three_per_page):
    # Steps 2..8 are agent steps: seven model requests.
    rollout = factories.make_explored_rollout(api_request_times_msec=[1000, 2000, 3000, 4000, 5000, 6000, 7000])
    html = client.get(url(rollout, "?page=2")).content.decode()
    first = html[html.index('id="step-4"'):html.index('id="step-5"')]
    assert "LLM 3000 ms" in first and "+10.0s" in first


@pytest.mark.parametrize(
    "query, location",
    [
        ("?step=5", "?page=2#step-5"),
        ("?step=1", "?page=1#step-1"),
        ("?step=8&q=latency", "?page=3&q=latency#step-8"),
        # Filtered: steps 3, 4, 5, 7 fit on two pages of three.
        ("?step=7&only=benchmark,edit", "?page=2&only=benchmark%2Cedit#step-7"),
        # A step the filter hides is shown unfiltered.
        ("?step=2&only=benchmark", "?page=1#step-2"),
    ],
)
def test_a_step_permalink_redirects_to_its_page(client, three_per_page, query, location):
    rollout = factories.make_explored_rollout()
    response = client.get(url(rollout, query))
    assert response.status_code == 302
    assert response["Location"] == url(rollout, location)


def test_a_step_permalink_on_a_one_page_rollout_names_no_page(client):
    rollout = factories.make_explored_rollout()
    assert client.get(url(rollout, "?step=5"))["Location"] == url(rollout, "#step-5")


@pytest.mark.parametrize("query", ["?step=99", "?step=x", "?step="])
def test_an_unknown_step_is_404(client, query):
    rollout = factories.make_explored_rollout()
    assert client.get(url(rollout, query)).status_code == 404


def test_failure_evidence_links_name_the_step_not_the_page(client, three_per_page):
    from trajectories.failures.service import step_url

    rollout = factories.make_explored_rollout()
    response = client.get(step_url(rollout.pk, 7))
    assert response["Location"] == url(rollout, "?page=3#step-7")
