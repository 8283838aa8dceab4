"""Forms that own a list's GET parameters: each filter's field and the rule that narrows the rows by it.

A list shown as a page, as JSON and as CSV reads its query string through
one such form, so the same query string selects the same rows in each, and
a bad value is refused the same way: a 400 that names the field (pages show
the form's errors, the API answers `{"errors": {field: [messages]}}`).
Adding a filter is one edit: a field, and beside it a `filter_<name>`
method saying how a value narrows the rows (as Django's `clean_<name>`
says how it is cleaned), unless the field carries its own rule (a `narrow`
method: fields made for filtering, such as one naming a related row).
"""
from __future__ import annotations

from collections.abc import Collection
from typing import Self

from django import forms
from django.db.models import QuerySet
from django.http import JsonResponse


class FilterForm(forms.Form):
    """A list's GET filters. Every field is optional: an empty value is no filter."""

    def narrow(self, rows: QuerySet, leave_out: Collection[str] = ()) -> QuerySet:
        """`rows` narrowed by every filter given (of a valid form), except those named in `leave_out`."""
        for name, value in self.cleaned_data.items():
            rule = getattr(self, f"filter_{name}", None) or getattr(self.fields[name], "narrow", None)
            if rule is None or name in leave_out or value in self.fields[name].empty_values:
                continue
            rows = rule(rows, value)
        return rows

    def values(self) -> dict[str, str]:
        """Every field's value as given (stripped), "" when absent: what a page's filter form shows again."""
        return {name: (self.data.get(name) or "").strip() for name in self.fields}

    def as_query(self, **changes: str) -> dict[str, str]:
        """The filters given, with `changes`, without the empty ones: the query string of a link that keeps them."""
        return {name: value for name, value in {**self.values(), **changes}.items() if value}

    def messages(self) -> dict[str, list[str]]:
        """The errors, field by field, as plain text."""
        return {name: [str(message) for message in errors] for name, errors in self.errors.items()}

    @classmethod
    def of(cls, **values: str) -> Self:
        """A valid form of `values`, for code that filters a list without a request; ValueError when one is bad."""
        form = cls(values)
        if not form.is_valid():
            raise ValueError(form.messages())
        return form


def refused(form: FilterForm) -> JsonResponse:
    """The API's answer to bad filters: 400, each field's messages, and the whole in one line under "error"."""
    messages = form.messages()
    line = "; ".join(f"{name}: {' '.join(texts)}" for name, texts in messages.items())
    return JsonResponse({"errors": messages, "error": line}, status=400)
