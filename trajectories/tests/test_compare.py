import json
import re

import pytest
from django.urls import reverse

from . import factories

pytestmark = pytest.mark.django_db

URL = reverse("trajectories:compare")


def test_two_rollouts_of_one_task_side_by_side(client, django_assert_max_num_queries):
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    with django_assert_max_num_queries(12):
        response = client.get(URL, {"a": a.pk, "b": b.pk})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="compare-column"') == 2
    assert f'href="/rollouts/{a.pk}/?step=3"' in html and f'href="/rollouts/{b.pk}/?step=3"' in html
    data = json.loads(re.search(r'<script id="compare-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert [p["step_id"] for p in data["a"]["points"]] == [3, 5, 7]
    assert [p["step_id"] for p in data["b"]["points"]] == [3, 5, 7]


def test_different_tasks_are_refused_with_a_reason(client):
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout()
    response = client.get(URL, {"a": a.pk, "b": b.pk})
    assert response.status_code == 400
    html = response.content.decode()
    assert "different tasks" in html and a.task.name in html and b.task.name in html
    assert 'class="compare-column"' not in html


@pytest.mark.parametrize("params", [{}, {"a": "1"}, {"a": "x", "b": "2"}])
def test_missing_ids_are_a_clear_400(client, params):
    response = client.get(URL, params)
    assert response.status_code == 400
    assert "Choose two rollouts" in response.content.decode()


def test_unknown_rollout_is_404(client):
    a = factories.make_rollout()
    assert client.get(URL, {"a": a.pk, "b": 999999}).status_code == 404


def test_long_messages_are_cut(client):
    a = factories.make_rollout()
    factories.add_step(a, 1, message="word " * 500 + "TAIL")
    html = client.get(URL, {"a": a.pk, "b": a.pk}).content.decode()
    assert "TAIL" not in html and "word word" in html


def test_ticked_pair_from_the_rollout_list(client):
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    listing = client.get(reverse("trajectories:rollout_list")).content.decode()
    assert f'name="r" value="{a.pk}" form="compare-form"' in listing
    response = client.get(URL + f"?r={a.pk}&r={b.pk}")
    assert response.status_code == 200
    assert response.content.decode().count('class="compare-column"') == 2
    assert client.get(URL + f"?r={a.pk}").status_code == 400
