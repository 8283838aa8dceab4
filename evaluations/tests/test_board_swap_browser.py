"""The board pages at 100 entries in a real Chromium: a light first screen, sorts and orders swapped in place.

The charts hold thousands of nodes at 100 entries: they draw when scrolled
to. A sort (leaderboard) or task order (heatmap) click on a paged board
swaps in the server's ?part=board without reloading the page; the address
follows, and back gives the previous table again. Timings are
benchmarks/scale_bench.py's; these check behaviour only.
"""
from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from evaluations.tests.test_heatmap_view import hundred_entries

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOM_BUDGET = 2_500


@pytest.fixture
def big_board():
    from evaluations.boards import serving

    world = hundred_entries(100)
    serving.build(world["version"])  # computed before the browser asks (a loaded host takes seconds at 100 entries)
    return world


@pytest.fixture
def big_page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, errors
    context.close()


def models_in_table(page) -> list[str]:
    return page.locator("#leaderboard-table tbody tr td:nth-child(2) a").all_inner_texts()


def expect_models(page, names: list[str]) -> None:
    """Back and forward change the address first, the table when its part arrives: wait for the table."""
    expect(page.locator("#leaderboard-table tbody tr td:nth-child(2) a")).to_have_text(names)


def dom_nodes(page) -> int:
    return page.evaluate("() => document.getElementsByTagName('*').length")


def mark_document(page) -> None:
    """A mark on this document: still there after a click means the page was not reloaded."""
    page.evaluate("() => { window.__sameDocument = true; }")


def same_document(page) -> bool:
    return page.evaluate("() => window.__sameDocument === true")


def test_a_hundred_entry_leaderboard_loads_light_and_sorts_in_place(big_page, live_server, big_board):
    page, errors = big_page
    page.goto(live_server.url + "/?version=big", wait_until="networkidle", timeout=60_000)
    # The first screen: the table's page and the charts' empty containers.
    assert dom_nodes(page) <= DOM_BUDGET
    assert page.locator(".chart .main-svg").count() == 0
    first = models_in_table(page)
    assert len(first) == 30
    mark_document(page)

    page.locator('#leaderboard-table th[data-sort-key="model"] a').click()
    page.wait_for_url("**sort=model**")
    assert same_document(page)  # swapped in, not reloaded
    names = models_in_table(page)
    assert names == [f"model-{m:03d}" for m in range(30)]
    assert page.locator('#leaderboard-table th[data-sort-key="model"]').get_attribute("aria-sort") == "ascending"
    assert parse_qs(urlparse(page.url).query) == {"version": ["big"], "sort": ["model"]}
    # The usage table and the hidden sort of the filters follow.
    assert page.locator("#usage-table tbody tr td:first-child").first.inner_text().startswith("model-000")
    assert page.locator('#board-filters input[name="sort"]').input_value() == "model"

    # Again: descending; then the next page of that order, still in place.
    page.locator('#leaderboard-table th[data-sort-key="model"] a').click()
    page.wait_for_url("**sort=-model**")
    assert models_in_table(page) == [f"model-{m:03d}" for m in range(99, 69, -1)]
    page.locator("nav.entry-pages a[rel=next]").first.click()
    page.wait_for_url("**entries=2**")
    assert models_in_table(page) == [f"model-{m:03d}" for m in range(69, 39, -1)]
    assert same_document(page)

    # Back and forward give the tables of those addresses.
    page.go_back()
    page.wait_for_url(lambda url: "entries=2" not in url)
    expect_models(page, [f"model-{m:03d}" for m in range(99, 69, -1)])
    page.go_back()
    page.wait_for_url(lambda url: "sort=model" in url)
    expect_models(page, names)
    page.go_back()
    page.wait_for_url(lambda url: "sort=" not in url)
    expect_models(page, first)
    page.go_forward()
    page.wait_for_url("**sort=model**")
    expect_models(page, names)
    assert same_document(page)
    # A reload of the address is the same table, from the server.
    page.reload()
    assert models_in_table(page) == names
    assert dom_nodes(page) <= DOM_BUDGET
    assert errors == []


def test_the_charts_draw_every_entry_when_scrolled_to(big_page, live_server, big_board):
    page, errors = big_page
    page.goto(live_server.url + "/?version=big", wait_until="networkidle", timeout=60_000)
    assert page.locator(".chart .main-svg").count() == 0
    assert page.evaluate("() => typeof window.Plotly") == "undefined"  # not even fetched yet
    page.locator("#chart-bars").scroll_into_view_if_needed()
    page.wait_for_selector("#chart-bars .main-svg")
    # Every entry, not the table's page: 100 Avg@k bars over 100 Best@k bars.
    assert page.locator("#chart-bars .bars .point").count() == 200
    for chart in ("#chart-budget", "#chart-at-k"):
        page.locator(chart).scroll_into_view_if_needed()
        page.wait_for_selector(f"{chart} .main-svg")
    assert page.locator("#chart-at-k .scatterlayer .trace").count() == 100
    assert page.locator("#chart-budget .scatterlayer .trace").count() == 100
    # These entries recorded no cost or tokens: the Pareto chart says so when drawn, and follows its axis.
    page.locator("#chart-pareto").scroll_into_view_if_needed()
    expect(page.locator("#chart-pareto")).to_have_text("No entry has a recorded cost.")
    expect(page.locator("#pareto-missing")).to_have_text("100 entries without a recorded cost not shown.")
    page.locator('input[name="pareto-x"][value="tokens"]').check()
    expect(page.locator("#chart-pareto")).to_have_text("No entry has a recorded tokens.")
    assert errors == []


