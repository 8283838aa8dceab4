"""The rollout page's grade history in a real browser: legible, in order, and no wider than the window on a phone."""
from __future__ import annotations

import pytest

from trajectories import services
from trajectories.reading.trial_folder import Verification
from trajectories.tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_the_grade_history_shows_each_grade_in_order(browser, live_server, width, height):
    rollout = factories.make_rollout(status="finished", reward=1.0, verifier_fields={"reward": 1.0})
    grade = services.start_regrade(rollout, backend="podman")
    services.record_regrade(grade, Verification(0.25, True, {"reward": 0.25}, "", {}, "", "", ()), verifier_version="ab" * 32)
    failed = services.start_regrade(rollout, backend="bubblewrap")
    services.record_failed_regrade(failed, "the verifier produced no reward: it timed out")

    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    assert page.goto(f"{live_server.url}/rollouts/{rollout.pk}/").status == 200
    history = page.locator("#grades")
    history.scroll_into_view_if_needed()
    assert history.is_visible()
    rows = history.locator("tbody tr")
    assert rows.count() == 3
    texts = [rows.nth(i).inner_text() for i in range(3)]
    assert "original grade" in texts[0] and "1.0" in texts[0]
    assert "regrade" in texts[1] and "0.25" in texts[1] and "abababababab" in texts[1] and "podman" in texts[1]
    assert "failed" in texts[2] and "it timed out" in texts[2]
    # The reward shown at the top is the latest done grade's.
    assert page.locator(".reward strong").inner_text().startswith("0.25")
    assert page.evaluate("() => document.documentElement.scrollWidth") == width
    context.close()
