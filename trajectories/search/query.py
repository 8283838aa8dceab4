"""Text search over trajectory steps: messages, commands and outputs.

Two stages. First the candidates: steps whose search document holds every
word of the query, the last one as a prefix (as typed so far), in chunks of
steps whose document holds them all (trajectories.search.document says what
a word is; a GIN index answers on PostgreSQL, LIKE on SQLite, with the same
result): only those chunks' steps are read. Then the texts of at most
CANDIDATES of them are read and looked through here, in Python (one pass over a few MB; SQL's lower() and strpos()
over the same texts were several times slower): a step's hits are its
fields holding the most query words, with a snippet, and steps holding the
query's words in order (a phrase: search.document.Phrase) rank
first, and the prompt that opens a trajectory (the same in every rollout
of its task) after what the run wrote. Beside steps, the word stage finds
a rollout's verifier output and trial log (search.texts), where a run's
failure is often said; a hit there names no step. When no step has
all the words, the search retries as a case-insensitive substring match of
the whole query over the full texts in SQL: slower, and also finds text
beyond a document's cap.

Every search has a bounded cost (trajectories.search.bound): a time budget
(AUTOLAB_SEARCH_TIMEOUT_SEC) past which it returns what it found with a
notice; substrings shorter than AUTOLAB_SEARCH_MIN_CHARS are not searched
for; and at most AUTOLAB_SEARCH_SCANS substring searches over all
rollouts run at once on the site (PostgreSQL advisory locks; per process on
SQLite), the others are told the search is busy. The substring stage reads
only the rollouts whose words could hold the query (their documents looked
through in order, a growing window at a time, until enough are taken; for
a rare fragment, on PostgreSQL, a trigram index of each rollout's words
finds the rest: indexing every text cost more than half of an import), a
growing batch at a time, and of those only the steps of the chunks whose
words could; outputs are searched by their new lines (Step.new_output), a
sixth of a terminal's screens.
"""
from __future__ import annotations

import re
import threading
from itertools import islice
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import BooleanField, ExpressionWrapper, F, OuterRef, Q, Subquery, TextField, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast, Greatest, Left, Lower, StrIndex, Substr

from trajectories.ansi import strip_ansi
from trajectories.models import Observation, Rollout, RolloutDocument, RolloutText, Step, StepChunk, ToolCall
from trajectories.search.bound import Budget, OutOfTime, budget
from trajectories.search.chunks import store_chunks
from trajectories.search.document import (
    INCOMPLETE, Phrase, TrajectoryDocuments, flatten, infix_filters, phrase_of, query_words,
)
from trajectories.search.texts import index_verifier

SNIPPET_BEFORE = 80
SNIPPET_CHARS = 240
# Where a hit was found, in the order results show them: a step's fields, then the rollout's texts (search.texts).
WHERES = ["message", "reasoning", "command", "output", "verifier", "log"]
# Ranks of the word stage: the query's words as a phrase, or apart; in the
# prompt that opens a trajectory, below the same in what the run wrote.
PHRASE, WORDS = 1.0, 0.5
PROMPT_PHRASE, PROMPT_WORDS = 0.75, 0.25
# A rollout's texts come after its steps.
TEXT_POSITION = 2**31 - 1


@dataclass
class Hit:
    step_pk: int | None  # None for a hit in a rollout's verifier output or trial log
    rollout_id: int
    step_id: int | None
    position: int
    where: str  # one of WHERES
    snippet: str
    rank: float = 0.0  # PHRASE, PROMPT_PHRASE, WORDS, PROMPT_WORDS; 0 substring fallback


@dataclass
class SearchResult:
    hits: list[Hit] = field(default_factory=list)
    notice: str = ""  # why the hits may be incomplete, or why there are none
    cut_short: bool = False  # the time budget ran out
    busy: bool = False  # every scan slot was taken: nothing was searched


@dataclass
class Filters:
    task: int | None = None
    model: int | None = None
    harness: int | None = None
    kind: str = ""
    rollout: int | None = None


