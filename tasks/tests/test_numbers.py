"""tasks.lib.numbers: each meaning of "a number" with its table of cases."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from tasks.lib.numbers import as_float, format_number, parse_float, parse_number_cell

INF, NAN = float("inf"), float("nan")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.5, 0.5),
        (-2.0, -2.0),
        (3, 3.0),
        (0, 0.0),
        (2**53, float(2**53)),
        (True, None),  # JSON true is no number
        (False, None),
        (None, None),
        ("3", None),  # quoted numbers stay text
        ("", None),
        ([1], None),
        ({"value": 1}, None),
        (INF, None),
        (-INF, None),
        (NAN, None),
        (10**400, None),  # too large for a float
    ],
)
def test_as_float(value, expected):
    result = as_float(value)
    assert result == expected and (result is None or type(result) is float)


@pytest.mark.parametrize("value, expected", [(True, 1.0), (False, 0.0), (0.25, 0.25), ("1", None), (NAN, None)])
def test_as_float_counts_booleans_when_asked(value, expected):
    assert as_float(value, booleans=True) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("0.7", 0.7),
        (" 2 ", 2.0),
        ("-1e3", -1000.0),
        (0.7, 0.7),
        (3, 3.0),
        ("", None),
        (None, None),
        ("abc", None),
        ([], None),  # TypeError, not a crash
        ("inf", INF),  # float() reads it; callers that mind check
    ],
)
def test_parse_float(value, expected):
    assert parse_float(value) == expected


def test_parse_float_reads_nan_as_float_does():
    assert math.isnan(parse_float("nan"))


@pytest.mark.parametrize(
    "text, expected, errors",
    [
        ("1.5", 1.5, []),
        (" 42 ", 42.0, []),
        ("-0", 0.0, []),
        ("1e-3", 0.001, []),
        ("", None, []),
        ("   ", None, []),
        (None, None, []),
        ("high", None, ["score must be a number, not 'high'"]),
        ("1,5", None, ["score must be a number, not '1,5'"]),
        ("inf", None, ["score must be a finite number, not 'inf'"]),
        ("NaN", None, ["score must be a finite number, not 'NaN'"]),
    ],
)
def test_parse_number_cell(text, expected, errors):
    found: list[str] = []
    assert parse_number_cell(text, "score", found) == expected
    assert found == errors


def test_parse_number_cell_adds_to_the_errors_it_is_given():
    errors = ["missing task"]
    parse_number_cell("x", "raw_score", errors)
    assert errors == ["missing task", "raw_score must be a number, not 'x'"]


@pytest.mark.parametrize(
    "value, missing, expected",
    [
        (0.5, "?", "0.5"),
        (28.0, "?", "28"),
        (3, "?", "3"),
        (1e6, "?", "1e+06"),
        (0.123456789, "?", "0.123457"),
        (-0.0, "?", "-0"),
        (None, "?", "?"),
        (None, "none", "none"),
    ],
)
def test_format_number(value, missing, expected):
    assert format_number(value, missing) == expected


def test_format_number_marks_a_missing_value_with_a_question_mark_by_default():
    assert format_number(None) == "?"


def test_importing_the_helpers_loads_neither_django_nor_celery():
    """Why they live in tasks.lib and not autolab_site (whose __init__ starts the Celery app)."""
    code = "import sys, tasks.lib.numbers; print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'celery'}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"
