import pytest
from django.urls import reverse

from . import factories

pytestmark = pytest.mark.django_db

URL = reverse("trajectories:rollout_list")


def listed(response) -> list[int]:
    return [r.pk for r in response.context["page"].object_list]


@pytest.fixture
def rollouts():
    hash_join = factories.make_task("hash_join", category="system_optimization")
    lora = factories.make_task("flux2_klein_lora", category="model_development")
    lora_old = factories.make_task("flux2_klein_lora", version="1.0", category="model_development")
    opus, grok = factories.make_model("claude-opus-4.6"), factories.make_model("grok-4.20")
    terminus, mini = factories.make_harness("terminus-2"), factories.make_harness("mini-swe-agent", "1.0")
    return {
        "a": factories.make_rollout(hash_join, opus, terminus, reward=0.9, n_steps=10),
        "b": factories.make_rollout(hash_join, grok, terminus, reward=0.0, status="failed", n_steps=3),
        "c": factories.make_rollout(lora, opus, mini, reward=0.5, n_steps=30),
        "d": factories.make_rollout(lora_old, grok, terminus, reward=None, status="running", n_steps=1),
    }


def test_lists_everything_by_default(client, rollouts):
    response = client.get(URL)
    assert response.status_code == 200
    assert sorted(listed(response)) == sorted(r.pk for r in rollouts.values())
    assert reverse("trajectories:rollout_detail", args=[rollouts["a"].pk]) in response.content.decode()


@pytest.mark.parametrize(
    "params, expected",
    [
        (lambda r: {"task": r["a"].task_id}, {"a", "b"}),
        (lambda r: {"task": "flux2_klein_lora"}, {"c", "d"}),
        (lambda r: {"category": "model_development"}, {"c", "d"}),
        (lambda r: {"model": r["a"].model_id}, {"a", "c"}),
        (lambda r: {"model": "grok-4.20"}, {"b", "d"}),
        (lambda r: {"harness": r["c"].harness_id}, {"c"}),
        (lambda r: {"version": "1.0"}, {"d"}),
        (lambda r: {"min": "0.5"}, {"a", "c"}),
        (lambda r: {"max": "0.5"}, {"b", "c"}),
        (lambda r: {"min": "0.1", "max": "0.6"}, {"c"}),
        (lambda r: {"status": "running"}, {"d"}),
        # The leaderboard heatmap's link.
        (lambda r: {"task": r["a"].task_id, "model": r["b"].model_id, "harness": r["b"].harness_id}, {"b"}),
    ],
)
def test_filters(client, rollouts, params, expected):
    response = client.get(URL, params(rollouts))
    assert response.status_code == 200
    assert set(listed(response)) == {rollouts[k].pk for k in expected}


@pytest.mark.parametrize("params", [{"min": "lots"}, {"sort": "password"}, {"model": "nobody"}])
def test_a_bad_value_is_a_400_that_names_it(client, rollouts, params):
    # They were ignored, which listed every rollout as if they matched.
    response = client.get(URL, params)
    assert response.status_code == 400
    assert list(response.context["form"].errors) == list(params) and listed(response) == []
    assert "Filter <code>%s</code>" % next(iter(params)) in response.content.decode()


def test_sorting(client, rollouts):
    by_reward = listed(client.get(URL, {"sort": "-reward"}))
    rewards = [r for r in by_reward if r != rollouts["d"].pk]
    assert rewards == [rollouts[k].pk for k in ("a", "c", "b")]
    assert listed(client.get(URL, {"sort": "steps"})) == [rollouts[k].pk for k in ("d", "b", "a", "c")]
    # An unknown sort key is a bad request (test_a_bad_value_is_a_400_that_names_it).


def test_pagination_50_per_page(client, django_assert_max_num_queries):
    task, model, harness = factories.make_task(), factories.make_model(), factories.make_harness()
    for i in range(60):
        factories.make_rollout(task, model, harness, index=i)
    with django_assert_max_num_queries(10):
        first = client.get(URL)
    assert len(first.context["page"].object_list) == 50
    second = client.get(URL, {"page": 2})
    assert len(second.context["page"].object_list) == 10
    assert "page 2 of 2" in second.content.decode()
    assert client.get(URL, {"page": "999"}).status_code == 200


def test_empty_list(client):
    assert "No rollouts match." in client.get(URL).content.decode()
