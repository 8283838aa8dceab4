"""The same query string selects the same rows everywhere, and a bad value is a 400 that names its field.

One table of query strings per list, run against every representation of
the list: the rollouts page, /api/v1/rollouts/ and rollouts.csv; the
failures page and its CSV and JSON exports; the leaderboard and heatmap
pages and their API. Each table must hold a case for every parameter its
form owns, so a new filter fails here until it has one.
"""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from evaluations.forms import BoardFilters
from evaluations.tests.board_factories import build_boards, hand_table
from trajectories.forms import FailureFilters, RolloutFilters
from trajectories.models import FailureLabel
from trajectories.reading.review_data import Check, Reading
from trajectories.reviews import record_failed_review, record_review
from trajectories.tests import factories

pytestmark = pytest.mark.django_db


# Six rollouts that differ in every field some filter reads: task (version, category), model, harness, and the rest.
ROWS = {
    "a": (("hash_join", "1.1", "system_optimization"), "claude-opus-4.6", ("terminus-2", "2.0.0"),
          {"reward": 0.9, "outcome": "scored", "behaviour_flags": ["timed_out_but_scored", "regressed_after_best"]}),
    "b": (("hash_join", "1.1", "system_optimization"), "grok-4.20", ("terminus-2", "2.0.0"),
          {"reward": 0.0, "status": "failed", "outcome": "zero", "failure_cause": "no_artifact"}),
    "c": (("flux2_klein_lora", "1.1", "model_development"), "claude-opus-4.6", ("mini-swe-agent", "1.0"),
          {"reward": 0.5, "outcome": "scored", "behaviour_flags": ["regressed_after_best"]}),
    "d": (("flux2_klein_lora", "1.0", "model_development"), "grok-4.20", ("terminus-2", "1.0"),
          {"reward": None, "status": "running", "outcome": "running"}),
    "e": (("flux2_klein_lora", "1.1", "model_development"), "grok-4.20", ("terminus-2", "2.0.0"),
          {"reward": 0.0, "outcome": "zero", "failure_cause": "no_improvement", "behaviour_flags": ["sealed_below_visible"]}),
    "f": (("hash_join", "1.1", "system_optimization"), "claude-opus-4.6", ("mini-swe-agent", "1.0"),
          {"reward": 0.0, "outcome": "zero", "failure_cause": "no_artifact", "superseded": True}),
}


@pytest.fixture
def rows():
    tasks, models, made = {}, {}, {}
    for key, ((task, version, category), model, harness, fields) in ROWS.items():
        if (task, version) not in tasks:
            tasks[task, version] = factories.make_task(task, version=version, category=category)
        if model not in models:
            models[model] = factories.make_model(model)
        made[key] = factories.make_rollout(tasks[task, version], models[model], factories.make_harness(*harness), **fields)
    # A staff label decides the cause everywhere: the list, the API and the failures page.
    FailureLabel.objects.create(rollout=made["e"], cause="correctness_failed")
    # Reviews (Harbor's analysis.json, a judge's): the failures page filters on their checks.
    harbor = {"source": "harbor"}
    record_review(made["b"], Reading("b", (Check("reward_hacking", "fail"), Check("task_specification", "pass"))), **harbor)
    record_review(made["e"], Reading("e", (Check("reward_hacking", "pass"),)), **harbor)
    record_review(made["e"], Reading("e", (Check("reward_hacking", "fail"),)), source="judge", judge="gpt-x")
    record_review(made["a"], Reading("a", (Check("reward_hacking", "fail"),)), **harbor)  # scored: not a failure
    record_failed_review(made["f"], "malformed", source="judge", judge="gpt-x")
    return made


def ids(made: dict, keys: str) -> list[int]:
    return [made[k].pk for k in keys]


# (query, the rollouts it selects). A callable query reads ids of the fixture's rows.
ROLLOUT_CASES = [
    ({}, "abcdef"),
    ({"version": "1.0"}, "d"),
    (lambda r: {"task": r["a"].task_id}, "abf"),
    ({"task": "flux2_klein_lora"}, "cde"),
    ({"category": "model_development"}, "cde"),
    (lambda r: {"model": r["a"].model_id}, "acf"),
    ({"model": "grok-4.20"}, "bde"),
    (lambda r: {"harness": r["a"].harness_id}, "abe"),
    ({"harness": "terminus-2"}, "abde"),  # a name: every version of the harness
    ({"status": "running"}, "d"),
    ({"outcome": "zero"}, "bef"),
    ({"cause": "correctness_failed"}, "e"),
    ({"cause": "no_improvement"}, ""),  # the label overrides the automatic cause
    ({"cause": "no_artifact"}, "bf"),
    ({"flag": "regressed_after_best"}, "ac"),
    ({"min": "0.5"}, "ac"),
    ({"max": "0.5"}, "bcef"),
    ({"min": "0.1", "max": "0.6"}, "c"),
    ({"min": "0"}, "abcef"),
    # The heatmap's link to a cell's rollouts.
    (lambda r: {"task": r["b"].task_id, "model": r["b"].model_id, "harness": r["b"].harness_id}, "b"),
    # Empty values are no filter: the page's form sends every field.
    ({"task": "", "category": "", "model": "", "harness": "", "version": "", "status": "", "min": "", "max": "", "sort": "task"},
     "abcdef"),
]
# (query, the rollouts in order): with ?sort= the order agrees too.
SORTED_CASES = [
    ({"sort": "-reward", "max": "0.6"}, None),
    ({"sort": "model", "outcome": "zero"}, None),
    ({"sort": "steps"}, None),
]


