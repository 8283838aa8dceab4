"""The staff's "Analyse with the judge" button on the failures and rollout pages.

The Celery task runs eagerly here (inside the request, as a worker would
run it) against a stub judge: a POST reads the rollout(s) and the verdict
is on the failures page after the redirect. Only staff see and use it.
"""
from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents.models import AgentModel
from autolab_site.celery import app
from trajectories.analysis.judge_rubric import load_rubric
from trajectories.models import Review
from trajectories.tests import factories
from trajectories.tests.stub_judge import Rule, StubJudge

pytestmark = pytest.mark.django_db
URL = "/failures/analyze/"


@pytest.fixture
def eager():
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def stub():
    judge = StubJudge().start()
    names = load_rubric().names
    checks = {name: {"outcome": "fail" if name == "premature_stop" else "pass", "explanation": "e", "steps": [2]} for name in names}
    judge.rules = [Rule("Task: ", json.dumps({"summary": "Stopped early.", "checks": checks}))]
    yield judge
    judge.stop()


@pytest.fixture
def judge_model(stub):
    return AgentModel.objects.create(
        name="stub-judge", litellm_model="openai/stub-judge", api_base=stub.api_base, is_judge=True,
        sampling_params={"api_key": "stub-needs-no-key"},
    )


@pytest.fixture
def failed():
    task = factories.make_task("hash_join")
    rollouts = []
    for index in (1, 2):
        rollout = factories.make_rollout(task, reward=0.0, outcome="zero", failure_cause="no_artifact", status="finished", index=index)
        factories.add_step(rollout, 1, source="user", message="Make the join fast.")
        factories.add_step(rollout, 2, commands=["python bench.py\n"], outputs=["time: 2.0 s"], kinds=["benchmark"])
        rollouts.append(rollout)
    other = factories.make_rollout(factories.make_task("regex_engine"), reward=0.0, outcome="zero", failure_cause="unknown", status="finished")
    return rollouts + [other]


def client_of(**fields) -> Client:
    client = Client()
    client.force_login(User.objects.create_user(fields.pop("username", "u"), password="pw", **fields))
    return client


def test_url_name():
    assert reverse("trajectories:analyze") == URL


def test_only_staff_see_it_and_may_use_it(judge_model, failed, eager):
    someone = client_of(username="someone")
    assert "judge-button" not in someone.get(reverse("trajectories:failures")).content.decode()
    assert "judge-button" not in someone.get(reverse("trajectories:rollout_detail", args=[failed[0].pk])).content.decode()
    assert someone.post(URL, {"judge": "stub-judge", "max_tokens": 30000, "rollout": failed[0].pk}).status_code == 403
    assert Client().post(URL, {"judge": "stub-judge", "max_tokens": 30000, "rollout": failed[0].pk}).status_code == 302
    assert not Review.objects.exists()


def test_the_rollout_pages_button_reads_that_rollout(judge_model, failed, eager, stub):
    staff = client_of(username="staff", is_staff=True)
    page = staff.get(reverse("trajectories:rollout_detail", args=[failed[0].pk])).content.decode()
    assert "Analyse this rollout with the judge" in page and f'name="rollout" value="{failed[0].pk}"' in page
    back = reverse("trajectories:rollout_detail", args=[failed[0].pk])
    response = staff.post(URL, {"judge": "stub-judge", "max_tokens": 30000, "rollout": failed[0].pk, "next": back})
    assert response.status_code == 303 and response["Location"] == back
    review = Review.objects.get()
    assert (review.rollout, review.state, review.requested_by.username) == (failed[0], "done", "staff")
    assert review.checks.get(name="premature_stop").steps == [2]
    followed = staff.get(back).content.decode()
    # The rollout by the number its page gives it, not its database id.
    assert f"Analysis of rollout {failed[0].number} of {failed[0].task.name} by stub-judge queued" in followed


def test_the_failures_pages_button_reads_what_its_filters_list(judge_model, failed, eager, stub):
    staff = client_of(username="staff", is_staff=True)
    page = staff.get(reverse("trajectories:failures"), {"task": "hash_join"}).content.decode()
    assert "Analyse these failures with the judge" in page and 'name="filters" value="task=hash_join"' in page
    staff.post(URL, {"judge": "stub-judge", "max_tokens": 30000, "filters": "task=hash_join"})
    assert set(Review.objects.values_list("rollout_id", flat=True)) == {failed[0].pk, failed[1].pk}
    listed = staff.get(reverse("trajectories:failures")).content.decode()
    assert 'data-check="premature_stop"' in listed

    # Again: already read, the judge is not asked; with "replace" it is.
    asked = len(stub.requests)
    staff.post(URL, {"judge": "stub-judge", "max_tokens": 30000, "filters": "task=hash_join"})
    assert len(stub.requests) == asked
    staff.post(URL, {"judge": "stub-judge", "max_tokens": 30000, "filters": "task=hash_join", "replace": "1"})
    assert len(stub.requests) == asked + 2


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"judge": "nobody", "max_tokens": 30000}, "judge: Select a valid choice"),
        ({"judge": "stub-judge", "max_tokens": 10}, "max_tokens"),
        ({"judge": "stub-judge", "max_tokens": "lots"}, "max_tokens"),
        ({"judge": "stub-judge", "max_tokens": 30000, "rollout": 999999}, "No rollout has the id 999999"),
        ({"judge": "stub-judge", "max_tokens": 30000, "filters": "cause=nonsense"}, "filters are not valid"),
        ({"judge": "stub-judge", "max_tokens": 30000, "filters": "task=regex_engine&cause=no_artifact"}, "no failed rollout matches"),
    ],
)
def test_bad_input_queues_nothing_and_says_why(judge_model, failed, eager, data, error):
    staff = client_of(username="staff", is_staff=True)
    response = staff.post(URL, data, follow=True)
    assert response.status_code == 200
    text = response.content.decode()
    assert "Nothing was queued" in text and error in text.replace("&#x27;", "'")
    assert not Review.objects.exists()


def test_without_a_registered_judge_the_page_says_how_to_register_one(failed):
    staff = client_of(username="staff", is_staff=True)
    assert "No LLM judge registered" in staff.get(reverse("trajectories:failures")).content.decode()
    response = staff.post(URL, {"judge": "x", "max_tokens": 30000}, follow=True)
    assert "no model is registered as a judge" in response.content.decode()


def test_a_judge_removed_before_the_worker_runs_ends_the_task_with_the_reason(failed):
    from trajectories import services

    assert services.analyze_rollouts([failed[0].pk], judge="gone", budget=30000) == {
        "error": "no model is registered as 'gone' (add it in the admin as an Agent model)"
    }
    assert not Review.objects.exists()
