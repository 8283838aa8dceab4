"""The ATIF parser: strict where Harbor validates, tolerant and crash-free elsewhere."""
from __future__ import annotations

import copy
import dataclasses
import json
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajectories.reading.atif import AtifError, parse_trajectory_data, parse_trajectory_file, parse_trajectory_text
from trajectories.reading.json_data import clean_json, decode_json, parse_timestamp
from trajectories.reading.parsed import ParsedTrajectory

from .trialdata import trajectory


def test_valid_file_has_no_warnings():
    parsed = parse_trajectory_data(trajectory(2))
    assert parsed.warnings == []
    assert parsed.schema_version == "ATIF-v1.6"
    assert (parsed.agent_name, parsed.agent_version, parsed.model_name) == ("terminus-2", "2.0.0", "openai/test-model")
    assert [s.step_id for s in parsed.steps] == [1, 2, 3]
    step = parsed.steps[1]
    assert step.source == "agent" and step.reasoning == "thinking 0"
    assert step.tool_calls[0].function_name == "bash_command"
    assert step.observations[0].source_call_id == step.tool_calls[0].call_id
    assert step.timestamp.tzinfo is not None


def test_real_files(shared_trials_dir):
    for folder, n_steps in (("opus4.6__2026-04-26__2TyoFTQ", 139), ("grok4.20__2026-04-27__dJkbgCB", 14)):
        path = shared_trials_dir / folder / "agent" / "trajectory.json"
        parsed = parse_trajectory_file(path)
        raw = json.loads(path.read_text())
        assert len(parsed.steps) == n_steps
        assert parsed.warnings == []
        assert [s.timestamp for s in parsed.steps] == [parse_timestamp(s["timestamp"]) for s in raw["steps"]]
        assert sum(s.prompt_tokens or 0 for s in parsed.steps) == raw["final_metrics"]["total_prompt_tokens"]


@pytest.mark.parametrize(
    "version",
    ["ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7", "ATIF-v1.8"],
)
def test_every_schema_version(version):
    data = trajectory(1)
    data["schema_version"] = version
    parsed = parse_trajectory_data(data)
    assert parsed.schema_version == version and parsed.warnings == []


@pytest.mark.parametrize(
    ("mutate", "warning"),
    [
        (lambda d: d["steps"][1].update(source="robot"), "steps.1.source"),
        (lambda d: d["steps"][0].update(reasoning_content="x"), "only applicable"),
        (lambda d: d.update(schema_version="ATIF-v0.9"), "schema_version"),
        (lambda d: d["steps"][1].update(step_id=7), "sequential"),
        (lambda d: d["steps"][1].update(timestamp="yesterday"), "timestamp"),
        (lambda d: d.pop("agent"), "agent"),
        (lambda d: d["steps"][1]["observation"]["results"][0].update(source_call_id="nope"), "source_call_id"),
    ],
)
def test_invalid_files_parse_with_warnings(mutate, warning):
    data = trajectory(2)
    mutate(data)
    parsed = parse_trajectory_data(data)
    assert len(parsed.steps) == 3
    assert any(warning in w for w in parsed.warnings), parsed.warnings
    assert all(len(w) <= 200 for w in parsed.warnings)


def test_step_fields_of_a_bad_file_are_kept_as_far_as_possible():
    data = trajectory(1)
    step = data["steps"][1]
    step["step_id"] = "two"
    step["timestamp"] = "not a time"
    step["metrics"] = {"prompt_tokens": "12", "completion_tokens": 3.0, "cost_usd": float("nan")}
    step["tool_calls"][0]["arguments"] = '{"keystrokes": "ls\\n"}'
    step["message"] = 42
    parsed = parse_trajectory_data(data)
    out = parsed.steps[1]
    assert out.step_id == 2  # position-based when unusable
    assert out.timestamp is None
    assert (out.prompt_tokens, out.completion_tokens, out.cost_usd) == (12, 3, None)
    assert out.tool_calls[0].arguments == {"keystrokes": "ls\n"}
    assert out.message == "42"


def test_nul_characters_and_lone_surrogates_are_made_storable():
    data = trajectory(1)
    data["steps"][1]["message"] = "a\x00b\ud800c"
    data["steps"][1]["tool_calls"][0]["arguments"] = {"k\x00": "v\x00", "n": float("inf")}
    parsed = parse_trajectory_data(data)
    assert "\x00" not in parsed.steps[1].message
    parsed.steps[1].message.encode("utf-8")
    assert parsed.steps[1].tool_calls[0].arguments == {"k\ufffd": "v\ufffd", "n": None}


def test_not_json_and_no_steps_are_errors_naming_the_source():
    with pytest.raises(AtifError, match="x.json: is not valid JSON"):
        parse_trajectory_text("{", source="x.json")
    with pytest.raises(AtifError, match="x.json: .*no list of steps"):
        parse_trajectory_text('{"schema_version": "ATIF-v1.6"}', source="x.json")
    with pytest.raises(AtifError, match="not an object"):
        parse_trajectory_text("[1, 2]", source="x.json")