def query_of(case, made) -> dict:
    return case(made) if callable(case) else case


def page_ids(client, url: str, query: dict) -> list[int]:
    response = client.get(url, query)
    assert response.status_code == 200, (url, query)
    return [r.pk for r in response.context["page"].object_list]  # one page holds them all here


def api_ids(client, query: dict) -> list[int]:
    response = client.get(reverse("evaluations:api_rollouts"), {**query, "page_size": 500})
    assert response.status_code == 200, query
    return [r["id"] for r in response.json()["results"]]


def csv_ids(response) -> list[int]:
    assert response.status_code == 200
    return [int(r["id"]) for r in csv.DictReader(io.StringIO(response.content.decode()))]


def test_every_rollouts_parameter_has_a_case(rows):
    used = {name for case, _ in ROLLOUT_CASES + SORTED_CASES for name in query_of(case, rows)}
    assert set(RolloutFilters.base_fields) <= used


@pytest.mark.parametrize("case, expected", ROLLOUT_CASES)
def test_rollouts_page_api_and_csv_select_the_same_rows(client, rows, case, expected):
    query = query_of(case, rows)
    wanted = sorted(ids(rows, expected))
    assert sorted(page_ids(client, reverse("trajectories:rollout_list"), query)) == wanted
    assert sorted(api_ids(client, query)) == wanted
    assert sorted(csv_ids(client.get(reverse("evaluations:api_rollouts_csv"), query))) == wanted


@pytest.mark.parametrize("query, _", SORTED_CASES)
def test_a_sort_orders_the_page_the_api_and_the_csv_alike(client, rows, query, _):
    order = page_ids(client, reverse("trajectories:rollout_list"), query)
    assert len(order) > 1
    assert api_ids(client, query) == order
    assert csv_ids(client.get(reverse("evaluations:api_rollouts_csv"), query)) == order


# (parameter, a value it refuses).
ROLLOUT_BAD = [
    ("version", "9.9"), ("task", "no_such_task"), ("task", "999999"), ("model", "nobody"), ("harness", "nothing"),
    ("category", "nope"), ("status", "sleeping"), ("outcome", "maybe"), ("cause", "bad_luck"), ("flag", "timed_out"),
    ("min", "lots"), ("max", "nan"), ("sort", "password"),
]


def test_every_rollouts_parameter_has_a_bad_value():
    assert {name for name, _ in ROLLOUT_BAD} == set(RolloutFilters.base_fields)


@pytest.mark.parametrize("name, value", ROLLOUT_BAD)
def test_a_bad_rollouts_value_is_a_400_naming_the_field(client, rows, name, value):
    page = client.get(reverse("trajectories:rollout_list"), {name: value})
    assert page.status_code == 400
    assert list(page.context["form"].errors) == [name]
    html = page.content.decode()
    assert 'id="filter-errors"' in html and "No rollouts match." in html
    for url in (reverse("evaluations:api_rollouts"), reverse("evaluations:api_rollouts_csv")):
        response = client.get(url, {name: value})
        assert response.status_code == 400
        errors = response.json()["errors"]
        assert list(errors) == [name] and errors[name]
        assert response.json()["error"].startswith(f"{name}: ")


FAILURE_CASES = [
    ({}, "be"),  # zero-score, ended, not superseded
    ({"task": "hash_join"}, "b"),
    (lambda r: {"task": r["e"].task_id}, "e"),
    ({"category": "system_optimization"}, "b"),
    ({"model": "grok-4.20"}, "be"),
    (lambda r: {"model": r["a"].model_id}, ""),
    (lambda r: {"harness": r["b"].harness_id}, "be"),
    ({"harness": "terminus-2"}, "be"),
    ({"version": "1.1"}, "be"),
    ({"version": "1.0"}, ""),
    ({"cause": "correctness_failed"}, "e"),
    ({"cause": "no_artifact"}, "b"),
    ({"check": "reward_hacking:fail"}, "be"),  # any source: Harbor's for b, the judge's for e
    ({"check": "reward_hacking:pass"}, "e"),
    ({"check": "task_specification: pass"}, "b"),  # spaces around the colon are forgiven
    ({"check": "task_specification:pass", "model": "grok-4.20"}, "b"),
    ({"flag": "sealed_below_visible"}, "e"),
    ({"flag": "regressed_after_best"}, ""),  # a and c scored: no failures
    ({"check": "", "cause": "", "flag": ""}, "be"),
]


def test_every_failures_parameter_has_a_case(rows):
    used = {name for case, _ in FAILURE_CASES for name in query_of(case, rows)}
    assert set(FailureFilters.base_fields) == used


