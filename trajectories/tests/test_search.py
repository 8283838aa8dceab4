import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from trajectories.search import query as search

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
    # What was typed, its newline shown as a space, not JSON escapes.
    assert "python3 /app/evaluate_local.py --size large" in hit.snippet and "\\n" not in hit.snippet


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
    assert f'href="/rollouts/{a.pk}/?step=2"' in html
    assert "1 match" in html


@pytest.mark.parametrize("params, field", [({"task": "abc"}, "task"), ({"model": "-1"}, "model"),
                                           ({"harness": "1.5"}, "harness"), ({"kind": "dance"}, "kind")])
def test_a_bad_filter_is_said_not_dropped(client, corpus, params, field):
    """?task=abc searched every task and said nothing (a QA pass); the rollouts list answers such a filter 400."""
    response = client.get(URL, {"q": "hash", **params})
    assert response.status_code == 400
    html = response.content.decode()
    assert f"Filter <code>{field}</code>:" in html and "1 match" not in html and "matches" not in html


def test_good_filters_narrow_the_view(client, corpus):
    a, b = corpus
    html = client.get(URL, {"q": "hash join", "task": a.task_id, "kind": "inspect"}).content.decode()
    assert f'href="/rollouts/{a.pk}/?step=1' in html and f'href="/rollouts/{b.pk}/' not in html
    assert f'<option value="{a.task_id}" selected>' in html and '<option value="inspect" selected>' in html


def test_view_marks_the_matched_words_in_snippets(client, corpus):
    html = client.get(URL, {"q": "evaluate_loc"}).content.decode()
    assert "python3 /app/<mark>evaluate</mark>_<mark>local</mark>.py --size large" in html


def test_view_marks_a_substring_match_and_escapes_around_it(client, settings):
    settings.AUTOLAB_SEARCH_MIN_CHARS = 2  # "->" is shorter than the default minimum
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="if a->b <then> x")
    # No letters or digits: no words, so the text is matched as typed.
    html = client.get(URL, {"q": "->"}).content.decode()
    assert "no step holds every word" in html
    assert "if a<mark>-&gt;</mark>b &lt;then&gt; x" in html


def test_view_filters_and_empty_query(client, corpus, django_assert_max_num_queries):
    a, b = corpus
    assert client.get(URL).status_code == 200
    # 13: search's statement timeout is one SET, and its reset inside the test's transaction.
    with django_assert_max_num_queries(13):
        response = client.get(URL, {"q": "hash join", "task": b.task_id, "kind": "inspect"})
    assert {hit.rollout_id for hit, _ in response.context["results"]} == {b.pk}
    # Junk filter values are refused with their reason (test_a_bad_filter_is_said_not_dropped), as the rollouts
    # list refuses them: they were ignored, and the search ran over everything unsaid.
    assert client.get(URL, {"q": "hash", "task": "x", "kind": "nonsense"}).status_code == 400


def test_hostile_text_in_results_is_escaped(client):
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="<script>alert('x')</script> payload")
    html = client.get(URL, {"q": "payload"}).content.decode()
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_words_in_any_order_exact_phrase_first():
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="We join on a hash table of keys.")
    factories.add_step(rollout, 2, message="Hash join, then hash join again.")
    factories.add_step(rollout, 3, commands=["python3 /app/evaluate_local.py\n"])
    hits = search.search_steps("hash join")
    assert [h.step_id for h in hits] == [2, 1]
    assert hits[0].rank > hits[1].rank > 0
    # A fragment of a path: its words find it, centred on the fragment.
    (hit,) = search.search_steps("evaluate_local")
    assert hit.step_id == 3 and hit.rank == 1.0 and "/app/evaluate_local.py" in hit.snippet
    # Punctuation in the query is no operator: the same words, the same steps.
    assert [h.step_id for h in search.search_steps("local & !evaluate")] == [3]
    # The last word may be unfinished, as while typing; the others may not.
    assert [h.step_id for h in search.search_steps("evaluate_loc")] == [3]
    assert [h.step_id for h in search.search_steps("hash jo")] == [2, 1]
    (hit,) = search.search_steps("ash join")  # no word "ash": the substring stage finds it
    assert hit.step_id == 2 and hit.rank == 0.0

def test_substring_fallback_when_no_step_has_every_word(settings):
    settings.AUTOLAB_SEARCH_MIN_CHARS = 2  # "->" is shorter than the default minimum
    rollout = factories.make_rollout()
    other = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=["loss=0.5 ->"], commands=["python3 /app/evaluate_local.py\n"])
    factories.add_step(other, 1, outputs=["nothing -> here"])
    # "->" has no words at all; only the substring stage can find it.
    assert where(search.search_steps("->")) == [(rollout.pk, 1, "output"), (other.pk, 1, "output")]
    assert search.search_steps("->")[0].rank == 0.0
    # A fragment inside words: found by substring, in the rollouts whose words hold its pieces.
    assert where(search.search_steps("aluate_loc")) == [(rollout.pk, 1, "command")]