def _step_q(filters: Filters) -> Q:
    """The main steps `filters` allow."""
    q = Q(subtrajectory__isnull=True) & _rollout_q(filters, "rollout__")
    if filters.kind:
        q &= Q(kinds__contains=filters.kind)
    return q


def _sources(q: str, whole_outputs: bool = False):
    """(where, text expression on Step) per field substring search reads.

    Outputs are their new lines (Step.new_output: what no earlier step
    showed), so a search over all rollouts names the step that produced a
    line; within one rollout (the page's in-page find) whole outputs are
    read, every step whose screen holds it. A step's tool calls and
    observations are read through it: their first one holding `q`, a
    subquery per step of the rollouts read, by its index (PostgreSQL's
    planner, which cannot know what a LIKE over long texts costs, would
    otherwise scan every tool call there is).
    """
    output = _first_holding(q, Observation, F("content")) if whole_outputs else F("new_output")
    return [
        ("message", F("message")),
        ("reasoning", F("reasoning")),
        ("command", _first_holding(q, ToolCall, Cast("arguments", output_field=TextField()))),
        ("output", output),
    ]


def _first_holding(q: str, model, expression) -> Subquery:
    """The text of the step's first `model` row (a tool call or observation) holding `q`, or NULL."""
    rows = model.objects.filter(step_id=OuterRef("pk")).annotate(_text=expression).filter(_text__icontains=q)
    return Subquery(rows.order_by("position").values("_text")[:1], output_field=TextField())


# At most this many candidate steps are read for hits and ranks, in
# trajectory order; narrower filters reach further. Of each output only the
# first OUTPUT_CHARS are read (a step matched for words beyond shows its
# start).
CANDIDATES = 250
OUTPUT_CHARS = 65_536


def _first_term(q: str) -> str:
    """The text a snippet centres on: the whole query if short, else its first word."""
    q = q.strip()
    if len(q) <= 40:
        return q
    return re.split(r"\s+", q)[0]


# Reading the texts of at most CANDIDATES steps by primary key is cheap
# and bounded: it may run this long past the budget.
READING_GRACE_SEC = 2.0
SCAN_LOCK = 7_301_003  # advisory lock key of the substring scans' slots (PostgreSQL)
_local_scans = threading.Lock()
_local_running = 0


def timeout_sec() -> float:
    return float(getattr(settings, "AUTOLAB_SEARCH_TIMEOUT_SEC", 1.0))


def min_chars() -> int:
    return int(getattr(settings, "AUTOLAB_SEARCH_MIN_CHARS", 3))


def search_steps(q: str, filters: Filters | None = None, limit: int = 200, substring: bool = False) -> list[Hit]:
    """The hits of search(); see there."""
    return search(q, filters, limit, substring).hits


def search(q: str, filters: Filters | None = None, limit: int = 200, substring: bool = False) -> SearchResult:
    """Hits (one per step and field) for `q`, best first, at most `limit`, within the time budget.

    `substring=True` skips the word stage: exact fragments, as in-page find
    does.
    """
    q = (q or "").strip()
    if not q:
        return SearchResult()
    filters = filters or Filters()
    try:
        return _search(q, filters, limit, substring, chunked=True)
    except _NoChunks:
        # A database not migrated to 0030 yet (code deployed first): by rollouts, as before it.
        return _search(q, filters, limit, substring, chunked=False, texts=False)
    except _NoTexts:
        # Nor to 0037: steps only.
        return _search(q, filters, limit, substring, chunked=True, texts=False)


class _NoChunks(Exception):
    """The StepChunk table is missing (the statement failed: its block is rolled back)."""


class _NoTexts(Exception):
    """The RolloutText table is missing (the statement failed: its block is rolled back)."""


