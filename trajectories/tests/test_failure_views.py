"""The failures page, its exports, the label endpoint and the rollout panel."""
from __future__ import annotations

import csv
import io
import re

import pytest
from django.template import Context, Template
from django.test import Client, RequestFactory

from trajectories.failures import service as failure_service
from trajectories.models import FailureLabel, LabelChange

from . import failure_helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    """Two entries: model-a (3 failures of 4) and model-b (1 failure of 2), plus a running rollout."""
    a, b = h.model("model-a"), h.model("model-b")
    other = h.task("flux2_klein_lora", category="model_development")
    rows = {
        "a_no_artifact": h.rollout(model=a, verifier_fields={"reward": 0.0, "reason": "no_binary"}),
        "a_no_artifact2": h.rollout(model=a, task=other, verifier_fields={"reward": 0.0, "reason": "no_lora_file"}),
        "a_correct": h.rollout(model=a, verifier_fields={"reward": 0.0, "correctness": False}),
        "a_scored": h.rollout(model=a, reward=0.8, verifier_fields={"reward": 0.8}),
        "b_timeout": h.rollout(model=b, exception_type="AgentTimeoutError", verifier_fields={"reward": 0.0, "reason": "no_binary"}),
        "b_scored": h.rollout(model=b, reward=0.4, verifier_fields={"reward": 0.4}),
        "b_running": h.rollout(model=b, status="running", reward=None, verifier_fields={}),
    }
    for r in rows.values():
        failure_service.classify_and_store(r)
    return rows