def test_the_substring_stage_reads_rollouts_in_batches_and_stops_once_it_has_enough(monkeypatch):
    """Rollouts are read a growing batch at a time, a batch's steps a few at a time; the hits are the first in order."""
    rollouts = [factories.make_rollout() for _ in range(20)]
    for rollout in rollouts:
        factories.add_step(rollout, 1, outputs=["$ python3 /app/evaluate_local.py"])
        factories.add_step(rollout, 2, message="evaluate the local copy")  # both words, not the fragment
        factories.add_step(rollout, 3, commands=["python3 /app/evaluate_local.py\n"])
    everything = where(search.search_steps("aluate_loc", limit=100))
    assert everything == [(r.pk, step, kind) for r in rollouts for step, kind in ((1, "output"), (3, "command"))]
    monkeypatch.setattr(search, "STEPS_PER_STATEMENT", 1)
    assert where(search.search_steps("aluate_loc", limit=100)) == everything
    # Enough hits in the first batch (8 rollouts): the other 12 are not read.
    monkeypatch.setattr(search, "STEPS_PER_STATEMENT", 2_000)
    for limit, batches in ((5, 1), (100, 2)):
        with CaptureQueriesContext(connection) as queries:
            assert where(search.search_steps("aluate_loc", limit=limit)) == everything[:limit]
        step_lists = [q for q in queries.captured_queries if q["sql"].startswith('SELECT "trajectories_step"."id" AS "pk"')]
        assert len(step_lists) == batches


def test_an_output_line_is_found_at_the_step_that_first_showed_it():
    """Terminal screens repeat: a line is indexed once, where it appeared."""
    rollout = factories.make_rollout()
    screen = "$ python3 train.py\nCUDA out of memory\n"
    factories.add_step(rollout, 1, outputs=["$ ls\nREADME.md"])
    factories.add_step(rollout, 2, outputs=[screen])
    factories.add_step(rollout, 3, outputs=[screen + "$ nvidia-smi\n"])
    assert where(search.search_steps("out of memory")) == [(rollout.pk, 2, "output")]
    assert where(search.search_steps("nvidia-smi")) == [(rollout.pk, 3, "output")]
    # The rollout page's in-page find still sees every screen that shows it.
    assert search.matching_step_ids(rollout.pk, "out of memory") == [2, 3]


def test_documents_are_rebuilt_after_an_edit():
    from trajectories.models import Observation

    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=["avr_loss=0.305"])
    factories.add_step(rollout, 2, outputs=["nothing to see"])
    Observation.objects.filter(step__step_id=2).update(content="now avr_loss too")
    assert search.rebuild_documents([rollout.pk]) == 2
    assert {h.step_id for h in search.search_steps("avr_loss")} == {1, 2}


def test_view_paginates_50_per_page(client):
    rollout = factories.make_rollout()
    for step_id in range(1, 61):
        factories.add_step(rollout, step_id, message=f"common-word {step_id}")
    first = client.get(URL, {"q": "common-word"})
    assert len(first.context["page"].object_list) == 50
    assert "60 matches" in first.content.decode() and "page 1 of 2" in first.content.decode()
    second = client.get(URL, {"q": "common-word", "page": 2}).content.decode()
    assert f'href="/rollouts/{rollout.pk}/?step=60"' in second
    assert f'href="/rollouts/{rollout.pk}/?step=1"' not in second


def test_huge_texts_are_stored_and_their_start_found_by_words():
    """Documents are capped (PostgreSQL refuses a tsvector over 1 MB); the rows are kept."""
    huge = "first-words here\n" + "".join(f"word{i} " for i in range(200_000)) + "\nlast-words"
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=[huge])
    factories.add_step(rollout, 2, message=huge.replace("words", "message"), commands=[huge.replace("words", "typed")])
    assert where(search.search_steps("first-words")) == [(rollout.pk, 1, "output")]
    assert where(search.search_steps("first-message")) == [(rollout.pk, 2, "message")]
    assert where(search.search_steps("first-typed")) == [(rollout.pk, 2, "command")]
    # Beyond the cap, the substring fallback still finds it.
    assert where(search.search_steps("last-words")) == [(rollout.pk, 1, "output")]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="tsvector documents exist on PostgreSQL only")
def test_postgresql_stores_any_text_as_a_tsvector():
    """Quotes, backslashes, colons and odd spaces never break the document literal."""
    text = "it's a \\path\\ with a:b:c, ÄPFEL\u3000und\u00a0birnen, 'quoted' \\' done"
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message=text)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_typeof(words)::text, length(words) FROM trajectories_rolloutdocument")
        assert cursor.fetchone()[0] == "tsvector"
    for q in ("path", "a:b", "äpfel", "quoted", "it's"):
        assert where(search.search_steps(q)) == [(rollout.pk, 1, "message")], q


def test_real_trial_words_are_found_where_they_first_show(shared_trials_dir):
    """Checked against the trajectory file read with plain json."""
    import json

    from trajectories.models import Rollout
    from trajectories.services import import_path

    from .real_trials import OPUS

    factories.make_task("flux2_klein_lora")
    assert import_path(shared_trials_dir).ok
    opus = Rollout.objects.get(trial_name__contains="2TyoFTQ")
    raw = json.loads((shared_trials_dir / OPUS / "agent" / "trajectory.json").read_text())["steps"]

    def outputs(step):
        return "\n".join(r.get("content") or "" for r in (step.get("observation") or {}).get("results") or [])

    showing = [step["step_id"] for step in raw if "avr_loss" in outputs(step).lower()]
    assert len(showing) > 3
    hits = search.search_steps("avr_loss", search.Filters(rollout=opus.pk))
    # Screens repeat: the word search names the step that first showed the
    # line, in-page find every step whose full output holds it.
    assert min(h.step_id for h in hits if h.where == "output") == showing[0]
    assert set(search.matching_step_ids(opus.pk, "avr_loss")) >= set(showing)


def test_view_says_how_it_matched(client, corpus):
    words = client.get(URL, {"q": "hash join"}).content.decode()
    assert "steps holding every word, exact phrase first" in words
    fragment = client.get(URL, {"q": "ash joi"}).content.decode()
    assert "no step holds every word: text containing the query as typed" in fragment
    assert "3 matches" in fragment  # the two messages and the reasoning that say "hash join"