def _search(q: str, filters: Filters, limit: int, substring: bool, *, chunked: bool, texts: bool = True) -> SearchResult:
    words = query_words(q)
    too_short = len(q) < min_chars() and filters.rollout is None
    if too_short and (substring or not words):
        return SearchResult(notice=_too_short_notice(words))
    if words and not substring:
        with budget(timeout_sec()) as bound:
            candidates, cut = _candidates(words, filters, bound, chunked)
            found, texts_cut = _texts_holding(words, filters, bound) if texts and not cut else ([], False)
            cut = cut or texts_cut
            if candidates or found:
                bound.extend(READING_GRACE_SEC)
                try:
                    hits = _word_hits(q, words, candidates, limit, bound, found)
                except OutOfTime:
                    hits, cut = [], True
                return SearchResult(hits, _cut_notice() if cut else "", cut)
        if cut:
            return SearchResult(notice=_cut_notice(), cut_short=True)
        if too_short:
            return SearchResult(notice=_too_short_notice(words))
    if filters.rollout is not None:
        return _substring_search(q, filters, limit, chunked)
    with _scan_slot() as slot:
        if not slot:
            return SearchResult(notice=BUSY_NOTICE, busy=True)
        return _substring_search(q, filters, limit, chunked)


BUSY_NOTICE = "The search is busy with other searches for text as typed; try again in a moment."


def _substring_search(q: str, filters: Filters, limit: int, chunked: bool) -> SearchResult:
    with budget(timeout_sec()) as bound:
        hits, cut = _substring_hits(q, filters, limit, bound, chunked)
    return SearchResult(hits, _cut_notice() if cut else "", cut)


def _too_short_notice(words: list[str]) -> str:
    n = min_chars()
    start = "No step holds these words, and text" if words else "Text without letters or digits"
    return f"{start} is searched for as typed from {n} characters on: type at least {n} characters."


def _cut_notice() -> str:
    return (
        f"The search reached its time limit ({timeout_sec():g} s): these are the matches found by then. "
        "Add words or narrow the filters to search further."
    )


@contextmanager
def _scan_slot() -> Iterator[bool]:
    """One of AUTOLAB_SEARCH_SCANS slots for a substring scan of every rollout, or False when all are taken."""
    slots = int(getattr(settings, "AUTOLAB_SEARCH_SCANS", 1))
    if connection.vendor == "postgresql":
        held = None
        with connection.cursor() as cursor:
            for slot in range(slots):
                cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [SCAN_LOCK, slot])
                if cursor.fetchone()[0]:
                    held = slot
                    break
        try:
            yield held is not None
        finally:
            if held is not None:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [SCAN_LOCK, held])
        return
    global _local_running
    with _local_scans:
        free = _local_running < slots
        if free:
            _local_running += 1
    try:
        yield free
    finally:
        if free:
            with _local_scans:
                _local_running -= 1


def _candidates(words: list[str], filters: Filters, bound: Budget, chunked: bool = True) -> tuple[list[int], bool]:
    """Up to CANDIDATES steps holding every word, in trajectory order; and whether time ran out.

    The chunks of steps holding them all come from their index (those
    leaving words out too), a growing page at a time in trajectory order;
    only their steps' documents are read. A common word stops within the
    first page; a rare combination reads the few chunks holding it, not
    every step of every rollout holding its words somewhere.
    """
    chunks = StepChunk.objects.filter(_rollout_q(filters, "rollout__")).filter(
        Q(words__has_words=words) | Q(words__has_words=[INCOMPLETE.decode()])
    )
    candidates: list[int] = []
    page = CHUNKS_PAGE
    while len(candidates) < CANDIDATES:
        try:
            if chunked:
                ranges, more = bound.run(lambda: _ranges(chunks, page))
            else:
                documents = RolloutDocument.objects.filter(_rollout_q(filters, "rollout__"), words__has_words=words)
                ranges, more = _whole(bound.run(lambda: list(documents.values_list("rollout_id", flat=True)))), None
            # The candidates wanted are often in the first few ranges.
            for steps in _in_chunks(ranges, first_statement=16):
                query = (
                    Step.objects.filter(_step_q(filters), steps, search_document__has_words=words)
                    .order_by("rollout_id", "position")
                    .values_list("pk", flat=True)[: CANDIDATES - len(candidates)]
                )
                candidates += bound.run(lambda: list(query))
                if len(candidates) >= CANDIDATES:
                    break
        except OutOfTime:
            return candidates, True
        if more is None:
            break
        chunks = chunks.filter(Q(rollout_id__gt=more[0]) | Q(rollout_id=more[0], first__gt=more[1]))
        page *= 8
    return candidates, False


