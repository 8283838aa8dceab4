"""Rows and cells made once per board (evaluations.boards.board_html): what the pages show is what the templates
render for the board being served, never a row of an earlier board."""
from __future__ import annotations

import re

import pytest
from django.template.loader import get_template
from django.test import Client

from evaluations import views
from evaluations.boards import board_html, serving

from evaluations.tests.board_factories import build_boards, hand_table, make_rollout
from evaluations.tests.test_heatmap_view import hundred_entries

pytestmark = pytest.mark.django_db


def page(client: Client, path: str, **params) -> str:
    """The page's HTML without what differs between two requests (the CSP nonce, the board's age)."""
    html = client.get(path, params).content.decode()
    return re.sub(r' nonce="[^"]*"', "", html)


def row_of(html: str, key: str) -> str:
    found = re.search(rf'<tr data-entry="{re.escape(key)}">.*?</tr>', html, re.S)
    assert found, key
    return found.group(0)


@pytest.mark.parametrize(
    "path, params",
    [
        ("/", {"version": "big", "sort": "model", "entries": 2}),
        ("/", {"version": "big", "sort": "-best", "part": "board"}),
        ("/heatmap/", {"version": "big", "order": "task", "entries": 2}),
        ("/heatmap/", {"version": "big", "part": "board"}),
    ],
)
def test_a_page_from_kept_html_equals_the_page_made_afresh(path, params):
    build_boards(hundred_entries(40)["version"])
    client = Client()
    board_html.forget()
    fresh = page(client, path, **params)
    assert "being built" not in fresh
    for other in ({"sort": "dom"}, {"order": "task"}, {"entries": 3}):
        client.get(path, {**params, **other})  # other sorts and pages of the same board, made from the kept HTML
    assert page(client, path, **params) == fresh
    board_html.forget()
    assert page(client, path, **params) == fresh


def around_a_new_rollout(path: str):
    """The page at `path` before and after model A's new 1.0 on t4, the board after it, and model A's entry."""
    world = hand_table()
    client = Client()
    build_boards(world["version"])
    before = page(client, path, version="1.1")
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    data = serving.build(world["version"])
    after = page(client, path, version="1.1")
    return before, after, data, next(e for e in data.entries if e.model == "model-a")


def test_a_row_is_the_templates_row_of_the_board_served():
    before, after, data, entry = around_a_new_rollout("/")
    # Avg@k of model A rose from .35 to .6 (t4's new 1.0 among 4 tasks): the row says so, as the template does.
    assert row_of(after, entry.key) != row_of(before, entry.key)
    assert "0.600" in row_of(after, entry.key)
    groups = [{"category": None}] + [{"category": c} for c in data.categories]
    row = {"entry": entry, "fig": entry.figures(None), "groups": [entry.figures(g["category"]) for g in groups],
           "usage": entry.scope(None).usage}  # fmt: skip
    # The best and second of each column among the compared entries are marked, as the page marks them.
    marks = views.podium([e for e in data.entries if e.comparison and not e.scripted], groups).get(entry.key, ())
    row["marked"] = [(g, dict(marks[i]) if marks else {}) for i, g in enumerate(row["groups"])]
    assert row_of(get_template(board_html.BOARD_ROW).render({"row": row}), entry.key) == row_of(after, entry.key)


def cell_of(html: str, link: str) -> tuple[str, str]:
    """(data-avg, text) of the heatmap cell linking to `link`."""
    found = re.search(rf'<a href="{re.escape(link)}" title="[^"]*" data-avg="([^"]*)">([^<]*)</a>', html)
    assert found, link
    return found.group(1), found.group(2)


def test_a_heatmap_cell_follows_a_new_rollout():
    before, after, data, entry = around_a_new_rollout("/heatmap/")
    t4 = next(task for task in data.tasks if task.name == "t4")
    link = f"/rollouts/?task={t4.id}&amp;model={entry.model_id}&amp;harness={entry.harness_id}"
    # Before: model A's only rollout on t4 hit an infra error (*).
    assert cell_of(before, link)[1] == "—*"
    assert cell_of(after, link) == ("1.0", "1.000*")  # the new 1.0 counts; the infra error stays flagged