def test_the_heatmaps_task_order_is_swapped_in_place(big_page, live_server, big_board):
    page, errors = big_page
    page.goto(live_server.url + "/heatmap/?version=big", wait_until="networkidle", timeout=60_000)
    assert dom_nodes(page) <= DOM_BUDGET
    by_score = page.locator("#heatmap-table tbody th[scope=row] a").all_inner_texts()
    mark_document(page)
    # By one entry's score (click its name): here every task has the same mean, so the default is by name.
    first_entry = page.locator("#heatmap-table thead th.entry a").first
    key = parse_qs(urlparse(first_entry.get_attribute("href")).query)["order"][0]
    first_entry.click()
    page.wait_for_url(f"**order={key}**")
    assert same_document(page)
    by_entry = page.locator("#heatmap-table tbody th[scope=row] a").all_inner_texts()
    assert by_entry != by_score and sorted(by_entry) == sorted(by_score)
    # Within each category (task t is in the (t % 4)th), by that entry's score, best first.
    scores = [float(v) for v in page.locator("#heatmap-table tbody tr td:nth-child(2) a").evaluate_all(
        "links => links.map(a => a.dataset.avg)")]
    for category in range(4):
        block = scores[9 * category:9 * (category + 1)]
        assert block == sorted(block, reverse=True)
    assert page.locator("#heatmap-table thead th.entry a").first.get_attribute("aria-current") == "true"
    assert page.locator('#board-filters input[name="order"]').input_value() == key
    # The next page of entries keeps that order, in place too.
    page.locator("nav.entry-pages a[rel=next]").first.click()
    page.wait_for_url("**columns=2**")
    assert page.locator("#heatmap-table tbody th[scope=row] a").all_inner_texts() == by_entry
    assert page.locator("#heatmap-table thead th.entry").count() == 25
    page.go_back()
    page.wait_for_url(lambda url: "columns=2" not in url)
    page.go_back()
    page.wait_for_url(lambda url: "order=" not in url)
    expect(page.locator("#heatmap-table tbody th[scope=row] a")).to_have_text(by_score)
    assert same_document(page)
    assert errors == []


def test_a_swapped_heatmap_keeps_its_sideways_scroll(browser, live_server, big_board):
    """On a narrow screen the entries scroll sideways: ordering by one keeps it where it was clicked."""
    context = browser.new_context(viewport={"width": 700, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(live_server.url + "/heatmap/?version=big", wait_until="networkidle", timeout=60_000)
        box = page.locator("#heatmap-scroll")
        box.evaluate("s => { s.scrollLeft = 400; }")
        before = box.evaluate("s => s.scrollLeft")
        assert before > 0
        entry = page.locator("#heatmap-table thead th.entry a").nth(10)
        key = parse_qs(urlparse(entry.get_attribute("href")).query)["order"][0]
        entry.click()
        page.wait_for_url(f"**order={key}**")
        assert page.locator("#heatmap-table thead th.entry a").nth(10).get_attribute("aria-current") == "true"
        assert page.locator("#heatmap-scroll").evaluate("s => s.scrollLeft") == before
    finally:
        context.close()


def cell_title(page, row: int, column: int) -> str:
    """The title of the heatmap cell at (row, column) of the table's body, after hovering it."""
    link = page.locator("#heatmap-table tbody tr:not(.category-row)").nth(row).locator("td.cell a").nth(column)
    link.hover()
    return link.get_attribute("title")


def test_a_heatmap_cell_names_its_entry_and_task_on_hover(big_page, live_server, big_board):
    """The server writes a cell's figures only (cell_titles.js adds whose they are), also in a swapped-in board."""
    page, errors = big_page
    page.goto(live_server.url + "/heatmap/?version=big&order=task", wait_until="networkidle", timeout=60_000)
    first_model = page.locator("#heatmap-table thead th.entry .model").first.inner_text()
    third_model = page.locator("#heatmap-table thead th.entry .model").nth(2).inner_text()
    title = cell_title(page, 0, 0)
    assert title.startswith(f"{first_model} / terminus-2 2.0.0 on task-00\nAvg ") and "rollouts: " in title
    assert cell_title(page, 0, 0) == title  # named once, however often hovered
    assert cell_title(page, 5, 2).startswith(f"{third_model} / terminus-2 2.0.0 on task-20\nAvg ")
    # A keyboard user's focus names it too.
    link = page.locator("#heatmap-table tbody tr:not(.category-row)").nth(1).locator("td.cell a").nth(1)
    link.focus()
    assert link.get_attribute("title").startswith(page.locator("#heatmap-table thead th.entry .model").nth(1).inner_text() + " / ")
    # The next page of entries, swapped in: its cells are named by their own headers.
    page.locator("nav.entry-pages a[rel=next]").first.click()
    page.wait_for_url("**columns=2**")
    expect(page.locator("#heatmap-table thead th.entry .model").first).not_to_have_text(first_model)
    next_model = page.locator("#heatmap-table thead th.entry .model").first.inner_text()
    assert cell_title(page, 0, 0).startswith(f"{next_model} / terminus-2 2.0.0 on task-00\nAvg ")
    assert errors == []
