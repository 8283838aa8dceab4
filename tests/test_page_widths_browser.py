"""No public page is wider than the window, at 1440 px or on a 390 px phone: a wide table scrolls in its own box."""
from __future__ import annotations

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ["/?version=synthetic", "/heatmap/?version=synthetic", "/tasks/", "/tasks/synthetic/synthetic_task_01/",
         "/rollouts/", "/failures/", "/models/synthetic-model-01/", "/api/"]


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_no_page_is_wider_than_the_window(browser, live_server, width, height):
    """`/tasks/` was 1,042 px and `/rollouts/` 1,176 px wide on a phone: the whole page scrolled sideways."""
    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    widths = {}
    for url in PAGES:
        assert page.goto(live_server.url + url).status == 200, url
        widths[url] = page.evaluate("() => document.documentElement.scrollWidth")
    context.close()
    assert widths == {url: width for url in PAGES}
