"""Pages of steps in a real Chromium: permalinks, keys, the timeline and find cross pages."""
from __future__ import annotations

import re

import pytest

from trajectories import explorer

from . import factories
from .test_explorer_browser import open_rollout, wait_step_in_view

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rollout(monkeypatch):
    """The explored rollout (steps 1..8) in pages of three, and a ninth step with a long output."""
    monkeypatch.setattr(explorer, "STEPS_PER_PAGE", 3)
    rollout = factories.make_explored_rollout()
    factories.add_step(rollout, 9, commands=["cat log\n"], outputs=["x" * 2000 + " far-away-marker"], kinds=["inspect"])
    return rollout


def shown(page) -> list[int]:
    return page.evaluate("() => [...document.querySelectorAll('#steps .step')].map(s => +s.dataset.stepId)")


def test_an_old_permalink_to_a_later_step_opens_its_page(page, live_server, rollout):
    open_rollout(page, live_server, rollout, fragment="#step-8")
    page.wait_for_url(re.compile(r"\?page=3#step-8$"))
    page.wait_for_selector("#step-8")
    wait_step_in_view(page, 8)
    assert shown(page) == [7, 8, 9]
    page.wait_for_function("() => document.querySelector('#steps .step.current')?.id === 'step-8'")


def test_keys_cross_to_the_next_and_previous_page(page, live_server, rollout):
    open_rollout(page, live_server, rollout, fragment="#step-3")
    assert shown(page) == [1, 2, 3]
    page.keyboard.press("j")
    page.wait_for_url(re.compile(r"\?page=2#step-4$"))
    page.wait_for_selector("#step-4")
    page.wait_for_function("() => document.querySelector('#steps .step.current')?.id === 'step-4'")
    page.keyboard.press("k")
    page.wait_for_url(re.compile(r"\?page=1#step-3$"))
    page.wait_for_selector("#step-3")
    # "b" from the last benchmark call of page 1 (step 3) goes to step 5, on page 2.
    page.wait_for_function("() => document.querySelector('#steps .step.current')?.id === 'step-3'")
    page.keyboard.press("b")
    page.wait_for_url(re.compile(r"\?page=2#step-5$"))


def test_a_timeline_mark_opens_a_step_on_another_page(page, live_server, rollout):
    open_rollout(page, live_server, rollout)
    # The last mark: the others sit a few pixels apart on a two-hour strip.
    page.locator('.timeline-strip .mark[data-step-id="9"]').click()
    page.wait_for_url(re.compile(r"\?page=3#step-9$"))
    wait_step_in_view(page, 9)


def test_find_leads_to_a_match_on_another_page(page, live_server, rollout):
    open_rollout(page, live_server, rollout)
    page.fill("#step-search", "far-away-marker")
    link = page.locator("#server-matches a.server-match")
    link.wait_for()
    assert link.inner_text() == "#9"
    link.click()
    page.wait_for_url(re.compile(r"\?page=3&q=far-away-marker#step-9$"))
    # The same find runs there, in the step's full output.
    page.wait_for_function("() => document.querySelectorAll('#step-9 mark.find-hit').length === 1")
    assert page.input_value("#step-search") == "far-away-marker"
    assert page.locator("#step-9 mark.find-hit.active").count() == 1


def test_page_links_move_between_pages(page, live_server, rollout):
    open_rollout(page, live_server, rollout)
    page.locator("nav.step-pages").first.locator("a[rel=next]").click()
    page.wait_for_url(re.compile(r"\?page=2$"))
    assert shown(page) == [4, 5, 6]


def test_a_plot_point_outside_compare_s_window_opens_its_window(page, live_server, monkeypatch):
    from django.urls import reverse

    monkeypatch.setattr(explorer, "COMPARE_WINDOW_STEPS", 3)
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    page.goto(live_server.url + reverse("trajectories:compare") + f"?a={a.pk}&b={b.pk}")
    page.wait_for_selector("#curve-plot .main-svg", state="attached")
    assert page.locator(".compare-column").nth(0).locator(".step").count() == 3
    page.evaluate(
        """() => {
            const el = document.getElementById('curve-plot');
            const trace = el.data.findIndex(t => / benchmark calls$/.test(t.name));
            el.emit('plotly_click', {points: [{curveNumber: trace, customdata: 7, data: el.data[trace]}]});
        }"""
    )
    page.wait_for_url(re.compile(r"&focus=a-7$"))
    page.wait_for_selector('.compare-column >> nth=0 >> .step.current[data-step-id="7"]')
    assert "window 3 of 3" in page.inner_text("nav.compare-windows")


def test_the_current_step_lights_the_mark_it_shares(page, live_server):
    # Steps a second apart on a two-hour strip (7.2 s a column) share marks.
    rollout = factories.make_rollout()
    for step_id in range(1, 13):
        factories.add_step(rollout, step_id, elapsed_sec=float(step_id), message=f"step {step_id}\n" * 20,
                           kinds=["benchmark"] if step_id == 5 else ["wait"])
    open_rollout(page, live_server, rollout, fragment="#step-3")
    mark = page.locator(".timeline-strip .mark.current")
    mark.wait_for()
    assert mark.get_attribute("data-step-id") == "5"  # the benchmark call speaks for its column
    assert int(mark.get_attribute("data-first")) <= 3 <= int(mark.get_attribute("data-last"))
    assert page.locator(".timeline-strip .mark").count() < 12


def test_a_stale_link_to_no_step_leaves_the_page_be(page, live_server, rollout):
    url = open_rollout(page, live_server, rollout, fragment="#step-99")
    page.wait_for_timeout(500)
    assert page.url == url
    assert shown(page) == [1, 2, 3]
