"""The failures page in a real browser: from a matrix cell to the filtered list."""
from __future__ import annotations

import pytest

from trajectories.failures import service as failure_service

from . import failure_helpers as h

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_matrix_cell_opens_the_filtered_list(live_server, page):
    a, b = h.model("model-a"), h.model("model-b")
    lora = h.task("flux2_klein_lora", category="model_development")
    rows = [
        h.rollout(model=a, verifier_fields={"reward": 0.0, "reason": "no_binary"}),
        h.rollout(model=a, task=lora, verifier_fields={"reward": 0.0, "reason": "no_lora_file"}),
        h.rollout(model=a, verifier_fields={"reward": 0.0, "correctness": False}),
        h.rollout(model=b, verifier_fields={"reward": 0.0, "reason": "no_binary"}),
        h.rollout(model=b, reward=0.5, verifier_fields={"reward": 0.5}),
    ]
    for r in rows:
        failure_service.classify_and_store(r)

    page.goto(f"{live_server.url}/failures/")
    assert page.locator("table.failure-list tbody tr").count() == 4
    matrix_row = page.locator("#failure-matrix tbody tr", has_text="model-a")
    cell = matrix_row.locator('td[data-cause="no_artifact"] a')
    assert cell.inner_text() == "2"
    cell.click()

    page.wait_for_url("**/failures/?*cause=no_artifact*")
    listed = page.locator("table.failure-list tbody tr")
    assert listed.count() == 2
    names = sorted(listed.nth(i).locator("td").first.inner_text() for i in range(2))
    assert names == sorted([rows[0].trial_name, rows[1].trial_name])
    # The filter form now shows the filters the cell applied.
    assert page.locator('select[name="cause"]').input_value() == "no_artifact"
    assert page.locator('select[name="model"]').input_value() == "model-a"

    # Narrow further with the form: one task only.
    page.select_option('select[name="task"]', "flux2_klein_lora")
    page.click("#failure-filters button[type=submit]")
    page.wait_for_url("**task=flux2_klein_lora**")
    assert page.locator("table.failure-list tbody tr").count() == 1
    # The exports carry the same filters.
    href = page.locator("#failure-filters a", has_text="CSV").get_attribute("href")
    assert href.startswith("/failures/export.csv?") and "task=flux2_klein_lora" in href and "cause=no_artifact" in href


def login(page, live_server, user) -> None:
    """Give the browser a logged-in session for `user` (no login form needed)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": live_server.url}])


def test_staff_relabel_on_the_rollout_page(live_server, page):
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_lora_file"})
    h.step(r, 1)
    h.step(r, 2, "submit")
    failure_service.classify_and_store(r)

    # Anonymous visitors see the cause and evidence, but no form.
    page.goto(f"{live_server.url}/rollouts/{r.pk}/")
    panel = page.locator("#failure")
    assert panel.locator("[data-cause='no_artifact']").count() >= 1
    assert "reason: no_lora_file" in panel.inner_text()
    assert panel.locator("form").count() == 0

    login(page, live_server, h.user("ada", staff=True))
    page.goto(f"{live_server.url}/rollouts/{r.pk}/")
    page.select_option("#failure select[name=cause]", "budget_exhausted")
    page.fill("#failure textarea[name=notes]", "trained for hours, never saved")
    page.click("#failure button:has-text('Save label')")
    page.wait_for_selector("#failure .failure-label")
    panel = page.locator("#failure")
    assert "staff label; automatic: No artifact" in panel.inner_text()
    assert "trained for hours, never saved" in panel.inner_text()

    page.click("#failure button:has-text('Clear label')")
    page.wait_for_selector("#failure .failure-label", state="detached")
    assert "(automatic)" in page.locator("#failure").inner_text()
    assert page.locator("#failure summary").inner_text() == "Label history (2)"