# Chunks read in the word stage's first page; each next page is 8 times larger.
CHUNKS_PAGE = 256


# Step ranges (chunks, runs of them merged) per statement reading steps.
RANGES_PER_STATEMENT = 32


def _ranges(chunks, limit: int | None = None) -> tuple[list[tuple[int, int, int]], tuple[int, int] | None]:
    """(rollout, first, last position) of `chunks` (a StepChunk query) in order, adjacent ones merged; with a
    `limit`, of its first `limit` chunks only, and the (rollout, first) of the last when more may follow."""
    try:
        rows = list(chunks.order_by("rollout_id", "first").values_list("rollout_id", "first", "last")[:limit])
    except DatabaseError as exc:
        if StepChunk._meta.db_table in str(exc):
            raise _NoChunks from exc
        raise
    merged: list[tuple[int, int, int]] = []
    for rollout_id, first, last in rows:
        if merged and merged[-1][0] == rollout_id and merged[-1][2] + 1 >= first:
            merged[-1] = (rollout_id, merged[-1][1], max(last, merged[-1][2]))
        else:
            merged.append((rollout_id, first, last))
    more = (rows[-1][0], rows[-1][1]) if limit is not None and len(rows) == limit else None
    return merged, more


def _whole(rollouts: list[int]) -> list[tuple[int, int, int]]:
    """Ranges of every step of these rollouts, in order."""
    return [(rollout_id, 0, 2**31 - 1) for rollout_id in sorted(rollouts)]


def _in_chunks(ranges: list[tuple[int, int, int]], first_statement: int = RANGES_PER_STATEMENT) -> Iterator["InRanges"]:
    """Filters of the steps within `ranges`, in order: `first_statement` ranges, then 4 times more each
    time, up to RANGES_PER_STATEMENT (a statement of many ranges takes a while to plan)."""
    start, size = 0, first_statement
    while start < len(ranges):
        yield InRanges(ranges[start : start + size])
        start, size = start + size, min(size * 4, RANGES_PER_STATEMENT)


class InRanges(RawSQL):
    """Steps within (rollout, first, last position) ranges: `(rollout_id = r AND position >= f AND
    position <= l) OR ...`, the SQL of the Q objects it replaces.

    Written out here rather than as a Q per range: Django built and compiled
    the three lookups of each of 32 ranges a statement in more time than the
    database took to run it (issue 27's rare-word search). A RawSQL, so that
    every backend puts it in WHERE as it is.
    """

    def __init__(self, ranges: list[tuple[int, int, int]]):
        super().__init__("", (), output_field=BooleanField())
        self.ranges = ranges
        self.columns: tuple = ()

    def resolve_expression(self, query=None, allow_joins=True, reuse=None, summarize=False, for_save=False):
        resolved = super().resolve_expression(query, allow_joins, reuse, summarize, for_save)
        resolved.columns = (query.resolve_ref("rollout_id"), query.resolve_ref("position"))
        return resolved

    def as_sql(self, compiler, connection):
        if not self.ranges:
            return "1 = 0", []
        (rollout, _), (position, _) = (compiler.compile(column) for column in self.columns)
        one = f"({rollout} = %s AND {position} >= %s AND {position} <= %s)"
        return "(" + " OR ".join([one] * len(self.ranges)) + ")", [value for found in self.ranges for value in found]


# -- Words: the candidates' texts, looked through in Python ---------------------

# At most this many rollout texts (verifier outputs, trial logs) holding the words are read, in rollout order.
TEXT_CANDIDATES = 100


