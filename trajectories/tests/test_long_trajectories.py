"""Long trajectories import in bounded memory, storing what the whole-document path stored.

Harbor's validation of a long trajectory goes one step's model at a time
(reading.atif.validation_warnings); its warnings must be the whole
validation's, word for word and in order, and the rows stored the same.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from trajectories.reading import atif, trial_folder

from .trialdata import make_task, make_trial, trajectory

TRIALS = Path(__file__).parent / "trials"


def _whole(data):
    return atif.validation_warnings(data, chunk=10**9)


def _step_by_step(data):
    return atif.validation_warnings(data, chunk=0)


MUTATIONS = {
    "valid": lambda d: None,
    "bad source": lambda d: d["steps"][1].update(source="robot"),
    "agent-only field on a user step": lambda d: d["steps"][0].update(reasoning_content="x"),
    "unknown schema version": lambda d: d.update(schema_version="ATIF-v0.9"),
    "ids not sequential": lambda d: d["steps"][1].update(step_id=7),
    "ids not sequential and a bad step": lambda d: (d["steps"][1].update(step_id=7), d["steps"][2].update(source="x")),
    "bad timestamp": lambda d: d["steps"][1].update(timestamp="yesterday"),
    "no agent": lambda d: d.pop("agent"),
    "dangling source_call_id": lambda d: d["steps"][1]["observation"]["results"][0].update(source_call_id="nope"),
    "step not an object": lambda d: d["steps"].insert(1, "step"),
    "extra keys everywhere": lambda d: (d.update(zzz=1, aaa=2), d["steps"][2].update(bogus=True)),
    "header and step errors": lambda d: (d.update(session_id=5), d["steps"][1].update(message=42)),
    "subagent without id": lambda d: d.update(subagent_trajectories=[trajectory(1)]),
    "subagent without id, ids not sequential": lambda d: (
        d.update(subagent_trajectories=[trajectory(1)]), d["steps"][1].update(step_id=9),
    ),
    "string step id": lambda d: d["steps"][1].update(step_id="2"),
    "no steps": lambda d: d.update(steps=[]),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_step_by_step_validation_says_what_whole_validation_says(name):
    data = trajectory(3)
    MUTATIONS[name](data)
    assert _step_by_step(copy.deepcopy(data)) == _whole(data)


def test_step_by_step_validation_of_every_fixture_trajectory():
    import json

    paths = sorted(TRIALS.rglob("trajectory*.json"))
    assert paths
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("steps"), list):
            assert _step_by_step(data) == _whole(data), path


def long_trajectory(n_agent_steps: int) -> dict:
    """A valid trajectory of 1 + n_agent_steps steps, some of them odd (repeated ids, a bad source)."""
    data = trajectory(n_agent_steps)
    data["steps"][5]["step_id"] = 5  # a repeated id: renumbered, with a warning
    data["steps"][9]["source"] = "robot"
    return data


@pytest.mark.django_db
def test_a_long_trajectory_stores_the_rows_the_whole_validation_stored(tmp_path, monkeypatch):
    from trajectories.models import Observation, Rollout, Step, ToolCall
    from trajectories.storing.ingest import ingest_trial_dir

    make_task()
    data = long_trajectory(atif.VALIDATION_CHUNK + 100)

    def stored(name: str, chunk: int):
        monkeypatch.setattr(atif, "VALIDATION_CHUNK", chunk)
        folder = make_trial(tmp_path / name, f"lib__demo_task__{name}", trajectory_data=data)
        outcome = ingest_trial_dir(folder)
        assert outcome.ok, outcome.error
        rollout = Rollout.objects.get(pk=outcome.rollout_id)
        steps = Step.objects.filter(rollout=rollout).order_by("position")
        return {
            "warnings": rollout.validation_warnings,
            "figures": (rollout.n_steps, rollout.n_benchmark_calls, rollout.n_edits, rollout.curve, rollout.files_changed),
            "steps": list(steps.values_list(
                "position", "step_id", "timestamp", "source", "message", "reasoning", "extra", "kinds", "diff",
                "metric_value", "search_document",
            )),
            "calls": list(ToolCall.objects.filter(step__rollout=rollout).order_by("step__position", "position").values_list(
                "position", "call_id", "function_name", "arguments", "kinds",
            )),
            "observations": list(Observation.objects.filter(step__rollout=rollout).order_by("step__position", "position").values_list(
                "position", "source_call_id", "content", "extra", "tool_call__call_id",
            )),
        }

    whole = stored("whole", 10**9)
    step_by_step = stored("stepwise", 10)
    assert any("steps.9.source" in w for w in whole["warnings"])
    assert len(whole["steps"]) == len(data["steps"])
    assert step_by_step == whole
    # Read step by step from the file (a finished trial's trajectory past STREAM_OVER),
    # its rows written a few steps at a time, their text encoded by our own COPY dumpers.
    from trajectories.storing import bulk_rows, ingest

    monkeypatch.setattr(trial_folder, "STREAM_OVER", 1_000)
    monkeypatch.setattr(ingest, "STEP_BATCH", 7)
    monkeypatch.setattr(bulk_rows, "PLAIN_ENCODE_FROM", 1)
    streamed = stored("streamed", 10**9)
    assert streamed == whole


@pytest.mark.django_db
def test_importing_again_replaces_full_texts_and_subtrajectories_leaving_no_row_behind(tmp_path, settings):
    """A forced re-import deletes the old rows in plain SQL: nothing of them may stay, nothing else may go."""
    from datetime import timedelta

    from trajectories.models import Observation, ObservationText, Step, SubTrajectory, ToolCall
    from trajectories.storing.ingest import ingest_trial_dir

    from .trialdata import START, write_json

    settings.AUTOLAB_OBSERVATION_MAX_CHARS = 1_000
    make_task()
    other = ingest_trial_dir(make_trial(tmp_path / "other", "lib__demo_task__other"))
    data = trajectory(3)
    data["steps"][1]["observation"]["results"][0]["content"] = "a long output line\n" * 500
    folder = make_trial(tmp_path, "lib__demo_task__again", trajectory_data=data)
    sub = trajectory(1, start=START + timedelta(minutes=10))
    write_json(folder / "agent" / "trajectory.summarization-1-summary.json", sub)

    def rows():
        return {
            model.__name__: model.objects.count() for model in (Step, ToolCall, Observation, ObservationText, SubTrajectory)
        }

    first = ingest_trial_dir(folder)
    once = rows()
    assert once["ObservationText"] == 1 and once["SubTrajectory"] == 1
    again = ingest_trial_dir(folder, force=True)
    assert (first.outcome, again.outcome) == ("created", "updated") and again.rollout_id == first.rollout_id
    assert rows() == once
    assert SubTrajectory.objects.get().parent_step.rollout_id == first.rollout_id
    assert Step.objects.filter(rollout_id=other.rollout_id).count() == 3


# -- Reading a large trajectory step by step -----------------------------------


def _read(raw: bytes, chunk_size: int = 7):
    import io

    from trajectories.reading.json_stream import StreamedDocument, read_streamed

    elements = []
    document = read_streamed(io.BytesIO(raw), "steps", lambda index, value: elements.append(value), chunk_size=chunk_size)
    if isinstance(document, StreamedDocument):
        return dict(document.fields, **({"steps": elements} if document.streamed else {}))
    return document


STREAM_CASES = {
    "object": (b'{"a": 1, "steps": [{"x": 1}, {"y": [2, 3.5, null, true]}], "z": "w"}',
               {"a": 1, "steps": [{"x": 1}, {"y": [2, 3.5, None, True]}], "z": "w"}),
    "numbers cut by a chunk": (b'{"steps": [12345678901234567890, -1.25e10]}', {"steps": [12345678901234567890, -1.25e10]}),
    "no steps": (b'{"a": 1}', {"a": 1}),
    "steps not a list": (b'{"steps": {"a": 1}}', {"steps": {"a": 1}}),
    "empty": (b' { } ', {}),
    "not an object": (b'[1, 2]', [1, 2]),
    "byte order mark": (b'\xef\xbb\xbf{"steps": []}', {"steps": []}),
    "non-ASCII across chunks": ('{"steps": ["\u00e9\u2500\U0001f600" ]}'.encode(), {"steps": ["\u00e9\u2500\U0001f600"]}),
}


@pytest.mark.parametrize("name", sorted(STREAM_CASES))
def test_the_stream_reader_reads_what_json_loads_reads(name):
    raw, expected = STREAM_CASES[name]
    for chunk_size in (1, 2, 7, 1 << 20):
        assert _read(raw, chunk_size) == expected


@pytest.mark.parametrize(
    "raw",
    [b'{"steps": [{"step_id": 1,', b'{"steps": [1 2]}', b'{"a" 1}', b'', b'{"a": 1} x', b'{"a": tru}', b'{"steps": [1], "steps": [2]}',
     b'{"steps": ["\xff"]}'],
    ids=["cut short", "no comma", "no colon", "nothing", "extra data", "bad literal", "steps twice", "not UTF-8"],
)
def test_the_stream_reader_refuses_what_is_not_one_json_document(raw):
    with pytest.raises(ValueError):
        _read(raw)


def test_a_huge_string_reads_whole():
    text = "x" * 3_000_000 + "\u00e9"
    assert _read(('{"steps": [{"message": "' + text + '"}]}').encode(), chunk_size=4096) == {"steps": [{"message": text}]}


def _finished_trial(tmp_path, name: str, content: bytes):
    folder = make_trial(tmp_path / name, f"lib__demo_task__{name}")
    (folder / "agent" / "trajectory.json").write_bytes(content)
    return folder


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b'{"steps": [{"step_id": 1, "source": "user", "message": "hi"},', "is not valid JSON"),
        (b'[{"step_id": 1}]', "not an object"),
        (b'{"schema_version": "ATIF-v1.6", "steps": 3}', "no list of steps"),
    ],
    ids=["cut short", "a list", "steps not a list"],
)
def test_a_large_trajectory_that_cannot_be_read_fails_with_the_usual_error_and_stores_nothing(tmp_path, monkeypatch, content, error):
    from trajectories.models import Rollout, Step
    from trajectories.storing.ingest import ingest_trial_dir

    make_task()
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 10)
    outcome = ingest_trial_dir(_finished_trial(tmp_path, "bad", content))
    assert not outcome.ok and error in outcome.error and "trajectory.json" in outcome.error
    assert not Rollout.objects.exists() and not Step.objects.exists()


@pytest.mark.django_db
def test_a_large_trajectory_with_bytes_that_are_not_utf8_is_read_whole_and_repaired(tmp_path, monkeypatch):
    import json

    from trajectories.models import Rollout
    from trajectories.storing.ingest import ingest_trial_dir

    make_task()
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 10)
    raw = json.dumps(trajectory(2)).encode().replace(b"thinking 0", b"thinking \xff 0")
    outcome = ingest_trial_dir(_finished_trial(tmp_path, "bytes", raw))
    assert outcome.ok, outcome.error
    assert "trajectory.json: 1 byte that are not UTF-8 replaced with U+FFFD" in Rollout.objects.get().validation_warnings


@pytest.mark.django_db
def test_a_large_trajectory_rewritten_between_the_checksum_and_the_read_is_refused(tmp_path, monkeypatch):
    import json

    from trajectories.models import Rollout
    from trajectories.reading import trial_folder as reading
    from trajectories.storing.ingest import ingest_trial_dir

    make_task()
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 10)
    folder = _finished_trial(tmp_path, "rewritten", json.dumps(trajectory(2)).encode())
    snapshot = reading.snapshot_folder

    def then_rewritten(path, **kwargs):
        taken = snapshot(path, **kwargs)
        (folder / "agent" / "trajectory.json").write_text(json.dumps(trajectory(3)))
        return taken

    monkeypatch.setattr("trajectories.storing.ingest.snapshot_folder", then_rewritten)
    outcome = ingest_trial_dir(folder)
    assert not outcome.ok and "changed while it was being read" in outcome.error
    assert not Rollout.objects.exists()


def _rewrite_message(folder) -> None:
    """The same steps at the same times, one message's text changed: only the bytes tell."""
    import json

    path = folder / "agent" / "trajectory.json"
    data = json.loads(path.read_text())
    data["steps"][-1]["message"] = "rewritten by the agent"
    path.write_text(json.dumps(data))


