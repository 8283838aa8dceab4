"""The search document column and its `has_words` lookup.

One field for both databases (see trajectories.search_document): a tsvector
on PostgreSQL, plain text elsewhere. `Step.objects.filter(
search_document__has_words=["hash", "join"])` is a GIN index probe on
PostgreSQL and a LIKE per word on SQLite; either way a step matches when
its document holds every word.
"""
from __future__ import annotations

from django.db import models

from .search_document import quoted, tsquery


class SearchDocumentField(models.TextField):
    description = "words a row is found by (tsvector on PostgreSQL)"

    def db_type(self, connection):
        if connection.vendor == "postgresql":
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
        if connection.vendor == "postgresql":
            return f"{lhs} @@ %s::tsquery", [*lhs_params, tsquery(words)]
        clauses, params = [], []
        for word in words:
            # Words hold no LIKE wildcard: every ASCII punctuation mark splits them.
            clauses.append(f"{lhs} LIKE %s")
            params.extend([*lhs_params, f"%{quoted(word)}%"])
        return " AND ".join(clauses), params

