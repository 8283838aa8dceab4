"""The catalogue and a task page in a real browser."""
from __future__ import annotations

from pathlib import Path

import pytest

from tasks.services import import_tasks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_filter_catalogue_and_open_a_task(live_server, page):
    report = import_tasks(EXAMPLES, version="1.1")
    assert report.ok, report.as_dict()

    page.goto(f"{live_server.url}/tasks/")
    assert page.locator("#task-count").inner_text() == "3 tasks"

    page.select_option("select[name=category]", "puzzle_and_challenge")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/tasks/?*category=puzzle_and_challenge*")
    assert page.locator("#task-count").inner_text() == "1 task"
    rows = page.locator("table.task-catalogue tbody tr")
    assert rows.count() == 1
    assert "28 → 19" in rows.first.inner_text()

    page.click("text=sort8_network")
    page.wait_for_url("**/tasks/1.1/sort8_network/")
    assert page.locator("#task-metric").inner_text() == "comparator_count"
    assert page.locator("#task-direction").inner_text() == "lower is better"
    assert page.locator("#task-baseline").inner_text() == "28"
    assert page.locator("#task-reference").inner_text() == "19"
    assert "Anchored linear" in page.locator("#scoring-rule").inner_text()
    assert page.locator("#instruction h1").inner_text() == "A smaller sorting network for 8 inputs"
    assert page.locator("nav a[aria-current=page]").inner_text() == "Tasks"