def _texts_holding(words: list[str], filters: Filters, bound: Budget) -> tuple[list[tuple[int, str, str]], bool]:
    """(rollout, kind, text) of the rollouts' texts holding every word, in order; and whether time ran out.

    None under a step kind filter: they are no step.
    """
    if filters.kind:
        return [], False
    texts = (
        RolloutText.objects.filter(_rollout_q(filters, "rollout__"), words__has_words=words)
        .order_by("rollout_id", "kind")
        .values_list("rollout_id", "kind", "text")
    )
    try:
        return bound.run(lambda: list(texts[:TEXT_CANDIDATES])), False
    except OutOfTime:
        return [], True
    except DatabaseError as exc:
        if RolloutText._meta.db_table in str(exc):
            raise _NoTexts from exc
        raise


def _is_prompt(source: str, position: int) -> bool:
    """Whether a step is the prompt a trajectory opens with (a system message, or the first user message)."""
    return source == "system" or (source == "user" and position == 0)


def _word_hits(
    q: str, words: list[str], candidates: list[int], limit: int, bound: Budget, texts: list[tuple[int, str, str]] = (),
) -> list[Hit]:
    steps = {
        pk: (rollout_id, step_id, position, _is_prompt(source, position),
             {"message": [message], "reasoning": [reasoning], "command": [], "output": []})
        for pk, rollout_id, step_id, position, source, message, reasoning in bound.run(lambda: list(
            Step.objects.filter(pk__in=candidates).values_list(
                "pk", "rollout_id", "step_id", "position", "source", "message", "reasoning"
            )
        ))
    }
    for step_pk, arguments in bound.run(lambda: list(
        ToolCall.objects.filter(step_id__in=candidates).order_by("step_id", "position").values_list("step_id", "arguments")
    )):
        steps[step_pk][4]["command"].append(flatten(arguments))
    for step_pk, content in bound.run(lambda: list(
        Observation.objects.filter(step_id__in=candidates)
        .order_by("step_id", "position")
        .values_list("step_id", Left("content", OUTPUT_CHARS))
    )):
        steps[step_pk][4]["output"].append(content or "")
    found = []
    phrase = phrase_of(q)
    for step_pk, (rollout_id, step_id, position, prompt, fields_of) in steps.items():
        fields = _fields_holding(fields_of, words, phrase)
        at_phrase = any(at_phrase for _, _, _, at_phrase in fields)
        rank = (PROMPT_PHRASE if at_phrase else PROMPT_WORDS) if prompt else (PHRASE if at_phrase else WORDS)
        found += [(rank, rollout_id, position, where, step_pk, step_id, text, at) for where, text, at, _ in fields]
    for rollout_id, kind, text in texts:
        for where, text, at, at_phrase in _fields_holding({kind: [text]}, words, phrase, wheres=(kind,)):
            found.append((PHRASE if at_phrase else WORDS, rollout_id, TEXT_POSITION, where, None, None, text, at))
    found.sort(key=lambda f: (-f[0], f[1], f[2], WHERES.index(f[3])))
    # Snippets only for what is shown.
    return [
        Hit(step_pk, rollout_id, step_id, position, where, _snippet(text, at), rank)
        for rank, rollout_id, position, where, step_pk, step_id, text, at in found[:limit]
    ]


def _fields_holding(
    texts: dict[str, list[str]], words: list[str], phrase: Phrase | None, wheres=WHERES[:4],
) -> list[tuple[str, str, int, bool]]:
    """(where, text, where to centre the snippet, holds the phrase) of the fields holding the most words.

    A step matched by its document holds every word, though maybe spread
    over several fields: its hits are the fields holding the most. When
    none shows a word (it was beyond OUTPUT_CHARS), its output is the hit.
    """
    best: list[tuple[str, str, int, bool]] = []
    most = 0
    for where in wheres:
        for text in texts[where]:
            lower = text.lower()
            held = sum(word in lower for word in words)
            if held == 0 or held < most:
                continue
            at = phrase.find(lower) if phrase is not None else -1
            entry = (where, text, at if at >= 0 else lower.find(words[0]), at >= 0)
            if held > most:
                most, best = held, [entry]
            elif not any(w == where for w, _, _, _ in best):
                best.append(entry)
    if not best and texts.get("output"):
        best = [("output", texts["output"][0], 0, False)]
    return best


