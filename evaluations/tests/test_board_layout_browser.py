"""The paper table at full size in a real Chromium: 1440 px without cut-off, 390 px with Avg@k in the first screen."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluations.tests.board_factories import build_boards

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def full_board():
    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    build_boards()  # as the boards worker would (a page never builds one)


def overflow(page) -> dict:
    return page.evaluate(
        """() => {
            const table = document.querySelector('#leaderboard-table');
            const box = document.querySelector('#board-scroll');
            return {table: table.scrollWidth, box: box.clientWidth,
                    page: document.documentElement.scrollWidth, window: window.innerWidth};
        }"""
    )


def test_the_main_table_fits_at_1440_px(browser, live_server, full_board):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(live_server.url + "/?version=synthetic")
    sizes = overflow(page)
    assert sizes["table"] <= sizes["box"], sizes
    assert sizes["page"] <= sizes["window"], sizes
    # Every category's Avg@k, Best@k and Dominance, each with its interval.
    headers = page.locator("#leaderboard-table thead tr").last.locator("th").all_inner_texts()
    assert len(headers) == 2 + 5 * 3
    first_row = page.locator("#leaderboard-table tbody tr").first
    assert first_row.locator("td .ci").count() == 15
    # No cell is cut: every cell's text fits in its box.
    clipped = page.evaluate(
        "() => [...document.querySelectorAll('#leaderboard-table td, #leaderboard-table th')]"
        ".filter(c => c.scrollWidth > c.clientWidth + 1).length"
    )
    assert clipped == 0
    context.close()


def test_phone_layout_shows_rank_entry_and_avg_first(browser, live_server, full_board):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(live_server.url + "/?version=synthetic")
    sizes = overflow(page)
    assert sizes["table"] <= sizes["box"], sizes
    assert sizes["page"] <= sizes["window"], sizes
    headers = [h.strip() for h in page.locator("#leaderboard-table thead tr").last.locator("th:visible").all_inner_texts()]
    assert headers[:3] == ["Rank", "Entry", "Avg@k"]
    first = page.locator("#leaderboard-table tbody tr").first
    avg = first.locator("td").nth(2)
    box = avg.bounding_box()
    assert box["y"] + box["height"] <= 844 and box["x"] + box["width"] <= 390, box
    assert avg.inner_text().startswith("0.")
    context.close()
