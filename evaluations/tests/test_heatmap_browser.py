"""The heatmap at full size (17 entries x 36 tasks) in a real Chromium, and the model page's task cells."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluations.tests.board_factories import build_boards

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# WCAG contrast of each cell's text (a link's own colour) on the cell's background.
CONTRASTS = """(selector) => {
    const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => {
        const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    return [...document.querySelectorAll(selector)].map((cell) => {
        const text = cell.querySelector('a') || cell;
        const a = lum(rgb(getComputedStyle(text).color)), b = lum(rgb(getComputedStyle(cell).backgroundColor));
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
}"""


@pytest.fixture
def full_board():
    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    build_boards()  # as the boards worker would (a page never builds one)


def test_every_task_and_entry_is_visible_and_legible_at_1440(browser, live_server, full_board):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(live_server.url + "/heatmap/?version=synthetic")
    rows = page.locator("#heatmap-table tbody tr:not(.category-row)")
    assert rows.count() == 36
    assert page.locator("#heatmap-table thead th.entry").count() == 17
    # Every column lies inside the window (nothing cut off to the right) and every row is tall enough to read.
    box = page.locator("#heatmap-scroll").bounding_box()
    last = page.locator("#heatmap-table thead th.entry").last.bounding_box()
    assert last["x"] + last["width"] <= box["x"] + box["width"] + 1
    heights = [rows.nth(i).bounding_box()["height"] for i in (0, 17, 35)]
    assert min(heights) >= 18
    # Task names link to their task pages; entry labels are whole.
    assert rows.first.locator("th a").get_attribute("href").startswith("/tasks/synthetic/")
    clipped = page.evaluate(
        "() => [...document.querySelectorAll('#heatmap-table th, #heatmap-table th a')]"
        ".filter(c => c.scrollWidth > c.clientWidth + 1 || c.scrollHeight > c.clientHeight + 1).length"
    )
    assert clipped == 0
    contrasts = page.evaluate(CONTRASTS, "#heatmap-table td.cell")
    assert len(contrasts) == 36 * 17 and min(contrasts) >= 4.5
    # Rows come ordered by score within each category: the first row's tasks are easier.
    means = page.evaluate(
        "() => [...document.querySelectorAll('#heatmap-table tbody tr:not(.category-row)')].map(r => r.dataset.mean)"
    )
    assert means[:15] == sorted(means[:15], key=float, reverse=True)
    context.close()


def test_at_390_the_heatmap_scrolls_inside_itself(browser, live_server, full_board):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(live_server.url + "/heatmap/?version=synthetic")
    sizes = page.evaluate(
        "() => { const s = document.querySelector('#heatmap-scroll');"
        " return {page: document.documentElement.scrollWidth, inner: s.scrollWidth, box: s.clientWidth}; }"
    )
    assert sizes["page"] <= 390, sizes
    assert sizes["inner"] > sizes["box"]  # the chart scrolls, not the page
    # The task names stay in view while the cells scroll sideways.
    page.locator("#heatmap-scroll").evaluate("s => s.scrollLeft = 600")
    name = page.locator("#heatmap-table tbody tr:not(.category-row) th").first.bounding_box()
    assert 0 <= name["x"] < 60
    context.close()


def test_model_page_task_cells_are_legible(browser, live_server, full_board):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(live_server.url + "/models/synthetic-model-13/")
    contrasts = page.evaluate(CONTRASTS, "td.heat")
    assert len(contrasts) == 36 and min(contrasts) >= 4.5
    page.close()


def test_the_heatmap_is_never_a_short_box_of_its_own_to_scroll_down(browser, live_server, full_board):
    """It opened in a ~600 px box: a board's only filled row could sit below that fold, inside the box."""
    page = browser.new_page(viewport={"width": 1440, "height": 700})
    page.goto(live_server.url + "/heatmap/?version=synthetic")
    sizes = page.locator("#heatmap-scroll").evaluate("s => ({inner: s.scrollHeight, box: s.clientHeight})")
    assert sizes["inner"] <= sizes["box"] + 1, sizes  # the page scrolls down the tasks, not a box within it
    page.close()


def test_a_colour_scale_and_figures_in_the_middle_of_their_cells(browser, live_server, full_board):
    """The heatmap had no colour scale, and its figures sat at the top of their cells."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(live_server.url + "/heatmap/?version=synthetic")
    steps = page.locator("#heat-legend .heat-scale span")
    assert steps.all_inner_texts() == ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"]
    # Each step of the scale has the colour of the cells of its class.
    cell = page.locator("#heatmap-table td.heat-7").first
    assert steps.nth(7).evaluate("s => getComputedStyle(s).backgroundColor") == cell.evaluate(
        "c => getComputedStyle(c).backgroundColor")
    offsets = page.eval_on_selector_all("#heatmap-table td.cell", """cells => cells.slice(0, 40).map(cell => {
        const c = cell.getBoundingClientRect(), range = document.createRange();
        range.selectNodeContents(cell.querySelector('a'));
        const t = range.getBoundingClientRect();
        return [Math.round((t.top + t.bottom) / 2 - (c.top + c.bottom) / 2), Math.round((t.left + t.right) / 2 - (c.left + c.right) / 2)];
    })""")
    assert all(abs(down) <= 2 and abs(across) <= 2 for down, across in offsets), offsets
    context.close()
