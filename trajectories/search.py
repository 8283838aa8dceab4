"""Text search over trajectory steps: messages, commands and outputs.

On PostgreSQL this is full-text search (`SearchVector`/`SearchQuery` with
the "simple" configuration, so commands and paths are not stemmed); when a
full-text query finds nothing the search retries as a case-insensitive
substring match, because people paste fragments of commands
("evaluate_local") that the text parser keeps inside larger tokens. On
SQLite it is the substring match alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import F, Q, TextField, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast, Greatest, Left, Lower, StrIndex, Substr

from .ansi import strip_ansi
from .models import Observation, Step, ToolCall

SNIPPET_BEFORE = 80
SNIPPET_CHARS = 240
# Where a hit was found, in the order results show them.
WHERES = ["message", "reasoning", "command", "output"]


@dataclass
class Hit:
    step_pk: int
    rollout_id: int
    step_id: int
    position: int
    where: str  # one of WHERES
    snippet: str
    rank: float = 0.0  # full-text rank; 0 for substring matches


@dataclass
class Filters:
    task: int | None = None
    model: int | None = None
    harness: int | None = None
    kind: str = ""
    rollout: int | None = None


def uses_full_text() -> bool:
    return connection.vendor == "postgresql"


def _step_q(filters: Filters, prefix: str = "") -> Q:
    q = Q(**{f"{prefix}subtrajectory__isnull": True})
    if filters.rollout is not None:
        q &= Q(**{f"{prefix}rollout_id": filters.rollout})
    if filters.task is not None:
        q &= Q(**{f"{prefix}rollout__task_id": filters.task})
    if filters.model is not None:
        q &= Q(**{f"{prefix}rollout__model_id": filters.model})
    if filters.harness is not None:
        q &= Q(**{f"{prefix}rollout__harness_id": filters.harness})
    if filters.kind:
        q &= Q(**{f"{prefix}kinds__contains": filters.kind})
    return q


def _sources():
    """(where, model, prefix to the step, text expression) per searched field."""
    return [
        ("message", Step, "", F("message")),
        ("reasoning", Step, "", F("reasoning")),
        ("command", ToolCall, "step__", Cast("arguments", output_field=TextField())),
        ("output", Observation, "step__", F("content")),
    ]


# Outputs have a stored document (a generated column of migration 0004,
# built from their distinct lines); the other fields are indexed by
# expression over their first DOCUMENT_CHARS characters (migration 0005).
# Words beyond are found by the substring fallback.
STORED_DOCUMENTS = {"output": '"trajectories_observation"."search_document"'}
DOCUMENT_CHARS = 262_144


def _document(where: str):
    from django.contrib.postgres.search import SearchVector, SearchVectorField

    if where in STORED_DOCUMENTS:
        return RawSQL(STORED_DOCUMENTS[where], [], output_field=SearchVectorField())
    return SearchVector(Left("_text", DOCUMENT_CHARS), config="simple")


def _first_term(q: str) -> str:
    """The text a snippet centres on: the whole query if short, else its first word."""
    q = q.strip()
    if len(q) <= 40:
        return q
    return re.split(r"\s+", q)[0]


def _matching(where: str, model, prefix: str, expression, q: str, full_text: bool, filters: Filters):
    qs = model.objects.filter(_step_q(filters, prefix)).annotate(_text=expression)
    if full_text:
        from django.contrib.postgres.search import SearchQuery, SearchRank

        # The expressions the GIN indexes of migrations 0002 and 0004 cover.
        query = SearchQuery(q, config="simple", search_type="websearch")
        qs = qs.annotate(_doc=_document(where)).filter(_doc=query)
        qs = qs.annotate(_rank=SearchRank(F("_doc"), query))
    else:
        qs = qs.filter(_text__icontains=q).annotate(_rank=Value(0.0))
    centre = _first_term(q).lower()
    pos = StrIndex(Lower("_text"), Value(centre))
    start = Greatest(pos - SNIPPET_BEFORE, Value(1))
    step_pk = f"{prefix}pk" if not prefix else f"{prefix}id"
    return qs.annotate(_snippet=Substr("_text", start, SNIPPET_CHARS), _pos=pos).values(
        "_snippet",
        "_pos",
        "_rank",
        _step=F(step_pk),
        _rollout=F(f"{prefix}rollout_id"),
        _sid=F(f"{prefix}step_id"),
        _position=F(f"{prefix}position"),
    )


def _clean_snippet(raw: str, where: str, found_at: int) -> str:
    text = raw or ""
    if where == "command":
        # Arguments are JSON text: show what was typed, not its escapes.
        text = text.replace("\\n", " ").replace('\\"', '"').replace("\\t", " ")
    text = re.sub(r"\s+", " ", strip_ansi(text)).strip()
    prefix = "… " if found_at > SNIPPET_BEFORE + 1 else ""
    return prefix + text


def search_steps(q: str, filters: Filters | None = None, limit: int = 200, substring: bool = False) -> list[Hit]:
    """Hits (one per step and field) for `q`, best first, at most `limit`.

    `substring=True` skips full-text search: exact fragments, as in-page
    find does.
    """
    q = (q or "").strip()
    if not q:
        return []
    filters = filters or Filters()
    full_text = uses_full_text() and not substring
    hits = _run(q, filters, limit, full_text=full_text)
    if not hits and full_text:
        hits = _run(q, filters, limit, full_text=False)
    return hits


def _run(q: str, filters: Filters, limit: int, full_text: bool) -> list[Hit]:
    hits: dict[tuple[int, str], Hit] = {}
    for where, model, prefix, expression in _sources():
        rows = _matching(where, model, prefix, expression, q, full_text, filters).order_by(
            "-_rank", f"{prefix}rollout_id", f"{prefix}position"
        )[:limit]
        for row in rows:
            key = (row["_step"], where)
            if key not in hits:
                hits[key] = Hit(
                    rank=float(row["_rank"] or 0.0),
                    step_pk=row["_step"],
                    rollout_id=row["_rollout"],
                    step_id=row["_sid"],
                    position=row["_position"],
                    where=where,
                    snippet=_clean_snippet(row["_snippet"], where, row["_pos"] or 0),
                )
    # Best rank first (full text); ties, and substring search, in trajectory order.
    ordered = sorted(hits.values(), key=lambda h: (-h.rank, h.rollout_id, h.position, WHERES.index(h.where)))
    return ordered[:limit]


def matching_step_ids(rollout_id: int, q: str) -> list[int]:
    """Step ids of one rollout whose text (outputs included) contains `q`.

    The rollout page loads outputs lazily, so its in-page search asks this
    for the steps whose full outputs match.
    """
    hits = search_steps(q, Filters(rollout=rollout_id), limit=5000, substring=True)
    return sorted({hit.step_id for hit in hits})
