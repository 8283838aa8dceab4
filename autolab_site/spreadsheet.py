"""CSV that is safe to open in a spreadsheet (OWASP's "CSV injection").

Model names, task names, verifier reasons and staff notes are anyone's text,
and the CSV exports are public: a cell such as `=HYPERLINK("http://x", "y")`
would run as a formula in Excel or LibreOffice. Every CSV export writes
through `writer` so that a text cell starting with `=`, `+`, `-`, `@`, a tab
or a carriage return gets a leading `'`, which spreadsheets show as text.
Numbers stay numbers: only strings are touched, so a negative float is still
`-0.5`, not `'-0.5`.

Django-free.
"""
from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """`value` as a spreadsheet will read it: text that would be a formula is prefixed with `'`."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class SafeWriter:
    """csv.writer whose rows go through `safe_cell`."""

    def __init__(self, stream, **options):
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([safe_cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(stream, **options) -> SafeWriter:
    return SafeWriter(stream, **options)
