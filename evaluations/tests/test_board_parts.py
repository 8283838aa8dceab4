"""?part=board: the parts of a board page that a sort or a page of entries changes, for board_swap.js."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluations.tests.board_factories import build_boards

from evaluations.tests.test_heatmap_view import element_count, hundred_entries, task_order

pytestmark = pytest.mark.django_db


def top_level_ids(html: str) -> list[str]:
    """The ids of the fragment's outermost elements: what board_swap.js puts in place."""
    from html.parser import HTMLParser

    void = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    class Parser(HTMLParser):
        depth, ids = 0, []

        def handle_starttag(self, tag, attrs):
            if self.depth == 0:
                self.ids.append(dict(attrs).get("id"))
            if tag not in void:
                self.depth += 1

        def handle_endtag(self, tag):
            if tag not in void:
                self.depth -= 1

    parser = Parser()
    parser.ids = []
    parser.feed(html)
    return parser.ids


def entry_order(html: str) -> list[str]:
    return re.findall(r'<tr data-entry="([^"]+)"', html)


def test_the_leaderboards_part_is_its_pages_changing_parts_alone():
    from django.test import Client

    build_boards(hundred_entries(40)["version"])
    client = Client()
    url = reverse("evaluations:leaderboard")
    full = client.get(url, {"version": "big", "sort": "model", "entries": 2}).content.decode()
    response = client.get(url, {"version": "big", "sort": "model", "entries": 2, "part": "board"})
    assert response.status_code == 200
    part = response.content.decode()
    # Each part the page swaps, by the id it replaces, and nothing of the page around them.
    assert top_level_ids(part) == [
        "board-links", "scope-tabs", "board-table", "usage-board", "medal-board"
    ]
    assert "<html" not in part and "board-charts" not in part and "<script" not in part
    # The same rows as the page, in the same order: the same template partials.
    assert entry_order(part) == entry_order(full)
    assert len(entry_order(part.split('id="usage-board"')[0])) == 10  # the second page's 10 of 40, then their usage rows
    for piece in re.findall(r'<div id="board-table".*?</table>', part, re.S):
        assert piece in full
    # Its links are the page's: none asks for a part again.
    assert "part=" not in part
    assert 'href="?version=big&amp;sort=model&amp;entries=1" rel="prev"' in part
    assert len(part.encode()) < len(full.encode()) and element_count(part) < element_count(full)


def test_the_heatmaps_part_is_its_board_alone(client):
    build_boards(hundred_entries(40)["version"])
    url = reverse("evaluations:heatmap")
    full = client.get(url, {"version": "big", "order": "task"}).content.decode()
    response = client.get(url, {"version": "big", "order": "task", "part": "board"})
    assert response.status_code == 200
    part = response.content.decode().strip()
    assert part.startswith('<div id="heatmap-board" data-swap>') and part in full
    assert top_level_ids(part) == ["heatmap-board"]
    assert task_order(part) == task_order(full) and len(task_order(part)) == 36
    assert "part=" not in part and "<html" not in part


def test_a_part_with_bad_filters_is_refused_as_the_page_is(client, world):
    response = client.get(reverse("evaluations:leaderboard"), {"entries": "x", "part": "board"})
    assert response.status_code == 400
    response = client.get(reverse("evaluations:heatmap"), {"columns": "0", "part": "board"})
    assert response.status_code == 400


def test_a_one_page_leaderboard_sorts_in_place_without_the_swap_script(client, world):
    html = client.get(reverse("evaluations:leaderboard")).content.decode()
    assert "board_swap.js" not in html and "data-swap" not in html