def test_failures_page_lists_zero_score_rollouts_with_matrix(client, data):
    response = client.get("/failures/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'aria-current="page">Failures' in html
    for key in ("a_no_artifact", "a_no_artifact2", "a_correct", "b_timeout"):
        assert data[key].trial_name in html
    for key in ("a_scored", "b_scored", "b_running"):
        assert data[key].trial_name not in html
    matrix = response.context["matrix"]
    assert [code for code, _ in matrix["columns"]] == ["no_artifact", "budget_exhausted", "correctness_failed"]
    rows = {row.model.name: row for row in matrix["rows"]}
    assert (rows["model-a"].failed, rows["model-a"].total) == (3, 4)
    assert (rows["model-b"].failed, rows["model-b"].total) == (1, 2)  # the running one is not counted
    assert [count for _, count, _ in rows["model-a"].cells] == [2, 0, 1]
    assert "75%" in html and "50%" in html
    assert "automatic" in html  # the page says where the cause comes from


def test_matrix_cells_link_into_the_filtered_list(client, data):
    html = client.get("/failures/").content.decode()
    harness = data["a_correct"].harness_id
    href = f"?model=model-a&amp;harness={harness}&amp;version=1.1&amp;cause=no_artifact#failure-list"
    assert f'href="{href}"' in html
    response = client.get(f"/failures/?model=model-a&harness={harness}&version=1.1&cause=no_artifact")
    listed = [item["rollout"] for item in response.context["rollouts"]]
    assert sorted(r.pk for r in listed) == sorted([data["a_no_artifact"].pk, data["a_no_artifact2"].pk])


@pytest.mark.parametrize(
    "query, expected",
    [
        ("task=hash_join", ["a_no_artifact", "a_correct", "b_timeout"]),
        ("category=model_development", ["a_no_artifact2"]),
        ("model=model-b", ["b_timeout"]),
        ("cause=budget_exhausted", ["b_timeout"]),
    ],
)
def test_filters(client, data, query, expected):
    response = client.get(f"/failures/?{query}")
    assert response.status_code == 200
    assert sorted(item["rollout"].pk for item in response.context["rollouts"]) == sorted(data[k].pk for k in expected)


@pytest.mark.parametrize("query, field", [("version=9.9", "version"), ("harness=notanumber", "harness")])
def test_a_bad_filter_is_a_400_that_names_it(client, data, query, field):
    # They listed nothing, as if no rollout had failed.
    response = client.get(f"/failures/?{query}")
    assert response.status_code == 400
    assert list(response.context["form"].errors) == [field] and response.context["rollouts"] == []


def test_effective_cause_is_the_label_when_present(client, data):
    failure_service.set_label(data["a_correct"], h.user("ada", staff=True), cause="nondeterministic")
    response = client.get("/failures/?cause=nondeterministic")
    [item] = response.context["rollouts"]
    assert item["rollout"].pk == data["a_correct"].pk and item["source"] == "label"
    assert client.get("/failures/?cause=correctness_failed").context["rollouts"] == []


def test_label_post_requires_staff(client, data):
    r = data["a_no_artifact"]
    url = f"/rollouts/{r.pk}/label/"
    assert client.post(url, {"cause": "unknown"}).status_code == 302  # anonymous: sent to log in
    client.force_login(h.user("eve", staff=False))
    assert client.post(url, {"cause": "unknown"}).status_code == 403
    assert not FailureLabel.objects.exists() and not LabelChange.objects.exists()


def test_label_post_is_csrf_protected():
    staff = h.user("ada", staff=True)
    r = h.rollout()
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.post(f"/rollouts/{r.pk}/label/", {"cause": "unknown"}).status_code == 403
    assert not FailureLabel.objects.exists()


def test_staff_sets_and_clears_label(client, data):
    r = data["a_no_artifact"]
    client.force_login(h.user("ada", staff=True))
    response = client.post(f"/rollouts/{r.pk}/label/", {"cause": "premature_termination", "notes": "n", "tags": "x, y", "next": "/failures/"})
    assert response.status_code == 303 and response["Location"] == "/failures/"
    label = FailureLabel.objects.get(rollout=r)
    assert (label.cause, label.notes, label.tags) == ("premature_termination", "n", ["x", "y"])
    response = client.post(f"/rollouts/{r.pk}/label/", {"action": "clear", "next": "https://evil.example/"})
    assert response.status_code == 303 and response["Location"] == f"/rollouts/{r.pk}/#failure"
    assert not FailureLabel.objects.exists()
    assert LabelChange.objects.filter(rollout=r).count() == 2


def test_bad_cause_is_reported_not_stored(client, data):
    client.force_login(h.user("ada", staff=True))
    response = client.post(f"/rollouts/{data['a_correct'].pk}/label/", {"cause": "bad_luck"}, follow=True)
    assert "unknown cause" in response.content.decode()
    assert not FailureLabel.objects.exists()


def test_label_endpoint_is_post_only(client, data):
    client.force_login(h.user("ada", staff=True))
    assert client.get(f"/rollouts/{data['a_correct'].pk}/label/").status_code == 405


def test_csv_export_uses_the_filters(client, data):
    response = client.get("/failures/export.csv?model=model-a&cause=no_artifact")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert sorted(row["trial_name"] for row in rows) == sorted([data["a_no_artifact"].trial_name, data["a_no_artifact2"].trial_name])
    row = next(r for r in rows if r["trial_name"] == data["a_no_artifact"].trial_name)
    assert row["cause"] == "no_artifact" and row["cause_source"] == "automatic"
    assert "[no_artifact] reason: no_binary" in row["evidence"]


def test_json_export(client, data):
    failure_service.set_label(data["b_timeout"], h.user("ada", staff=True), cause="agent_error", tags=["api"])
    payload = client.get("/failures/export.json?model=model-b").json()
    assert payload["filters"] == {"model": "model-b"} and payload["count"] == 1
    [row] = payload["rollouts"]
    assert (row["cause"], row["cause_source"], row["automatic_cause"], row["label_tags"]) == ("agent_error", "label", "budget_exhausted", ["api"])
    assert row["secondary"] == ["no_artifact"]
    assert row["url"] == f"/rollouts/{data['b_timeout'].pk}/"


def render_panel(rollout, user):
    request = RequestFactory().get(f"/rollouts/{rollout.pk}/")
    request.user = user
    template = Template('{% include "trajectories/_failure_panel.html" with rollout=rollout %}')
    return template.render(Context({"rollout": rollout, "request": request, "csrf_token": "tok"}))


def test_panel_shows_cause_evidence_and_step_links(data):
    from django.contrib.auth.models import AnonymousUser

    r = h.rollout(verifier_fields={"reward": 0.0, "correctness": True, "metric": 3.0})
    h.step(r, 6, "edit", diff="--- a/app/Makefile\n+++ b/app/Makefile\n")
    failure_service.classify_and_store(r)
    html = render_panel(r, AnonymousUser())
    assert 'data-cause="protected_file_modified"' in html
    assert f'href="/rollouts/{r.pk}/?step=6"' in html
    assert "(automatic)" in html
    assert "<form" not in html


def test_panel_shows_label_and_form_to_staff(data):
    staff = h.user("ada", staff=True)
    r = data["a_correct"]
    failure_service.set_label(r, staff, cause="nondeterministic", notes="flaky harness <b>", tags="x")
    r.refresh_from_db()
    html = render_panel(r, staff)
    assert "staff label; automatic: Correctness failed" in html
    assert "flaky harness &lt;b&gt;" in html  # escaped
    assert re.search(r'<form method="post" action="/rollouts/%d/label/"' % r.pk, html)
    assert '<option value="nondeterministic" selected>' in html
    assert "Label history (1)" in html and "ada" in html


def test_panel_for_scored_rollout(data):
    from django.contrib.auth.models import AnonymousUser

    html = render_panel(data["a_scored"], AnonymousUser())
    assert "no failure" in html and "data-cause" not in html


def test_badge_partial_shows_the_effective_cause(data):
    template = Template('{% include "trajectories/_failure_badge.html" with rollout=rollout %}')
    r = data["a_correct"]
    assert 'data-cause="correctness_failed"' in template.render(Context({"rollout": r}))
    failure_service.set_label(r, h.user("ada", staff=True), cause="nondeterministic")
    r.refresh_from_db()
    html = template.render(Context({"rollout": r}))
    assert 'data-cause="nondeterministic"' in html and 'title="staff label"' in html
    assert template.render(Context({"rollout": data["a_scored"]})).strip() == ""


def test_panel_names_flags_and_outcome_as_the_failures_page_does(data):
    """The panel showed "regressed_after_best" and "outcome zero": raw ids, where the failures page shows labels."""
    from django.contrib.auth.models import AnonymousUser

    from trajectories.failures.rules import FLAG_LABELS, FLAGS, REGRESSED_AFTER_BEST
    from trajectories.verdict import OUTCOME_LABELS

    r = data["a_correct"]
    r.behaviour_flags = [REGRESSED_AFTER_BEST]
    r.save(update_fields=["behaviour_flags"])
    html = render_panel(r, AnonymousUser())
    flag = FLAG_LABELS[REGRESSED_AFTER_BEST]
    assert f'title="{FLAGS[REGRESSED_AFTER_BEST][:1].upper()}' in html and f">{flag}</span>" in html
    assert f">{REGRESSED_AFTER_BEST}<" not in html
    assert f"outcome: {OUTCOME_LABELS[r.outcome].lower()}" in html and f"outcome {r.outcome}" not in html
    scored = render_panel(data["a_scored"], AnonymousUser())
    assert f">{OUTCOME_LABELS['scored']}</span> — no failure" in scored


def test_every_outcome_has_a_label_and_the_rollout_list_shows_them():
    """The /rollouts/ Outcome select listed raw ids (no_reward, infra_error)."""
    from trajectories.forms import OUTCOMES
    from trajectories.verdict import OUTCOME_LABELS, Outcome

    assert set(OUTCOME_LABELS) == {v for k, v in vars(Outcome).items() if k.isupper()} == set(OUTCOMES)
    html = Client().get("/rollouts/", {"outcome": "no_reward"}).content.decode()
    select = html.split('name="outcome"', 1)[1].split("</select>", 1)[0]
    for outcome in OUTCOMES:
        assert f'<option value="{outcome}"' in select and f">{OUTCOME_LABELS[outcome]}</option>" in select
    assert '<option value="no_reward" selected>No reward</option>' in select and ">infra_error<" not in select


def test_the_rollout_pages_result_card_names_the_cause(client, data):
    """The Result card showed "no_artifact", a raw id beside the failure panel's label."""
    from trajectories.failures.rules import CAUSES

    r = data["a_no_artifact"]
    html = client.get(f"/rollouts/{r.pk}/").content.decode()
    assert f'<span class="badge bad" title="{r.failure_cause}">{CAUSES[r.failure_cause]}</span>' in html
    assert f'<span class="badge bad">{r.failure_cause}</span>' not in html
