"""Every URL pattern of the site, read from the resolver: a test that walks them covers a new view unedited."""
from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver


def url_patterns(resolvers=None, namespace: str = "") -> list[tuple[str, URLPattern]]:
    """(reverse name, pattern) of every named URL pattern of the site, admin's included."""
    found = []
    for entry in resolvers if resolvers is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            found += url_patterns(entry.url_patterns, ns)
        elif entry.name:
            found.append((namespace + entry.name, entry))
    return found
