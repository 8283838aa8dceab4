"""Search's bounded cost: a time limit, a minimum length, an index for substrings, one scan at a time.

A query with no indexed words used to scan every text with no limit (2 s a
query on 330 rollouts, and four clients stalled every other page). Now each
search has a time budget, returns what it found within it with a notice,
and refuses substrings too short to search for.
"""
from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from trajectories.search import query as search
from trajectories.search.document import infix_filters
from trajectories.models import Observation, Step

from . import factories

pytestmark = pytest.mark.django_db

URL = reverse("trajectories:search")
FILLER = "lorem ipsum dolor sit amet consectetur " * 500  # 19.5 kB, no "%%%" in it


@pytest.fixture
def big_corpus():
    """One step whose message holds "%%%", then 20 MB of outputs that do not."""
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="progress: 100%%% done")
    steps = Step.objects.bulk_create(
        Step(rollout=rollout, position=i, step_id=i + 1, source="agent", message="") for i in range(1, 201)
    )
    Observation.objects.bulk_create(
        Observation(step=step, position=j, content=f"{FILLER} {step.pk} {j}") for step in steps for j in range(5)
    )
    return rollout


def test_a_query_past_its_time_bound_returns_what_it_found_with_a_notice(big_corpus, settings):
    # A millisecond: far less than reading 20 MB takes on any machine (20 ms was not, on a quiet one).
    settings.AUTOLAB_SEARCH_TIMEOUT_SEC = 0.001
    result = search.search("%%%")
    assert result.cut_short
    # Messages are searched first, and quickly: their hit is kept (unless the
    # machine is so busy that even they took longer than the budget).
    assert [(h.step_id, h.where) for h in result.hits] in ([(1, "message")], [])
    assert "time" in result.notice
    # The bound is lifted afterwards: later queries of the same request are not cut.
    assert Observation.objects.filter(content__contains="lorem").count() == 1000


def test_within_its_bound_a_search_is_complete(big_corpus, settings):
    settings.AUTOLAB_SEARCH_TIMEOUT_SEC = 60
    result = search.search("%%%")
    assert not result.cut_short and result.notice == ""
    assert [(h.step_id, h.where) for h in result.hits] == [(1, "message")]


@pytest.mark.parametrize("q", ["%", "'", "\\", "->", "%%"])
def test_a_substring_shorter_than_the_minimum_is_not_searched(q, django_assert_num_queries):
    with django_assert_num_queries(0):
        result = search.search(q)
    assert result.hits == [] and "at least 3 characters" in result.notice


def test_the_minimum_is_a_setting(settings):
    settings.AUTOLAB_SEARCH_MIN_CHARS = 1
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=["50% done"])
    assert [h.step_id for h in search.search("%").hits] == [1]


def test_the_page_shows_the_notice_and_never_fails(client, big_corpus, settings):
    for q in ["%", "'", "\\"]:
        response = client.get(URL, {"q": q})
        assert response.status_code == 200
        assert "at least 3 characters" in response.content.decode()
    settings.AUTOLAB_SEARCH_TIMEOUT_SEC = 0.001
    response = client.get(URL, {"q": "%%%"})
    assert response.status_code == 200
    text = response.content.decode()
    assert "search-notice" in text and "time limit" in text


def test_the_in_page_find_is_bounded_too(client, big_corpus, settings):
    settings.AUTOLAB_SEARCH_TIMEOUT_SEC = 0.001
    response = client.get(reverse("trajectories:rollout_search", args=[big_corpus.pk]), {"q": "%%%"})
    assert response.status_code == 200
    body = response.json()
    assert body["step_ids"] in ([1], []) and body["cut_short"] is True


@pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_trgm is PostgreSQL's")
def test_substring_search_finds_its_rollouts_through_a_trigram_index_on_postgresql():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%%trgm'")
        names = {row[0] for row in cursor.fetchall()}
    # One index of each rollout's words, not of every text (migration 0022).
    assert names == {"trajectories_rolloutdocument_words_trgm"}
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = search.documents_that_could_hold(infix_filters("aluate_loc"), search.Filters()).values("pk").explain()
    assert "words_trgm" in plan, plan


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the scan slots are advisory locks on PostgreSQL")
def test_a_scan_waits_for_no_other_scan_it_says_the_search_is_busy(big_corpus, settings):
    import psycopg

    db = connection.settings_dict
    other = psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"], autocommit=True)
    try:
        for slot in range(settings.AUTOLAB_SEARCH_SCANS):
            other.execute("SELECT pg_advisory_lock(%s, %s)", [search.SCAN_LOCK, slot])
        result = search.search("%%%")
        assert result.hits == [] and "busy" in result.notice
        # Word searches need no scan slot.
        factories.add_step(big_corpus, 300, message="throughput measured")
        assert [h.step_id for h in search.search("throughput").hits] == [300]
    finally:
        other.close()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the scan slots are advisory locks on PostgreSQL")
def test_a_busy_answer_comes_after_a_pause_and_says_when_to_retry(client, big_corpus, settings):
    import time

    import psycopg

    settings.AUTOLAB_SEARCH_BUSY_PAUSE_SEC = 0.3
    db = connection.settings_dict
    other = psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"], autocommit=True)
    try:
        for slot in range(settings.AUTOLAB_SEARCH_SCANS):
            other.execute("SELECT pg_advisory_lock(%s, %s)", [search.SCAN_LOCK, slot])
        started = time.monotonic()
        response = client.get(URL, {"q": "%%%"})
        assert time.monotonic() - started >= 0.3
        assert response.status_code == 200 and response["Retry-After"] == "1"
        assert "busy" in response.content.decode()
        # An answer that searched is not held back. The locks are released
        # before the connection closes: a closed connection's backend frees
        # them only when it exits, which a loaded server does after the next
        # request has already tried them (CI's one failure at b0a9015).
        other.execute("SELECT pg_advisory_unlock_all()")
        other.close()
        other = None
        response = client.get(URL, {"q": "%%%"})
        assert "Retry-After" not in response
    finally:
        if other is not None:
            other.close()
