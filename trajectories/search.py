"""Text search over trajectory steps: messages, commands and outputs.

Two stages. First the candidates: steps whose search document holds every
word of the query (trajectories.search_document says what a word is), in
rollouts whose document holds them all (a GIN index answers on PostgreSQL,
LIKE on SQLite, with the same result). Then the
fields of the candidates are read: each field holding a query word is a hit
with a snippet, and steps holding the query as typed (an exact phrase, case
aside) rank before steps holding its words apart. When no step has all the
words, the search retries as a case-insensitive substring match of the whole
query over the full texts, which also finds text beyond a document's cap.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import Case, F, FloatField, Q, TextField, Value, When
from django.db.models.functions import Cast, Greatest, Lower, StrIndex, Substr
from django.db.models.lookups import GreaterThan

from .ansi import strip_ansi
from .models import Observation, RolloutDocument, Step, ToolCall
from .search_document import query_words, trajectory_documents

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
    rank: float = 0.0  # 1 exact phrase, 0.5 words apart, 0 substring fallback


@dataclass
class Filters:
    task: int | None = None
    model: int | None = None
    harness: int | None = None
    kind: str = ""
    rollout: int | None = None


def uses_full_text() -> bool:
    """Whether the word stage runs on an index (PostgreSQL) rather than LIKE."""
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


# At most this many candidate steps are read for hits and ranks, in
# trajectory order; narrower filters reach further.
CANDIDATES = 1000


def _first_term(q: str) -> str:
    """The text a snippet centres on: the whole query if short, else its first word."""
    q = q.strip()
    if len(q) <= 40:
        return q
    return re.split(r"\s+", q)[0]


def _matching(where: str, model, prefix: str, expression, q: str, filters: Filters, candidates: list[int] | None):
    """Rows of one field holding the query: its words (candidates) or the whole of it."""
    qs = model.objects.filter(_step_q(filters, prefix)).annotate(_text=expression, _lower=Lower("_text"))
    phrase = StrIndex("_lower", Value(q.lower()))
    if candidates is None:
        qs = qs.filter(_text__icontains=q)
        pos = StrIndex("_lower", Value(_first_term(q).lower()))
        rank = Value(0.0)
    else:
        qs = qs.filter(**{f"{prefix}pk__in" if not prefix else f"{prefix}id__in": candidates})
        words = query_words(q)
        # How many of the query's words the field holds; the step's fields
        # holding the most are its hits (its words may be spread over several).
        held = [Case(When(_lower__contains=word, then=Value(1)), default=Value(0)) for word in words]
        qs = qs.annotate(_held=sum(held[1:], held[0])).filter(_held__gt=0)
        first_word = StrIndex("_lower", Value(words[0]))
        pos = Case(When(GreaterThan(phrase, 0), then=phrase), default=first_word)
        rank = Case(When(GreaterThan(phrase, 0), then=Value(1.0)), default=Value(0.5), output_field=FloatField())
    start = Greatest(pos - SNIPPET_BEFORE, Value(1))
    step_pk = f"{prefix}pk" if not prefix else f"{prefix}id"
    if candidates is None:
        qs = qs.annotate(_held=Value(1))
    return qs.annotate(_snippet=Substr("_text", start, SNIPPET_CHARS), _pos=pos, _rank=rank).values(
        "_snippet",
        "_held",
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

    `substring=True` skips the word stage: exact fragments, as in-page find
    does.
    """
    q = (q or "").strip()
    if not q:
        return []
    filters = filters or Filters()
    if query_words(q) and not substring:
        candidates = list(
            Step.objects.filter(
                _step_q(filters),
                rollout__document__words__has_words=query_words(q),
                search_document__has_words=query_words(q),
            )
            .order_by("rollout_id", "position")
            .values_list("pk", flat=True)[:CANDIDATES]
        )
        if candidates:
            return _run(q, filters, limit, candidates)
    return _run(q, filters, limit, None)


def _run(q: str, filters: Filters, limit: int, candidates: list[int] | None) -> list[Hit]:
    hits: dict[tuple[int, str], Hit] = {}
    held: dict[tuple[int, str], int] = {}
    for where, model, prefix, expression in _sources():
        rows = _matching(where, model, prefix, expression, q, filters, candidates).order_by(
            "-_rank", f"{prefix}rollout_id", f"{prefix}position"
        )[:limit]
        for row in rows:
            key = (row["_step"], where)
            held[key] = max(held.get(key, 0), row["_held"])
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
    # A step's hits are its fields holding the most query words; it ranks by
    # its best field, so an exact phrase anywhere lifts all its hits.
    most: dict[int, int] = {}
    best: dict[int, float] = {}
    for (step_pk, _), hit in hits.items():
        most[step_pk] = max(most.get(step_pk, 0), held[(step_pk, hit.where)])
        best[step_pk] = max(best.get(step_pk, 0.0), hit.rank)
    kept = [hit for key, hit in hits.items() if held[key] == most[hit.step_pk]]
    for hit in kept:
        hit.rank = best[hit.step_pk]
    ordered = sorted(kept, key=lambda h: (-h.rank, h.rollout_id, h.position, WHERES.index(h.where)))
    return ordered[:limit]


def matching_step_ids(rollout_id: int, q: str) -> list[int]:
    """Step ids of one rollout whose text (outputs included) contains `q`.

    The rollout page loads outputs lazily, so its in-page search asks this
    for the steps whose full outputs match.
    """
    hits = search_steps(q, Filters(rollout=rollout_id), limit=5000, substring=True)
    return sorted({hit.step_id for hit in hits})


def rebuild_documents(rollout_ids: list[int], models: tuple | None = None) -> int:
    """Write the search documents of these rollouts and their main steps from stored rows.

    The importer writes documents as it stores steps; this is for steps
    written any other way (tests, a migration, an edit). `models` are the
    (Step, ToolCall, Observation, RolloutDocument) classes to use, for
    migrations' historical ones. Returns the number of steps written.
    """
    step_model, call_model, observation_model, document_model = models or (Step, ToolCall, Observation, RolloutDocument)
    written = 0
    for rollout_id in rollout_ids:
        steps = list(
            step_model.objects.filter(rollout_id=rollout_id, subtrajectory__isnull=True)
            .order_by("position")
            .values_list("pk", "message", "reasoning")
        )
        arguments: dict[int, list] = {}
        for step_pk, value in (
            call_model.objects.filter(step__rollout_id=rollout_id, step__subtrajectory__isnull=True)
            .order_by("step_id", "position")
            .values_list("step_id", "arguments")
        ):
            arguments.setdefault(step_pk, []).append(value)
        outputs: dict[int, list[str]] = {}
        for step_pk, content in (
            observation_model.objects.filter(step__rollout_id=rollout_id, step__subtrajectory__isnull=True)
            .order_by("step_id", "position")
            .values_list("step_id", "content")
        ):
            outputs.setdefault(step_pk, []).append(content)
        documents, words = trajectory_documents(
            (message, reasoning, arguments.get(pk, []), outputs.get(pk, [])) for pk, message, reasoning in steps
        )
        changed = [step_model(pk=pk, search_document=doc) for (pk, _, _), doc in zip(steps, documents)]
        step_model.objects.bulk_update(changed, ["search_document"], batch_size=500)
        document_model.objects.update_or_create(rollout_id=rollout_id, defaults={"words": words})
        written += len(changed)
    return written
