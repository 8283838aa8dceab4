"""One rule for request input that no view can use: answered 400 before any view runs.

A NUL character is valid in a URL (`%00`) and in Python strings, but
PostgreSQL refuses it in every text value ("A string literal cannot contain
NUL (0x00) characters"), so a lookup with it, in a path or query parameter,
raised a 500 in whichever view passed it on. No name, filter or search
term of this site can contain one, so such a request is refused here,
whatever view it is for.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.template.loader import render_to_string

FORBIDDEN_CHARACTERS = ("\x00",)
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def has_forbidden_character(values: Iterable[str]) -> bool:
    return any(c in value for value in values for c in FORBIDDEN_CHARACTERS)


# The admin's change lists turn any field=value of the query into an ORM
# lookup: an integer past 64 bits raised OverflowError (SQLite) or a
# DataError (PostgreSQL), a 500. Our own views read numbers through forms.
BIGGEST_INTEGER = 2**63 - 1
ADMIN_PREFIX = "/admin/"


def has_huge_integer(values: Iterable[str]) -> bool:
    return any(value.strip().lstrip("+-").isdigit() and abs(int(value)) > BIGGEST_INTEGER for value in values if len(value) > 18)


def invalid_part(request: HttpRequest) -> str | None:
    """The part of the request ("path", "query", "form") holding a character no parameter may have."""
    if has_forbidden_character([request.path_info]):
        return "path"
    if has_forbidden_character(_keys_and_values(request.GET)):
        return "query"
    if request.path_info.startswith(ADMIN_PREFIX) and has_huge_integer(_keys_and_values(request.GET)):
        return "admin query"
    # The form's fields (CsrfViewMiddleware parses a posted form before any view anyway).
    if request.method == "POST" and request.content_type in FORM_CONTENT_TYPES:
        if has_forbidden_character(_keys_and_values(request.POST)):
            return "form"
    return None


def _keys_and_values(params) -> list[str]:
    return [item for key, values in params.lists() for item in (key, *values)]


class RejectInvalidInputMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        part = invalid_part(request)
        if part is None:
            return self.get_response(request)
        if part == "admin query":
            message = "The request's query holds a number larger than any id or count of this site."
        else:
            message = f"The request's {part} holds a NUL character, which no name or filter of this site can contain."
        if request.path_info.startswith("/api/"):
            return JsonResponse({"error": message}, status=400)
        return HttpResponseBadRequest(render_to_string("400.html", {"message": message}, request=request))