@pytest.mark.parametrize("case, expected", FAILURE_CASES)
def test_failures_page_and_exports_select_the_same_rows(client, rows, case, expected):
    query = query_of(case, rows)
    wanted = sorted(ids(rows, expected))
    assert sorted(page_ids(client, reverse("trajectories:failures"), query)) == wanted
    assert sorted(csv_ids(client.get(reverse("trajectories:failures_export_csv"), query))) == wanted
    exported = client.get(reverse("trajectories:failures_export_json"), query).json()
    assert sorted(r["id"] for r in exported["rollouts"]) == wanted


FAILURE_BAD = [("version", "9.9"), ("harness", "notanumber"), ("task", "nothing"), ("model", "nobody"),
               ("category", "nope"), ("cause", "bad_luck"), ("check", "reward_hacking:maybe"),
               ("flag", "lucky")]


def test_every_failures_parameter_has_a_bad_value():
    assert {name for name, _ in FAILURE_BAD} == set(FailureFilters.base_fields)


@pytest.mark.parametrize("name, value", FAILURE_BAD)
def test_a_bad_failures_value_is_a_400_naming_the_field(client, rows, name, value):
    page = client.get(reverse("trajectories:failures"), {name: value})
    assert page.status_code == 400 and name in page.context["form"].errors
    assert 'id="filter-errors"' in page.content.decode()
    for url in (reverse("trajectories:failures_export_csv"), reverse("trajectories:failures_export_json")):
        response = client.get(url, {name: value})
        assert response.status_code == 400 and list(response.json()["errors"]) == [name]


def test_the_check_filter_offers_the_verdicts_reviews_gave(client, rows):
    page = client.get(reverse("trajectories:failures"))
    assert page.context["checks"] == ["reward_hacking:fail", "reward_hacking:pass", "task_specification:pass"]
    assert '<option value="reward_hacking:fail">' in page.content.decode()
    refused = client.get(reverse("trajectories:failures_export_json"), {"check": "reward_hacking:maybe"}).json()
    assert "checks: reward_hacking:fail, reward_hacking:pass, task_specification:pass" in refused["errors"]["check"][0]


@pytest.fixture
def board():
    return hand_table()


BOARD_CASES = [
    {},
    {"version": "1.1"},
    {"category": "alpha"},
    {"open_weight": "0"},
    {"open_weight": "true"},
    {"open_weight": "TRUE", "category": "beta"},
    "harness",
]


def board_query(case, made) -> dict:
    return {"harness": made["harness"].pk} if case == "harness" else case


def test_every_board_parameter_has_a_case(board):
    assert set(BoardFilters.base_fields) == {name for case in BOARD_CASES for name in board_query(case, board)}


@pytest.mark.parametrize("case", BOARD_CASES, ids=str)
def test_boards_pages_and_api_show_the_same_entries(client, board, case):
    query = board_query(case, board)
    form = BoardFilters(query)
    assert form.is_valid()
    chosen = form.cleaned_data
    build_boards(chosen["version"], harness=chosen["harness"], open_weight=chosen["open_weight"])
    page = client.get(reverse("evaluations:leaderboard"), query)
    assert page.status_code == 200
    shown = sorted(r["entry"].model for key in ("rows", "human_rows", "other_rows") for r in page.context[key])
    api = client.get(reverse("evaluations:api_leaderboard"), query).json()
    assert sorted(e["model"] for e in api["entries"]) == shown
    table = csv.DictReader(io.StringIO(client.get(reverse("evaluations:api_leaderboard_csv"), query).content.decode()))
    assert sorted(r["model"] for r in table if r["origin"] == "measured") == shown
    heat = client.get(reverse("evaluations:heatmap"), query)
    assert heat.status_code == 200 and sorted(e.model for e in heat.context["entries"]) == shown
    cells = client.get(reverse("evaluations:api_heatmap"), query).json()["cells"]
    assert sorted({c["model"] for c in cells}) == sorted(set(shown))


BOARD_BAD = [("harness", "abc"), ("harness", "99999"), ("open_weight", "maybe"), ("category", "nope")]
BOARD_URLS = ["evaluations:leaderboard", "evaluations:heatmap"]
BOARD_API = ["evaluations:api_leaderboard", "evaluations:api_leaderboard_csv", "evaluations:api_heatmap",
             "evaluations:api_heatmap_csv", "evaluations:api_time_curves", "evaluations:api_time_curves_csv"]


@pytest.mark.parametrize("name, value", BOARD_BAD)
def test_a_bad_board_value_is_a_400_naming_the_field(client, board, name, value):
    for url in BOARD_URLS:
        page = client.get(reverse(url), {name: value})
        assert page.status_code == 400 and name in page.context["form"].errors
        assert 'id="filter-errors"' in page.content.decode()
    for url in BOARD_API:
        response = client.get(reverse(url), {name: value})
        assert response.status_code == 400 and list(response.json()["errors"]) == [name], url


def test_an_unknown_version_is_still_a_404(client, board):
    for url in BOARD_URLS + BOARD_API:
        assert client.get(reverse(url), {"version": "9.9"}).status_code == 404, url