@pytest.mark.django_db
@pytest.mark.parametrize("when", ["before the analysis", "while the rows are written"])
def test_a_large_trajectory_rewritten_before_it_is_read_again_is_refused_and_nothing_stored(tmp_path, monkeypatch, when):
    """A long trajectory is read a second time for its text (ParsedTrajectory.restream): that read must be of the same file."""
    import json

    from trajectories.models import Rollout, Step
    from trajectories.storing import ingest

    make_task()
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 10)
    monkeypatch.setattr(ingest, "STEP_BATCH", 1)  # rows of the first steps go in before the end of the file is read
    folder = _finished_trial(tmp_path, "again", json.dumps(trajectory(4)).encode())
    if when == "before the analysis":
        read = ingest.read_trial_folder

        def then_rewritten(*args, **kwargs):
            done = read(*args, **kwargs)
            _rewrite_message(folder)
            return done

        monkeypatch.setattr(ingest, "read_trial_folder", then_rewritten)
    else:
        classify = ingest._classify

        def then_rewritten(*args):
            classify(*args)
            _rewrite_message(folder)

        monkeypatch.setattr(ingest, "_classify", then_rewritten)
    outcome = ingest.ingest_trial_dir(folder)
    assert not outcome.ok and "changed while it was being read" in outcome.error
    assert not Rollout.objects.exists() and not Step.objects.exists()


