"""The search document column and its `has_words` lookup.

One field for both databases (see trajectories.search.document): with
`indexed=True` a tsvector on PostgreSQL (for a GIN index), otherwise text.
`filter(search_document__has_words=["hash", "join"])` matches rows whose
document holds every word, the last as a prefix: an index probe (`@@`) on a
tsvector, a LIKE per word on text, with the same result.
"""
from __future__ import annotations

from django.db import models

from trajectories.search.document import like_patterns, tsquery


class SearchDocumentField(models.TextField):
    description = "words a row is found by"

    def __init__(self, *args, indexed: bool = False, **kwargs):
        self.indexed = indexed
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.indexed:
            kwargs["indexed"] = True
        return name, path, args, kwargs

    def db_type(self, connection):
        if self.indexed and connection.vendor == "postgresql":
            return "tsvector"
        return super().db_type(connection)


@SearchDocumentField.register_lookup
class HasWords(models.Lookup):
    lookup_name = "has_words"
    prepare_rhs = False

    def get_db_prep_lookup(self, value, connection):
        return ("%s", [value])

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        words = list(self.rhs)
        if not words:
            return "1 = 0", []
        if self.lhs.output_field.indexed and connection.vendor == "postgresql":
            return f"{lhs} @@ %s::tsquery", [*lhs_params, tsquery(words)]
        clauses, params = [], []
        # Words hold no LIKE wildcard: every ASCII punctuation mark splits them.
        for pattern in like_patterns(words):
            clauses.append(f"{lhs} LIKE %s")
            params.extend([*lhs_params, pattern])
        return " AND ".join(clauses), params