def _snippet(text: str, at: int) -> str:
    start = max(at - SNIPPET_BEFORE, 0)
    return _clean_snippet(text[start : start + SNIPPET_CHARS], "", cut_before=start > 0)


# -- Substring: the whole query in the full texts, in SQL -----------------------


def _substring_hits(q: str, filters: Filters, limit: int, bound: Budget, chunked: bool = True) -> tuple[list[Hit], bool]:
    """The hits, and whether the time budget ran out before every field was searched.

    The rollouts that could hold `q` are read a growing batch at a time, in
    order, as the word stage reads its candidates: a fragment found in
    every rollout stops after the first few.
    """
    infixes = infix_filters(q)
    rollouts = _rollouts_that_could_hold(infixes, filters, bound)
    hits: dict[tuple[int, str], Hit] = {}
    sources = _sources(q, whole_outputs=filters.rollout is not None)
    batch = 8
    try:
        while len(hits) < limit:
            taken = list(islice(rollouts, batch))
            if not taken:
                break
            batch *= 2
            for steps in _steps_that_could_hold(infixes, filters, taken, bound, chunked):
                for where, expression in sources:
                    rows = bound.run(lambda: list(_containing(expression, q, steps)[:limit]))
                    for row in rows:
                        if (row["_step"], where) not in hits:
                            hits[row["_step"], where] = _substring_hit(row, where)
    except OutOfTime:
        return _in_order(hits, limit), True
    return _in_order(hits, limit), False


def _substring_hit(row: dict, where: str) -> Hit:
    return Hit(
        step_pk=row["_step"],
        rollout_id=row["_rollout"],
        step_id=row["_sid"],
        position=row["_position"],
        where=where,
        snippet=_clean_snippet(row["_snippet"], where, cut_before=(row["_pos"] or 0) > SNIPPET_BEFORE + 1),
    )


def _in_order(hits: dict[tuple[int, str], Hit], limit: int) -> list[Hit]:
    return sorted(hits.values(), key=lambda h: (h.rollout_id, h.position, WHERES.index(h.where)))[:limit]


def _rollouts_that_could_hold(infixes: list[str] | None, filters: Filters, bound: Budget) -> Iterator[int]:
    """Ids of the rollouts whose documents could hold a text of these words (infix_filters), in order,
    read as they are taken.

    Every word of `q` lies inside a word of a rollout holding it
    (search.document.infix_filters), unless its document is INCOMPLETE.
    Looking through a document costs (its words are read back as text), so
    the first documents in order are looked through a growing window at a
    time (_window): a fragment inside words of most rollouts, whose first
    few rollouts give their hits, stops there (at 1,000 rollouts, looking
    through every document was most of such a search). A rarer one, held by
    less than half of a window, has the rest found at once, on PostgreSQL
    through a trigram index of the documents' text (migration 0022).
    Without such words every rollout the filters allow is read.
    """
    if infixes is None:
        yield from bound.run(
            lambda: list(Rollout.objects.filter(_rollout_q(filters, "")).order_by("pk").values_list("pk", flat=True))
        )
        return
    after, size = 0, FIRST_WINDOW
    while True:
        rows = bound.run(lambda: list(_window(infixes, filters, after, size)))
        held = [rollout_id for rollout_id, holds in rows if holds]
        yield from held
        if len(rows) < size:
            return
        after, size = rows[-1][0], size * 4
        if 2 * len(held) < len(rows):
            break
    rest = documents_that_could_hold(infixes, filters).filter(rollout_id__gt=after)
    yield from bound.run(lambda: list(rest.order_by("rollout_id").values_list("rollout_id", flat=True)))


