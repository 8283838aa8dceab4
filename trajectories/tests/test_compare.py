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


# --- long rollouts: windows of elapsed time ----------------------------------


@pytest.fixture
def windows_of_three(monkeypatch):
    from trajectories import explorer

    monkeypatch.setattr(explorer, "COMPARE_WINDOW_STEPS", 3)


def columns(html: str) -> list[list[int]]:
    parts = html.split('class="compare-column"')[1:]
    return [[int(n) for n in re.findall(r'<article class="step[^"]*" data-step-id="(\d+)"', part)] for part in parts]


def test_long_rollouts_are_compared_one_window_of_time_at_a_time(client, windows_of_three):
    # Steps 1..8 of both at 0, 20, 30, ... 80 s: windows of three steps a side.
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    html = client.get(URL, {"a": a.pk, "b": b.pk}).content.decode()
    assert columns(html) == [[1, 2, 3], [1, 2, 3]]
    assert "window 1 of 3" in html
    assert '<strong aria-current="page">0.0s–30.0s</strong>' in html
    assert f'<a href="?a={a.pk}&amp;b={b.pk}&amp;window=2" rel="next">40.0s–1m 00s</a>' in html
    # The plot still has every benchmark call.
    data = json.loads(re.search(r'<script id="compare-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert [p["step_id"] for p in data["a"]["points"]] == [3, 5, 7]

    html = client.get(URL, {"a": a.pk, "b": b.pk, "window": 3}).content.decode()
    assert columns(html) == [[7, 8], [7, 8]]


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"focus": "b-5"}, [[4, 5, 6], [4, 5, 6]]),
        ({"focus": "a-8"}, [[7, 8], [7, 8]]),
        ({"focus": "a-99"}, [[1, 2, 3], [1, 2, 3]]),
        ({"focus": "c-5", "window": "2"}, [[4, 5, 6], [4, 5, 6]]),
        ({"window": "99"}, [[7, 8], [7, 8]]),
        ({"window": "x"}, [[1, 2, 3], [1, 2, 3]]),
    ],
)
def test_a_window_is_chosen_by_a_step_or_its_number(client, windows_of_three, params, expected):
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    assert columns(client.get(URL, {"a": a.pk, "b": b.pk, **params}).content.decode()) == expected


def test_short_rollouts_have_no_windows(client):
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    html = client.get(URL, {"a": a.pk, "b": b.pk}).content.decode()
    assert columns(html) == [list(range(1, 9))] * 2
    assert "compare-windows" not in html


def test_each_column_lists_its_rollouts_changed_files(client):
    a = factories.make_explored_rollout(
        files_changed=[{"path": "/app/main.c", "step_ids": [4], "diff": "-a\n+b\n", "start_known": True, "end_known": True}]
    )
    b = factories.make_explored_rollout(task=a.task, files_changed=[])
    old = factories.make_explored_rollout(task=a.task)  # imported before files were worked out
    html = client.get(URL, {"a": a.pk, "b": b.pk}).content.decode()
    first, second = html.split('class="compare-column"')[1:]
    assert "Files changed: 1" in first and f'<a href="/rollouts/{a.pk}/?step=4">#4</a>' in first
    assert '<span class="d-add">+1</span> <span class="d-del">−1</span>' in first
    assert "Files changed: 0" in second and "No file changed." in second
    html = client.get(URL, {"a": old.pk, "b": b.pk}).content.decode()
    assert html.split('class="compare-column"')[1].count("Files changed") == 0


def test_each_side_states_the_anchors_its_rollout_page_uses(client):
    """The compare chart drew task.toml's reference where the rollout page used the verifier's."""
    a, b = factories.make_anchored_pair()
    html = client.get(URL, {"a": a.pk, "b": b.pk}).content.decode()
    data = json.loads(re.search(r'<script id="compare-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    for rollout, side, reference in ((a, "a", 20.0), (b, "b", 30.0)):
        page = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
        assert f"<dt>Reference</dt><dd>{reference:g}" in page
        assert data[side]["reference"] == reference
        column = html.split(f'<section class="compare-column" data-rollout="{rollout.pk}">', 1)[1].split("</p>", 1)[0]
        assert f"baseline 100.0, reference {reference}" in column


def test_the_compared_rollouts_are_called_by_their_numbers(client):
    """The page said "#41 model" (database ids) where each rollout's page says "rollout 1"."""
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    html = client.get(URL, {"a": a.pk, "b": b.pk}).content.decode()
    assert f"#{a.pk} {a.model}" not in html and f"#{b.pk} {b.model}" not in html and f"#{a.pk} and #{b.pk}" not in html
    for r in (a, b):
        assert f"{r.model} · {r.harness} · rollout {r.number}</a></h2>" in html
    data = json.loads(re.search(r'<script id="compare-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert (data["a_label"], data["b_label"]) == tuple(f"{r.model} · {r.harness} · rollout {r.number}" for r in (a, b))
    refused = client.get(URL, {"a": a.pk, "b": factories.make_explored_rollout().pk}).content.decode()
    assert f"#{a.pk} {a.task.name}" not in refused and f"· rollout {a.number}</a>" in refused


def test_the_rollout_list_names_its_id_column_and_ticks_by_number(client):
    r = factories.make_rollout()
    html = client.get(reverse("trajectories:rollout_list")).content.decode()
    assert "<th>#</th>" not in html and ">Id</th>" in html
    assert f'aria-label="compare {r.task.name} · {r.model} · rollout {r.number}"' in html
