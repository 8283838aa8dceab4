"""Numbers read from files and forms, and numbers written as text: one function per meaning.

Each reader used to carry its own `_number`, and the copies disagreed at
the edges (a boolean, infinity, an integer too large for a float). Here
each meaning is written once:

- `as_float`: a number in decoded JSON or TOML, as a finite float;
- `parse_float`: text (or a number) as `float()` reads it, for values from
  templates and query strings;
- `parse_number_cell`: the number in a CSV cell, with the reason when the
  cell holds something else;
- `format_number`: a float in a line of text, with a mark for a missing one.
"""
from __future__ import annotations

import math
from typing import Any


def as_float(value: Any, *, booleans: bool = False) -> float | None:
    """`value` as a finite float when it is a number; None for anything else.

    JSON's true and false decode to bools, which Python counts as integers:
    they are no number unless `booleans` says so (then 1.0 and 0.0, as a
    pass/fail reward means). Text is no number either, even "3": a file that
    quotes its numbers is not read as if it did not. NaN, infinity and
    integers too large for a float give None.
    """
    if type(value) is float:  # the usual case, first
        return value if math.isfinite(value) else None
    if isinstance(value, bool):
        return float(value) if booleans else None
    if not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def parse_float(value: Any) -> float | None:
    """`float(value)`, or None when `value` is empty (None, "") or not a number float() reads.

    Lenient on purpose: a template hands over whatever its context holds,
    and a query string whatever was typed; neither is an error to report.
    """
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def parse_number_cell(text: str | None, name: str, errors: list[str]) -> float | None:
    """The finite number in CSV cell `name`; None when the cell is empty.

    A cell that holds anything else also gives None, and says why in
    `errors`: an importer collects every problem of a file (or stops at the
    first) and prefixes the row it was on.
    """
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        errors.append(f"{name} must be a number, not {text!r}")
        return None
    if not math.isfinite(value):
        errors.append(f"{name} must be a finite number, not {text!r}")
        return None
    return value


def format_number(value: float | None, missing: str = "?") -> str:
    """`value` in its shortest general form (0.5, 28, 1e+06), or `missing` when there is none."""
    return missing if value is None else f"{value:g}"
