"""reading.json_data: JSON files read tolerantly, values made storable (tables of cases)."""
from __future__ import annotations

import pytest

from trajectories.reading.atif import AtifError, parse_trajectory_file
from trajectories.reading.json_data import BIGINT_LIMIT, JsonFileError, clean_text, read_json, read_json_file, storable_int


@pytest.mark.parametrize(
    "value, limit, expected",
    [
        (7, None, 7),
        (-7, None, -7),
        (2**31 - 1, None, 2**31 - 1),
        (2**31, None, None),  # past PostgreSQL's integer
        (-(2**31), None, None),
        (2**31, BIGINT_LIMIT, 2**31),
        (2**63 - 1, BIGINT_LIMIT, 2**63 - 1),
        (2**63, BIGINT_LIMIT, None),
        (3.0, None, 3),
        (3.5, None, None),
        (float("inf"), None, None),
        (float("nan"), None, None),
        ("12", None, 12),
        (" -12 ", None, -12),
        ("12.0", None, None),
        ("1" * 40, None, None),
        (True, None, None),
        (False, None, None),
        (None, None, None),
        ([1], None, None),
    ],
)
def test_storable_int(value, limit, expected):
    assert (storable_int(value) if limit is None else storable_int(value, limit)) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("plain", "plain"),
        ("", ""),
        (None, ""),
        ("a\x00b", "a\ufffdb"),  # PostgreSQL refuses NUL
        ("é \ud800 x", "é " + "\ufffd" * 3 + " x"),  # and lone surrogates (one per byte of it)
        (3, "3"),
        (1.5, "1.5"),
        ({"k": "é\x00"}, '{"k": "é\ufffd"}'),
        (["a", None], '["a", null]'),
    ],
)
def test_clean_text(value, expected):
    assert clean_text(value) == expected


def test_a_file_that_is_not_json_is_refused_naming_it(tmp_path):
    path = tmp_path / "result.json"
    path.write_bytes(b'{"a": ')
    with pytest.raises(JsonFileError) as raised:
        read_json_file(path)
    assert raised.value.source == str(path) and raised.value.problem.startswith("is not valid JSON")
    with pytest.raises(JsonFileError, match="cannot be read"):
        read_json_file(tmp_path / "missing.json")


def test_an_unreadable_trajectory_is_an_atif_error_and_a_json_file_error(tmp_path):
    path = tmp_path / "trajectory.json"
    path.write_bytes(b"[")
    with pytest.raises(AtifError) as raised:
        parse_trajectory_file(path)
    assert isinstance(raised.value, JsonFileError) and str(raised.value).startswith(f"{path}: is not valid JSON")


def test_bytes_that_are_not_utf8_are_replaced_with_a_note(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b'{"name": "a\xffb"}')
    decoded = read_json(path)
    assert decoded.data == {"name": "a\ufffdb"} and not decoded.storable
    assert decoded.notes == ["1 byte that are not UTF-8 replaced with U+FFFD"]
