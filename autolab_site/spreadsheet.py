"""CSV that is safe to open in a spreadsheet (OWASP's "CSV injection").

Model names, task names, verifier reasons and staff notes are anyone's text,
and the CSV exports are public: a cell such as `=HYPERLINK("http://x", "y")`
would run as a formula in Excel or LibreOffice. Every CSV export writes
through `writer` so that a text cell starting with `=`, `+`, `-`, `@`, a tab
or a carriage return gets a leading `'`, which spreadsheets show as text.
Numbers stay numbers: only strings are touched, so a negative float is still
`-0.5`, not `'-0.5`.

A CSV is read by people and spreadsheets, so `cell` also writes a float
rounded to `CSV_DECIMALS` (0.27306, not the binary 0.27305999999999997: no
page shows more) and a boolean as `true`/`false`, as the JSON API writes
it (not Python's `True`); the JSON API keeps every digit.

Django-free.
"""
from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Decimals a float keeps in a CSV cell: at least the digits any page shows of a score, share or cost.
CSV_DECIMALS = 6


def safe_cell(value: Any) -> Any:
    """`value` as a spreadsheet will read it: text that would be a formula is prefixed with `'`."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def cell(value: Any) -> Any:
    """`value` as a CSV cell: true/false, a float rounded to CSV_DECIMALS, formula-looking text neutralised."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, CSV_DECIMALS) + 0.0)  # + 0.0: no "-0.0" for a tiny negative
    return safe_cell(value)


class SafeWriter:
    """csv.writer whose rows go through `cell`."""

    def __init__(self, stream, **options):
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(stream, **options) -> SafeWriter:
    return SafeWriter(stream, **options)