# Documents looked through in the substring stage's first window; each next one is 4 times larger.
FIRST_WINDOW = 64


def _window(infixes: list[str], filters: Filters, after: int, size: int):
    """(rollout id, could hold) of the first `size` documents the filters allow after rollout `after`, in order.

    The LIKEs are in the select list, of the window's rows only (in WHERE,
    PostgreSQL's planner, which cannot know what they cost, would look
    through every document to sort the few it keeps).
    """
    examined = RolloutDocument.objects.filter(_rollout_q(filters, "rollout__"), rollout_id__gt=after)
    could = ExpressionWrapper(_holding_every("_words", infixes), output_field=BooleanField())
    return (
        RolloutDocument.objects.filter(rollout_id__in=examined.order_by("rollout_id").values("rollout_id")[:size])
        .annotate(_words=Cast("words", TextField()))
        .annotate(_could=could)
        .order_by("rollout_id")
        .values_list("rollout_id", "_could")
    )


def documents_that_could_hold(infixes: list[str] | None, filters: Filters):
    """The RolloutDocuments holding every one of `infixes` inside their words; None without infixes."""
    if infixes is None:
        return None
    documents = RolloutDocument.objects.filter(_rollout_q(filters, "rollout__")).annotate(_words=Cast("words", TextField()))
    return documents.filter(_holding_every("_words", infixes))


def _holding_every(document: str, infixes: list[str]) -> Q:
    """A document (a field of quoted words) holding each infix inside a word, or leaving words out."""
    could = Q()
    for word in infixes:
        could &= Q(**{f"{document}__contains": word})
    return could | Q(**{f"{document}__contains": INCOMPLETE.decode()})


def _rollout_q(filters: Filters, prefix: str) -> Q:
    """The rollouts `filters` allow (never one held back for review); `prefix` leads from the model queried to its Rollout.

    Held back rollouts are left out by id (NOT IN the few held back, read through their index), not by a join
    on every rollout: the substring stage's plan then stays on the words' trigram index."""
    q = ~Q(**{f"{prefix}pk__in": Rollout.objects.filter(held_back=True).values("pk")})
    for name in ("task", "model", "harness"):
        if getattr(filters, name) is not None:
            q &= Q(**{f"{prefix}{name}_id": getattr(filters, name)})
    if filters.rollout is not None:
        q &= Q(**{f"{prefix}pk": filters.rollout})
    return q


# Step ids read per statement of the substring stage: a batch of long rollouts may hold many.
STEPS_PER_STATEMENT = 2_000


def _steps_that_could_hold(
    infixes: list[str] | None, filters: Filters, rollouts: list[int], bound: Budget, chunked: bool = True
) -> list[Q]:
    """The steps of these rollouts to read for a text of these words, as filters of a few thousand steps each.

    Across rollouts, those whose own document holds every word of `q` (as
    their rollout's does), in the chunks whose words hold them all: short
    LIKEs over the chunks' and these steps' documents first, then only
    these steps' fields. Not within one rollout, whose in-page find reads
    whole outputs: their lines may be in the document of an earlier step.
    """
    in_rollouts = _step_q(filters) & Q(rollout_id__in=rollouts)
    if infixes is None or filters.rollout is not None:
        return [in_rollouts]
    chunks = StepChunk.objects.filter(_holding_every("words_text", infixes), rollout_id__in=rollouts)
    if chunked:
        ranges, _ = bound.run(lambda: _ranges(chunks))
    else:
        ranges = _whole(rollouts)
    ids: list[int] = []
    for in_chunks in _in_chunks(ranges):
        steps = Step.objects.filter(_step_q(filters), in_chunks, _holding_every("search_document", infixes))
        ids += bound.run(lambda: list(steps.order_by("pk").values_list("pk", flat=True)))
    return [Q(pk__in=ids[start : start + STEPS_PER_STATEMENT]) for start in range(0, len(ids), STEPS_PER_STATEMENT)]


