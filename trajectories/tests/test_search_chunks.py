"""Chunk documents (StepChunk): the words of CHUNK_STEPS consecutive steps, written with the steps' documents."""
import pytest

from trajectories.models import Rollout, Step, StepChunk
from trajectories.search.document import CHUNK_STEPS, TrajectoryDocuments, document, stored_chunks

from trajectories.services import import_trial_dir

from .test_live_import import CUTS, opus, running, running_copy, write_steps  # noqa: F401  (opus: a fixture)


def steps(n: int):
    return [(f"step {i} word{i}", "", [{"keystrokes": f"ls dir{i}"}], [f"out{i}"]) for i in range(n)]


def words(literal: str) -> set[str]:
    return set(literal.split())


def test_chunks_hold_their_steps_words_and_grow_as_steps_arrive():
    whole = TrajectoryDocuments()
    documents = whole.add(steps(40))
    chunks = whole.take_chunks()
    assert [(first, last) for first, last, _ in chunks] == [(0, 15), (16, 31), (32, 39)] and CHUNK_STEPS == 16
    assert words(chunks[1][2]) == set().union(*(words(d) for d in documents[16:32]))
    assert words(chunks[2][2]) >= {"'word39'", "'dir32'", "'out35'"} and "'word31'" not in words(chunks[2][2])
    # The same steps arriving in three ticks: each take gives the open chunk again, grown.
    live = TrajectoryDocuments()
    live.add(steps(40)[:10])
    assert [(f, last) for f, last, _ in live.take_chunks()] == [(0, 9)]
    live.add(steps(40)[10:20])
    assert [(f, last) for f, last, _ in live.take_chunks()] == [(0, 15), (16, 19)]
    live.add(steps(40)[20:40])
    taken = live.take_chunks()
    assert [(f, last, words(w)) for f, last, w in taken] == [(f, last, words(w)) for f, last, w in chunks[1:]]
    # The open chunk stays open: the next take gives it again (a tick with more steps would grow it).
    assert [(f, last, words(w)) for f, last, w in live.take_chunks()] == [(32, 39, words(taken[-1][2]))]


def test_counted_steps_make_no_document_and_the_steps_after_them_are_indexed_alike():
    """count (steps stored already) then add: what add of every step gives from there on."""
    all_steps = steps(40)
    whole = TrajectoryDocuments()
    documents, outputs = whole.add_steps(all_steps)
    chunks = whole.take_chunks()
    resumed = TrajectoryDocuments()
    resumed.count(all_steps[:20])  # stored: 0-15 complete, 16-19 open
    assert resumed.add_steps(all_steps[20:]) == (documents[20:], outputs[20:])
    assert [(f, last, words(w)) for f, last, w in resumed.take_chunks()] == [(f, last, words(w)) for f, last, w in chunks[1:]]
    assert words(resumed.rollout_words()) == words(whole.rollout_words())


def test_chunks_of_stored_documents_are_the_builders():
    builder = TrajectoryDocuments()
    documents = builder.add(steps(20))
    assert [(f, last, words(w)) for f, last, w in stored_chunks(documents)] == [
        (f, last, words(w)) for f, last, w in builder.take_chunks()
    ]
    ((first, last, literal),) = stored_chunks([document(["a b"]), ""])
    assert (first, last, words(literal)) == (0, 1, {"'a'", "'b'"})


def chunks_of(rollout: Rollout) -> list[tuple[int, int, set[str]]]:
    return [(c.first, c.last, words(str(c.words))) for c in StepChunk.objects.filter(rollout=rollout).order_by("first")]


@pytest.mark.django_db
def test_live_ticks_store_the_chunks_an_import_of_the_same_file_stores(opus, tmp_path):  # noqa: F811
    source, document_json, folder, rollout, live = running(opus, tmp_path)
    for n in CUTS:
        write_steps(folder, document_json, n)
        assert live.tick().ok
    whole = running_copy(source, tmp_path / f"once__{source.name}", "once")
    write_steps(whole, document_json, CUTS[-1])
    outcome = import_trial_dir(whole, live=True)
    assert outcome.ok, outcome.error
    expected = chunks_of(Rollout.objects.get(pk=outcome.rollout_id))
    assert len(expected) == -(-CUTS[-1] // CHUNK_STEPS)
    assert chunks_of(rollout) == expected


@pytest.mark.django_db
def test_a_grown_trial_imported_again_keeps_its_complete_chunks_and_stores_what_a_whole_import_does(opus, tmp_path):  # noqa: F811
    """Re-imported after it grew, a trial appends its new steps: the chunks its stored steps filled stay as
    they are (rewriting all of a long trial's chunks cost as much as its first import's); the open one and
    the new ones are stored, equal to those of the grown file imported at once."""
    source, document_json = opus
    folder = running_copy(source, tmp_path / f"grow__{source.name}", "grow")
    write_steps(folder, document_json, 60)
    first = import_trial_dir(folder, live=True)
    assert first.ok, first.error
    rollout = Rollout.objects.get(pk=first.rollout_id)
    before = {c.first: c.pk for c in StepChunk.objects.filter(rollout=rollout)}
    stored_steps = list(Step.objects.filter(rollout=rollout).order_by("position").values_list("pk", flat=True))
    write_steps(folder, document_json, 139)
    again = import_trial_dir(folder, live=True)
    assert again.ok and again.outcome == "updated" and again.rollout_id == rollout.pk
    # Appended: the stored steps kept their rows.
    assert list(Step.objects.filter(rollout=rollout).order_by("position").values_list("pk", flat=True)[:60]) == stored_steps
    after = {c.first: c.pk for c in StepChunk.objects.filter(rollout=rollout)}
    complete = [start for start in before if start + CHUNK_STEPS <= 60]
    assert complete == [0, 16, 32] and {s: after[s] for s in complete} == {s: before[s] for s in complete}
    assert after[48] != before[48]  # the open chunk (steps 48-59) grew

    whole = running_copy(source, tmp_path / f"once__{source.name}", "once")
    write_steps(whole, document_json, 139)
    once = import_trial_dir(whole, live=True)
    assert chunks_of(rollout) == chunks_of(Rollout.objects.get(pk=once.rollout_id))
    assert str(rollout.document.words) == str(Rollout.objects.get(pk=once.rollout_id).document.words)
