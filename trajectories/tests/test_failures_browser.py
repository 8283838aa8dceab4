"""The failures page in a real browser: from a matrix cell to the filtered list."""
from __future__ import annotations

import pytest

from trajectories import failure_service

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
