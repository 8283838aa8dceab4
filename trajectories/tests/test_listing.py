"""The rollouts list's pages (trajectories.listing): the rows and order of the whole filtered list, page after
page, whichever way a page is found; the count stops at its cap."""
import random

import pytest
from django.http import QueryDict
from django.urls import reverse

from trajectories import listing
from trajectories.forms import SORTS, RolloutFilters
from trajectories.models import FailureLabel
from trajectories.listing import RolloutList

from . import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def many():
    """Tasks of one name in two versions, models and harnesses with few and many rollouts, ties and gaps."""
    rng = random.Random(4)
    tasks = [factories.make_task(f"task_{i}") for i in (3, 1, 2)] + [factories.make_task("task_1", version="1.0")]
    factories.make_task("task_0")  # a name with no rollout: the walk passes it
    models = [factories.make_model(name) for name in ("zeta", "alpha", "mid")]
    harnesses = [factories.make_harness("h-b"), factories.make_harness("h-a")]
    rows = []
    for task in tasks:
        for model in models:
            for index in range(rng.choice((0, 1, 2, 4))):
                rows.append(factories.make_rollout(
                    task, model, rng.choice(harnesses), index=index, n_steps=rng.choice((1, 5, 5, 9)),
                    reward=rng.choice((None, 0.0, 0.5, 0.5, 1.0)), failure_cause=rng.choice(("", "timeout", "no_output")),
                ))
    FailureLabel.objects.create(rollout=rows[0], cause="no_output")
    return rows


def pages(query: str, size: int) -> list[int]:
    ids, number = [], 1
    while True:
        page = RolloutList(QueryDict(f"{query}&page={number}"), page_size=size)
        ids += [r.pk for r in page.object_list]
        if not page.has_next():
            return ids
        number += 1


@pytest.mark.parametrize("sort", ["", *SORTS])
@pytest.mark.parametrize("filters", ["", "version=1.1", "cause=no_output", "model=alpha", "min=0.5", "harness=h-a"])
@pytest.mark.parametrize("size", [1, 3, 7])
@pytest.mark.parametrize("few_names", [0, 100])
def test_the_pages_hold_the_whole_list_in_its_order(many, sort, filters, size, few_names, monkeypatch):
    monkeypatch.setattr(listing, "FEW_NAMES", few_names)  # 100: every name's rows walked by the next name
    monkeypatch.setattr(listing, "COUNT_CAP", 0)  # every list walked (a list within the cap is sorted at once)
    query = f"{filters}&sort={sort}"
    form = RolloutFilters(QueryDict(query))
    assert form.is_valid()
    assert pages(query, size) == list(form.rollouts().values_list("pk", flat=True))


def test_the_count_stops_at_its_cap_and_the_pages_go_on(many, monkeypatch, client):
    monkeypatch.setattr(listing, "COUNT_CAP", 5)
    page = RolloutList(QueryDict("page=2"), page_size=3)
    assert page.count == 5 and not page.count_is_exact and page.num_pages is None
    assert page.has_next() and page.has_previous()
    html = client.get(reverse("trajectories:rollout_list"), {"page": 2}).content.decode()
    assert "more than 5 rollouts" in html and "page 2</span>" in html


def test_an_exact_count_numbers_the_last_page_and_a_page_past_it_is_the_last(many):
    total = len(many)
    page = RolloutList(QueryDict("page=999"), page_size=10)
    assert page.count == total and page.count_is_exact and page.num_pages == -(-total // 10)
    assert page.number == page.num_pages and len(page.object_list) == total - 10 * (page.num_pages - 1)
    assert not page.has_next()


def test_a_page_number_past_any_offset_is_an_empty_page_not_an_error(many, monkeypatch, client):
    monkeypatch.setattr(listing, "COUNT_CAP", 5)
    response = client.get(reverse("trajectories:rollout_list"), {"page": "9" * 40})
    assert response.status_code == 200 and "No rollouts match." in response.content.decode()