def test_timestamps():
    assert parse_timestamp("2026-04-26T12:51:11.691294+00:00") == datetime(2026, 4, 26, 12, 51, 11, 691294, tzinfo=timezone.utc)
    assert parse_timestamp("2026-04-26T12:51:11Z") == datetime(2026, 4, 26, 12, 51, 11, tzinfo=timezone.utc)
    assert parse_timestamp("2026-04-26T14:51:11+02:00") == datetime(2026, 4, 26, 12, 51, 11, tzinfo=timezone.utc)
    assert parse_timestamp("2026-04-26T12:51:11").tzinfo is not None
    assert parse_timestamp("soon") is None and parse_timestamp(5) is None


def test_observation_parts_and_single_ref_object():
    data = trajectory(1)
    data["steps"][1]["observation"]["results"][0]["content"] = [
        {"type": "text", "text": "out"},
        {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}},
    ]
    data["steps"][1]["observation"]["results"].append({"subagent_trajectory_ref": {"trajectory_path": "sub.json"}})
    parsed = parse_trajectory_data(data)
    first, second = parsed.steps[1].observations
    assert first.content == "out" and first.extra["content_parts"][0]["type"] == "image"
    assert second.subagent_ref == {"trajectory_path": "sub.json"}


def test_clean_json_limits_depth():
    deep: list = []
    cursor = deep
    for _ in range(100):
        cursor.append([])
        cursor = cursor[0]
    assert clean_json(deep) is not None


# -- Property tests: mutated files never crash the parser -----------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)


def _paths(value, prefix=()):
    """Every (container path) in a JSON document, for picking mutation points."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _mutate(document, data):
    doc = copy.deepcopy(document)
    for _ in range(data.draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["drop", "replace", "extra"]))
        if action == "drop":
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
        elif action == "replace":
            parent[path[-1]] = data.draw(json_values)
        elif isinstance(parent, dict):
            parent[data.draw(st.text(max_size=10))] = data.draw(json_values)
    return doc


def _parse_or_error(text: str):
    try:
        result = parse_trajectory_text(text, source="t.json")
    except AtifError as exc:
        assert str(exc).startswith("t.json: ")
        return None
    assert isinstance(result, ParsedTrajectory)
    for step in result.steps:
        assert isinstance(step.step_id, int) and isinstance(step.message, str)
        assert "\x00" not in step.message
        step.message.encode("utf-8")
        json.dumps(step.extra, allow_nan=False)
        for call in step.tool_calls:
            json.dumps(call.arguments, allow_nan=False)
    return result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_files_parse_or_fail_cleanly(data):
    document = _mutate(trajectory(2), data)
    _parse_or_error(json.dumps(document))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_truncated_files_fail_cleanly(data):
    text = json.dumps(trajectory(2))
    cut = data.draw(st.integers(0, len(text) - 1))
    assert _parse_or_error(text[:cut]) is None


@settings(max_examples=80, deadline=None)
@given(json_values)
def test_arbitrary_json_parses_or_fails_cleanly(value):
    _parse_or_error(json.dumps(value))


# -- The fast path (pydantic-core decoding, strings known storable) --------------

awkward_text = st.text(max_size=8) | st.sampled_from(["\x00", "a\x00é", "\ud800", "x\udfffy", "é", "😀", "NaN"])
awkward_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | awkward_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(awkward_text, children, max_size=3),
    max_leaves=10,
)


def _json_bytes(value, ensure_ascii: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")


@settings(max_examples=150, deadline=None)
@given(awkward_values, st.booleans())
def test_decode_json_matches_the_json_module(value, ensure_ascii):
    raw = _json_bytes(value, ensure_ascii)
    decoded, storable = decode_json(raw)
    assert json.dumps(decoded) == json.dumps(json.loads(raw))
    if storable:
        assert all(clean_json(text) == text for text in _strings(decoded))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_decode_json_leaves_what_it_does_not_read_to_the_json_module():
    # A byte order mark, and a lone surrogate escape: pydantic-core refuses both.
    assert decode_json(b"\xef\xbb\xbf[1]") == ([1], False)
    assert decode_json(b'"\\ud800"') == ("\ud800", False)
    assert decode_json(b'"\\u0000"') == ("\x00", False)
    assert decode_json(b'{"a": 1}') == ({"a": 1}, True)
    with pytest.raises(json.JSONDecodeError):
        decode_json(b"[1,]")


def _plain(value):
    """A dataclass tree as comparable data, floats by repr (NaN equals NaN)."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return [[_plain(k), _plain(v)] for k, v in value.items()]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return (type(value).__name__, repr(value))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_bytes_and_decoded_data_give_the_same_result(data):
    """The unchecked strings of the fast path change nothing in the result."""
    document = _mutate(trajectory(2), data)
    steps = document.get("steps")
    if isinstance(steps, list) and steps and isinstance(steps[-1], dict):
        steps[-1]["message"] = data.draw(awkward_values)
    raw = _json_bytes(document, data.draw(st.booleans()))
    try:
        fast = _plain(parse_trajectory_text(raw, source="t.json"))
    except AtifError as exc:
        fast = str(exc)
    try:
        checked = _plain(parse_trajectory_data(json.loads(raw), source="t.json"))
    except AtifError as exc:
        checked = str(exc)
    assert fast == checked


def test_parsing_leaves_the_garbage_collector_as_it_found_it():
    import gc

    assert gc.isenabled()
    parse_trajectory_text(json.dumps(trajectory(1)).encode())
    with pytest.raises(AtifError):
        parse_trajectory_text(b"{", source="x.json")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_trajectory_data(trajectory(1))
        assert not gc.isenabled()
    finally:
        gc.enable()