def _containing(expression, q: str, steps: Q):
    """The `steps` whose text `expression` holds `q`, in order, with a snippet around it."""
    qs = Step.objects.filter(steps).annotate(_text=expression).filter(_text__icontains=q)
    pos = StrIndex(Lower("_text"), Value(_first_term(q).lower()))
    start = Greatest(pos - SNIPPET_BEFORE, Value(1))
    return (
        qs.annotate(_snippet=Substr("_text", start, SNIPPET_CHARS), _pos=pos)
        .order_by("rollout_id", "position")
        .values("_snippet", "_pos", _step=F("pk"), _rollout=F("rollout_id"), _sid=F("step_id"), _position=F("position"))
    )


def _clean_snippet(raw: str, where: str, *, cut_before: bool) -> str:
    text = raw or ""
    if where == "command":
        # Arguments are JSON text: show what was typed, not its escapes.
        text = text.replace("\\n", " ").replace('\\"', '"').replace("\\t", " ")
    text = re.sub(r"\s+", " ", strip_ansi(text)).strip()
    prefix = "… " if cut_before else ""
    return prefix + text


def matching_step_ids(rollout_id: int, q: str) -> list[int]:
    """Step ids of one rollout whose text (outputs included) contains `q`."""
    return matching_steps(rollout_id, q)[0]


def matching_steps(rollout_id: int, q: str) -> tuple[list[int], bool]:
    """Step ids of one rollout whose text (outputs included) contains `q`; and whether time ran out.

    The rollout page loads outputs lazily, so its in-page search asks this
    for the steps whose full outputs match.
    """
    result = search(q, Filters(rollout=rollout_id), limit=5000, substring=True)
    return sorted({hit.step_id for hit in result.hits}), result.cut_short


def _has_field(model, name: str) -> bool:
    return any(field.name == name for field in model._meta.get_fields())


def rebuild_documents(rollout_ids: list[int], models: tuple | None = None) -> int:
    """Write the search documents of these rollouts and their main steps from stored rows.

    The importer writes documents as it stores steps; this is for steps
    written any other way (tests, a migration, an edit). `models` are the
    (Step, ToolCall, Observation, RolloutDocument[, StepChunk]) classes to
    use, for migrations' historical ones (before migration 0030, without
    chunks); with the current ones, each rollout's verifier output is
    indexed again too (search.texts). Returns the number of steps written.
    """
    step_model, call_model, observation_model, document_model, *chunk_model = models or (
        Step, ToolCall, Observation, RolloutDocument, StepChunk
    )
    written = 0
    for rollout_id in rollout_ids:
        steps = list(
            step_model.objects.filter(rollout_id=rollout_id, subtrajectory__isnull=True)
            .order_by("position")
            .values_list("pk", "message", "reasoning", "position")
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
        builder = TrajectoryDocuments()
        documents, new_outputs = builder.add_steps(
            (message, reasoning, arguments.get(pk, []), outputs.get(pk, [])) for pk, message, reasoning, _ in steps
        )
        # A migration's historical Step may predate new_output (0020).
        fields = ["search_document", "new_output"] if _has_field(step_model, "new_output") else ["search_document"]
        changed = [
            step_model(pk=pk, search_document=doc, **({"new_output": new} if "new_output" in fields else {}))
            for (pk, _, _, _), doc, new in zip(steps, documents, new_outputs)
        ]
        step_model.objects.bulk_update(changed, fields, batch_size=500)
        document_model.objects.update_or_create(rollout_id=rollout_id, defaults={"words": builder.rollout_words()})
        if chunk_model:
            positions = [position for _, _, _, position in steps]
            store_chunks(rollout_id, builder.take_chunks(), whole=True, positions=positions, model=chunk_model[0])
        if models is None:
            verifier = ("pk", "verifier_stdout", "verifier_fields", "verifier_outputs")
            index_verifier(Rollout.objects.only(*verifier).get(pk=rollout_id))
        written += len(changed)
    return written