@pytest.mark.django_db
def test_a_large_trajectory_is_analysed_and_stored_from_a_second_read_as_from_the_whole(shared_trials_dir, tmp_path, monkeypatch):
    """The real opus trial: its metrics and kinds are the same when the analysis lets go of each step's text early."""
    from trajectories.models import Rollout, Step
    from trajectories.storing import ingest
    from trajectories.storing.ingest import ingest_trial_dir

    from .test_import_stored import OPUS, renamed_copy

    make_task("flux2_klein_lora")
    source = shared_trials_dir / OPUS
    columns = ("position", "step_id", "kinds", "metric_value", "metric_score", "metric_status", "diff", "message", "search_document")

    def stored(name: str) -> tuple:
        outcome = ingest_trial_dir(renamed_copy(source, tmp_path / name / f"{name}__{OPUS}"))
        assert outcome.ok, outcome.error
        rollout = Rollout.objects.get(pk=outcome.rollout_id)
        summary = (rollout.n_benchmark_calls, rollout.best_metric, rollout.best_score, rollout.curve, rollout.n_steps)
        return summary, list(Step.objects.filter(rollout=rollout).order_by("position").values_list(*columns))

    whole = stored("whole")
    assert whole[0][0] > 0 and any(row[3] is not None for row in whole[1])  # benchmark calls with metrics
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 1_000)
    monkeypatch.setattr(ingest, "LET_GO_EVERY", 3)
    monkeypatch.setattr(ingest, "STEP_BATCH", 10)
    read = trial_folder.read_trial_folder
    light = []

    def watched(*args, **kwargs):
        folder = read(*args, **kwargs)
        light.append(folder.trajectory.restream is not None and not any(step.observations for step in folder.trajectory.steps))
        return folder

    monkeypatch.setattr(ingest, "read_trial_folder", watched)
    assert stored("streamed") == whole
    assert light == [True]  # read without its text, the text read again
