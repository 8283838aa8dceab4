import pytest
from django.urls import reverse

from trajectories import search

from . import factories

pytestmark = pytest.mark.django_db

URL = reverse("trajectories:search")


@pytest.fixture
def corpus():
    a = factories.make_rollout()
    b = factories.make_rollout(task=factories.make_task("other_task"))
    factories.add_step(a, 1, message="Profile the hash join before tuning.", kinds=["inspect"])
    factories.add_step(a, 2, commands=["python3 /app/evaluate_local.py --size large\n"], kinds=["benchmark"])
    factories.add_step(a, 3, outputs=["\x1b[32mthroughput: 1234 rows/s\x1b[0m"], kinds=["benchmark"])
    factories.add_step(b, 1, message="A different hash join task.", reasoning="Think about the hash join.", kinds=["inspect"])
    return a, b


def where(hits):
    return [(h.rollout_id, h.step_id, h.where) for h in hits]


def test_finds_messages_commands_and_outputs(corpus):
    a, b = corpus
    assert where(search.search_steps("hash join")) == [(a.pk, 1, "message"), (b.pk, 1, "message"), (b.pk, 1, "reasoning")]
    assert where(search.search_steps("evaluate_local.py")) == [(a.pk, 2, "command")]
    assert where(search.search_steps("throughput")) == [(a.pk, 3, "output")]


def test_snippets_are_plain_text(corpus):
    (hit,) = search.search_steps("throughput")
    assert hit.snippet == "throughput: 1234 rows/s"
    (hit,) = search.search_steps("evaluate_local")
    # JSON text of the arguments, with the typed newline shown as a space.
    assert "python3 /app/evaluate_local.py --size large " in hit.snippet and "\\n" not in hit.snippet


def test_filters(corpus):
    a, b = corpus
    assert {h.rollout_id for h in search.search_steps("hash join", search.Filters(task=b.task_id))} == {b.pk}
    assert {h.rollout_id for h in search.search_steps("hash join", search.Filters(model=a.model_id))} == {a.pk}
    assert search.search_steps("evaluate_local", search.Filters(kind="inspect")) == []
    assert len(search.search_steps("evaluate_local", search.Filters(kind="benchmark", harness=a.harness_id))) == 1


def test_nothing_for_blank_or_missing(corpus):
    assert search.search_steps("") == []
    assert search.search_steps("no-such-text-anywhere") == []


def test_view_links_to_the_step(client, corpus):
    a, _ = corpus
    response = client.get(URL, {"q": "evaluate_local"})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'href="/rollouts/{a.pk}/#step-2"' in html
    assert "1 match" in html


def test_view_filters_and_empty_query(client, corpus, django_assert_max_num_queries):
    a, b = corpus
    assert client.get(URL).status_code == 200
    with django_assert_max_num_queries(12):
        response = client.get(URL, {"q": "hash join", "task": b.task_id, "kind": "inspect"})
    assert {hit.rollout_id for hit, _ in response.context["results"]} == {b.pk}
    # Junk filter values are ignored, not errors.
    assert client.get(URL, {"q": "hash", "task": "x", "kind": "nonsense"}).status_code == 200


def test_hostile_text_in_results_is_escaped(client):
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="<script>alert('x')</script> payload")
    html = client.get(URL, {"q": "payload"}).content.decode()
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_full_text_on_postgresql_substring_elsewhere():
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="We join on a hash table of keys.")
    factories.add_step(rollout, 2, message="hash join hash join hash join")
    factories.add_step(rollout, 3, commands=["python3 /app/evaluate_local.py\n"])
    hits = search.search_steps("hash join")
    if search.uses_full_text():
        # Words in any order; the step that says them most ranks first.
        assert [h.step_id for h in hits] == [2, 1]
        assert hits[0].rank > hits[1].rank > 0
    else:
        assert [h.step_id for h in hits] == [2]
    # A fragment inside a path token: full text misses it, the fallback finds it.
    assert [h.step_id for h in search.search_steps("evaluate_local")] == [3]


def test_view_paginates_50_per_page(client):
    rollout = factories.make_rollout()
    for step_id in range(1, 61):
        factories.add_step(rollout, step_id, message=f"common-word {step_id}")
    first = client.get(URL, {"q": "common-word"})
    assert len(first.context["page"].object_list) == 50
    assert "60 matches" in first.content.decode() and "page 1 of 2" in first.content.decode()
    second = client.get(URL, {"q": "common-word", "page": 2}).content.decode()
    assert f'href="/rollouts/{rollout.pk}/#step-60"' in second
    assert f'href="/rollouts/{rollout.pk}/#step-1"' not in second


postgresql_only = pytest.mark.skipif(not search.uses_full_text(), reason="full-text documents exist on PostgreSQL only")


@postgresql_only
def test_output_document_keeps_every_word_of_a_repetitive_output():
    """The stored output document is built from distinct lines: same words, smaller."""
    from django.db import connection

    from trajectories.models import Observation

    progress = "INFO:trainer: epoch is incremented. current_epoch: 0, epoch: 2\n" * 300
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=[progress + "steps: 100%|██████| 3000/3000 avr_loss=0.305\n" + progress])
    factories.add_step(rollout, 2, outputs=["nothing to see"])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT strip(search_document) = strip(to_tsvector('simple', content)), length(search_document)"
            " FROM trajectories_observation ORDER BY id"
        )
        rows = cursor.fetchall()
    assert [same for same, _ in rows] == [True, True] and rows[0][1] > 5
    hits = search.search_steps("avr_loss")
    assert where(hits) == [(rollout.pk, 1, "output")] and hits[0].rank > 0
    # The document follows edits of the output.
    Observation.objects.filter(step__step_id=2).update(content="now avr_loss too")
    assert {h.step_id for h in search.search_steps("avr_loss")} == {1, 2}


@postgresql_only
def test_huge_texts_are_stored_and_their_start_found_by_full_text():
    """PostgreSQL refuses a tsvector over 1 MB: documents are cut, the rows are kept."""
    huge = "first-words here\n" + "".join(f"word{i} " for i in range(200_000)) + "\nlast-words"
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=[huge])
    factories.add_step(rollout, 2, message=huge.replace("words", "message"), commands=[huge.replace("words", "typed")])
    assert where(search.search_steps("first-words")) == [(rollout.pk, 1, "output")]
    assert where(search.search_steps("first-message")) == [(rollout.pk, 2, "message")]
    assert where(search.search_steps("first-typed")) == [(rollout.pk, 2, "command")]
    # Beyond the cut, the substring fallback still finds it.
    assert where(search.search_steps("last-words")) == [(rollout.pk, 1, "output")]
