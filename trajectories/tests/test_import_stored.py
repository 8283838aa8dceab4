"""What an import stores of a real trial does not depend on how its steps are batched or read.

The importer makes a rollout's search documents a batch of steps at a time,
as their rows are written (storing.ingest._SearchIndex), and reads a large
finished trajectory step by step. Whatever the batch, the rows must be the
ones the straightforward path gives: every step's document, new output
lines and chunks as trajectory_documents makes them from all the steps at
once, and the same steps, calls, observations and rollout figures.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajectories.models import Observation, Rollout, RolloutDocument, Step, StepChunk, ToolCall
from trajectories.reading import trial_folder
from trajectories.reading.trial_folder import read_trial_folder
from trajectories.search.document import TrajectoryDocuments, stored_chunks, trajectory_documents
from trajectories.services import import_trial_dir
from trajectories.storing import bulk_rows, ingest

from .trialdata import make_task

pytestmark = pytest.mark.django_db

OPUS = "opus4.6__2026-04-26__2TyoFTQ"


def renamed_copy(source: Path, target: Path, *, steps: int | None = None, finished: bool = True) -> Path:
    """A copy of the trial `source` named `target.name`; with `steps`, its trajectory cut to that many."""
    shutil.copytree(source, target)
    for name in ("config.json", "result.json"):
        data = json.loads((target / name).read_text())
        data["trial_name"] = target.name
        if name == "result.json":
            data["config"]["trial_name"] = target.name
        (target / name).write_text(json.dumps(data))
    if steps is not None:
        path = target / "agent" / "trajectory.json"
        data = json.loads(path.read_text())
        path.write_text(json.dumps(dict(data, steps=data["steps"][:steps])))
    if not finished:
        (target / "result.json").unlink()
    return target


def words(literal: str) -> frozenset[str]:
    return frozenset(literal.split(" ")) - {""}


def stored(rollout_id: int) -> dict:
    """Everything an import stored of one rollout's trajectory, without ids; documents as sets of words."""
    rollout = Rollout.objects.get(pk=rollout_id)
    step_columns = [f.attname for f in Step._meta.concrete_fields if f.attname not in ("id", "rollout_id", "search_document")]
    steps = Step.objects.filter(rollout=rollout).order_by("position")
    return {
        "rollout": (
            rollout.n_steps, rollout.n_benchmark_calls, rollout.n_edits, rollout.best_metric, rollout.best_score,
            rollout.curve, rollout.files_changed, rollout.validation_warnings, rollout.failure_cause,
            rollout.failure_secondary, rollout.failure_evidence,
        ),
        "steps": [(*row[:-1], words(row[-1])) for row in steps.values_list(*step_columns, "search_document")],
        "calls": list(
            ToolCall.objects.filter(step__rollout=rollout).order_by("step__position", "position").values_list(
                "step__position", "position", "call_id", "function_name", "arguments", "kinds",
            )
        ),
        "observations": list(
            Observation.objects.filter(step__rollout=rollout).order_by("step__position", "position").values_list(
                "step__position", "position", "source_call_id", "content", "cut_at", "full_length", "extra",
                "tool_call__call_id",
            )
        ),
        "chunks": [(c.first, c.last, words(str(c.words))) for c in StepChunk.objects.filter(rollout=rollout).order_by("first")],
        "rollout_words": words(str(RolloutDocument.objects.get(rollout=rollout).words)),
    }


def straightforward_search(trial: Path) -> dict:
    """The search rows of `trial` made from all its steps at once, with no database."""
    steps = read_trial_folder(trial).trajectory.steps
    builder = TrajectoryDocuments()
    documents, new_outputs = builder.add_steps(ingest.step_texts(steps))
    rollout_words = builder.rollout_words()
    assert documents == trajectory_documents(ingest.step_texts(steps))[0]
    return {
        "documents": [words(d) for d in documents],
        "new_outputs": new_outputs,
        "chunks": [(first, last, words(literal)) for first, last, literal in stored_chunks(documents)],
        "rollout_words": words(rollout_words),
    }


def test_a_real_trial_stores_the_same_rows_whatever_the_batches(shared_trials_dir, tmp_path, monkeypatch):
    make_task("flux2_klein_lora")
    source = shared_trials_dir / OPUS
    plain = import_trial_dir(renamed_copy(source, tmp_path / "plain" / f"plain__{OPUS}"))
    assert plain.ok, plain.error
    expected = stored(plain.rollout_id)
    assert len(expected["steps"]) == plain.n_steps == 139
    search = straightforward_search(source)
    assert [step[-1] for step in expected["steps"]] == search["documents"]
    new_output = [f.attname for f in Step._meta.concrete_fields if f.attname not in ("id", "rollout_id", "search_document")].index("new_output")
    assert [step[new_output] for step in expected["steps"]] == search["new_outputs"]
    assert any(search["new_outputs"]) and any(not text for text in search["new_outputs"])
    assert expected["chunks"] == search["chunks"] and len(search["chunks"]) == 9
    assert expected["rollout_words"] == search["rollout_words"]

    # Read step by step, rows and documents a few steps at a time (not a multiple of the chunk's 16).
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 1_000)
    monkeypatch.setattr(ingest, "STEP_BATCH", 7)
    monkeypatch.setattr(bulk_rows, "PLAIN_ENCODE_FROM", 1)
    batched = import_trial_dir(renamed_copy(source, tmp_path / "batched" / f"batched__{OPUS}"))
    assert batched.ok, batched.error
    assert stored(batched.rollout_id) == expected

    # A live trial that grew: its first 100 steps stay stored, the new ones go in batches, and the
    # documents count every step (an output line belongs to the first step showing it).
    live = renamed_copy(source, tmp_path / "live" / f"live__{OPUS}", steps=100, finished=False)
    first = import_trial_dir(live, live=True)
    assert first.ok and first.n_steps == 100, first.error
    kept = list(Step.objects.filter(rollout_id=first.rollout_id).order_by("position").values_list("id", flat=True))
    shutil.copy(source / "agent" / "trajectory.json", live / "agent" / "trajectory.json")
    grown = import_trial_dir(live, live=True)
    assert grown.ok and grown.n_steps == 139, grown.error
    ids = list(Step.objects.filter(rollout_id=grown.rollout_id).order_by("position").values_list("id", flat=True))
    assert ids[:100] == kept  # the stored steps stayed
    again = stored(grown.rollout_id)
    assert [(step[new_output], step[-1]) for step in again["steps"]] == list(zip(search["new_outputs"], search["documents"]))
    for name in ("chunks", "rollout_words"):
        assert again[name] == expected[name], name


def test_a_trial_with_only_subagent_trajectories_imports_them(tmp_path):
    from .trialdata import make_trial, trajectory, write_json

    make_task()
    folder = make_trial(tmp_path, "lib__demo_task__onlysub")
    (folder / "agent" / "trajectory.json").unlink()
    write_json(folder / "agent" / "trajectory.summarization-1-summary.json", trajectory(2))
    outcome = import_trial_dir(folder)
    assert outcome.ok, outcome.error
    assert outcome.n_steps == 0
    assert Step.objects.filter(rollout_id=outcome.rollout_id, subtrajectory__isnull=False).count() == 3
    assert str(RolloutDocument.objects.get(rollout_id=outcome.rollout_id).words) == ""
    assert not StepChunk.objects.filter(rollout_id=outcome.rollout_id).exists()
