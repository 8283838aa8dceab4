"""The model page (/models/<name>/) and the results section of the task page."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluations.tests.board_factories import build_boards

from trajectories.models import Rollout


pytestmark = pytest.mark.django_db


def test_model_page_lists_entries_tasks_rollouts_and_failures(client, world):
    Rollout.objects.filter(model__name="model-a", reward=0.0).update(outcome="zero", failure_cause="no_improvement")
    Rollout.objects.filter(model__name="model-a", reward=0.2).update(outcome="scored", failure_cause="")
    Rollout.objects.filter(model__name="model-a", infra_error=True).update(outcome="infra_error", failure_cause="infrastructure_error")
    response = client.get(reverse("evaluations:model_detail", args=["model-a"]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Model A" in html
    entries = html.split('id="model-entries"', 1)[1].split("</table>", 1)[0]
    assert "0.350" in entries and "3/4 tasks, 9 rollouts" in entries and "1 infra" in entries
    assert "no counted rollout (0)" in html  # t4: only an infra error
    assert "0.600, 0.600, 0.900" in html
    failures = response.context["failures"]
    assert failures == [{"effective_cause": "infrastructure_error", "n": 1}, {"effective_cause": "no_improvement", "n": 1}]
    assert "/failures/?model=model-a" in html
    assert response.context["n_rollouts"] == 10
    assert html.count('href="/rollouts/') >= 10


def test_the_tasks_table_names_categories_as_the_leaderboard_does(client, world):
    """A QA pass saw "model_development" here and "Model development" on the leaderboard."""
    from tasks.models import Task

    Task.objects.filter(name="t1").update(category="model_development")
    build_boards(world["version"])
    html = client.get(reverse("evaluations:model_detail", args=["model-a"])).content.decode()
    assert '1.1/t1/">t1</a></td><td>Model development</td>' in html and "<td>model_development</td>" not in html


def test_model_with_dots_in_its_name(client, world):
    world["models"]["A"].name = "claude-opus-4.6"
    world["models"]["A"].save()
    assert client.get("/models/claude-opus-4.6/").status_code == 200
    assert client.get("/models/unknown/").status_code == 404


def test_a_model_named_with_a_slash_has_its_page_and_links(client, world):
    """Harbor and litellm names keep an organisation the importer does not strip ("Qwen/Qwen2.5-Coder",
    "together_ai/meta-llama/Llama-3-70b"): the board and task pages linking to its page answered 500."""
    world["models"]["A"].name = "together_ai/meta-llama/Llama-3-70b"
    world["models"]["A"].save()
    build_boards(world["version"])
    page = client.get("/models/together_ai/meta-llama/Llama-3-70b/")
    assert page.status_code == 200
    assert client.get("/models/together_ai/meta-llama/").status_code == 404
    for url in ("/", reverse("evaluations:task_detail", args=[world["version"].name, "t3"])):
        response = client.get(url)
        assert response.status_code == 200, url
        assert 'href="/models/together_ai/meta-llama/Llama-3-70b/"' in response.content.decode(), url


def test_task_page_results_section(client, world):
    task = world["tasks"]["t3"]
    response = client.get(reverse("evaluations:task_detail", args=[world["version"].name, task.name]))
    html = response.content.decode()
    section = html.split('<section id="results">', 1)[1].split("</section>", 1)[0]
    models = [r.entry.model for r in response.context["task_results"]]
    assert models == ["model-b", "model-a", "model-c"]
    best = Rollout.objects.get(model__name="model-a", task=task, reward=0.9)
    assert f'href="/rollouts/{best.id}/"' in section
    assert "0.700" in section and "0.900" in section
    empty = client.get(reverse("evaluations:task_detail", args=[world["version"].name, "t4"])).content.decode()
    assert "1 infra" in empty


def test_model_page_shows_published_results(client, world):
    from agents.models import AgentModel
    from evaluations.models import PublishedResult

    paper = AgentModel.objects.create(name="paper-only")
    PublishedResult.objects.create(
        model=paper, harness=world["harness"], version=world["version"], task=world["tasks"]["t1"], score=0.8,
        source="Paper, Table 3",
    )
    build_boards(world["version"])
    html = client.get(reverse("evaluations:model_detail", args=["paper-only"])).content.decode()
    published = html.split('id="model-published"', 1)[1].split("</table>", 1)[0]
    assert "Paper, Table 3" in published and "0.200" in published and "1/4" in published


def test_the_task_and_model_pages_call_the_best_rollout_by_its_number(client, world):
    """They said "#9" (its database id) where the rollout's own page says "rollout 1"."""
    task = world["tasks"]["t3"]
    best = Rollout.objects.get(model__name="model-a", task=task, reward=0.9)
    Rollout.objects.filter(pk=best.pk).update(index=best.pk + 4)  # a number that is not its id
    best.refresh_from_db()
    link = f'<a href="/rollouts/{best.pk}/">rollout {best.number}</a>'
    pages = [
        client.get(reverse("evaluations:task_detail", args=[world["version"].name, task.name])).content.decode(),
        client.get(reverse("evaluations:model_detail", args=["model-a"])).content.decode(),
    ]
    for html in pages:
        assert link in html
        assert not re.search(r">#\d+</a>", html)
    assert f"rollout {best.number}</h1>" in client.get(f"/rollouts/{best.pk}/").content.decode()
