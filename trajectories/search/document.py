"""The words a step is found by: one rule for documents and queries.

Search runs in two stages (see trajectories.search.query): a step is a candidate
when its *document* holds every word of the query, then the fields of the
candidates are read to say where the words are and to rank exact phrases
first. This module is the first stage's single source of truth: how text
splits into words, what a step's and a rollout's documents hold, and how a
query becomes the same words.

A word is a run of ASCII letters and digits, or of non-ASCII characters,
lower-cased: `python3 /app/evaluate_local.py` is `python3 app evaluate
local py`. Splitting at every punctuation mark means a fragment someone
pastes ("evaluate_local", "avr_loss=0.3") finds the step, as their words
in any order would. Tokenising bytes with one translate-and-split is an
order of magnitude faster than PostgreSQL's text parser (`to_tsvector`),
which was most of an import's time.

A document is distinct words, each quoted, space-separated (`'python3'
'app'`), so that a word is found as its quoted form with LIKE. Their order
means nothing (sets are faster than ordered dicts here). The union of the
documents of CHUNK_STEPS consecutive steps (a chunk's) is also the literal
of a tsvector without positions behind a GIN index on PostgreSQL: the index
finds the chunks holding every word, LIKE over their steps' documents
(short, as each holds a word once) the steps, so a rare combination of
words reads a few chunks' steps, not every step of every rollout holding
the words somewhere (issue 27). Chunks rather than steps: 16 steps' words
are about a third of their documents' (the index entries an import pays
for; a rollout's union, once indexed instead, was about two thirds of a
chunk's). The rollout's own union stays, its text behind the trigram
index that substring search reads.
Quoting keeps a word whole in PostgreSQL even when it holds a character it
reads as a space.

Terminal outputs redraw the same screen after every keystroke batch: a
line is indexed at the first step that shows it (`OutputLines`), so a search
for an error finds the step that produced it, not every later step whose
screen still holds it. The rollout page's in-page search still matches the
full outputs.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# Every ASCII byte that is not a letter or digit splits words.
_SEPARATORS = bytes(c for c in range(128) if not chr(c).isalnum())
_SPLIT = bytes.maketrans(_SEPARATORS, b" " * len(_SEPARATORS))

# PostgreSQL refuses lexemes over 2 KB and tsvectors over 1 MB. Words this
# long are blobs (hashes are 64), and a document this size is a log dump.
MAX_WORD_BYTES = 100
MAX_DOCUMENT_WORDS = 20_000
# Marks a document that leaves words out (cut, or too long); never a word,
# as words hold no ASCII punctuation. Substring search must read such steps.
INCOMPLETE = b"+incomplete"
# A tsvector stores each lexeme with a few bytes of header; stay well below 1 MB.
MAX_ROLLOUT_BYTES = 700_000
# Consecutive steps whose words one chunk document holds.
CHUNK_STEPS = 16


def words(text: str) -> list[str]:
    """The distinct words of `text` in order of first appearance."""
    return [word.decode("utf-8", "replace") for word in dict.fromkeys(_split(text)) if len(word) <= MAX_WORD_BYTES]


def _split(text: str) -> list[bytes]:
    if not text.isascii():
        # bytes.lower() folds ASCII only; str.lower() is slower, so only here.
        text = text.lower()
    return text.encode("utf-8", "surrogatepass").lower().translate(_SPLIT).split()


def document(texts: Iterable[str]) -> str:
    """The document of a step whose searchable texts are `texts`."""
    return _literal(_distinct(texts))


def _distinct(texts: Iterable[str]) -> list[bytes] | set[bytes]:
    raw = _split("\n".join(text for text in texts if text))
    # A set is faster than keeping order, and a tsvector has none; order
    # matters only when the cap cuts, to keep the first words.
    distinct = set(raw)
    if len(distinct) > MAX_DOCUMENT_WORDS:
        kept = [word for word in dict.fromkeys(raw) if len(word) <= MAX_WORD_BYTES][:MAX_DOCUMENT_WORDS]
        return [*kept, INCOMPLETE]
    if not distinct or max(map(len, distinct)) <= MAX_WORD_BYTES:
        return distinct  # almost always: a blob of a word is rare (one C-level pass instead of len() per word)
    words = [word for word in distinct if len(word) <= MAX_WORD_BYTES]
    words.append(INCOMPLETE)
    return words


def _literal(distinct: Iterable[bytes]) -> str:
    # Joined as bytes and decoded once: a step has hundreds of words.
    joined = b"' '".join(distinct)
    return (b"'" + joined + b"'").decode("utf-8", "replace") if joined else ""


def infix_filters(q: str) -> list[str] | None:
    """What every document of a step holding `q` as a substring contains.

    Each word of `q` lies inside a word of any text holding `q` (a word
    ends only at punctuation, space or the text's end), so it is a substring
    of that text's document, unless the document is INCOMPLETE. None when
    `q` has no words, or one too long to be in a document: then every text
    must be read.
    """
    found = words(q)
    if not found or any(len(word.encode()) > MAX_WORD_BYTES for word in found):
        return None
    return found


def quoted(word: str) -> str:
    """How `word` appears in a document."""
    return f"'{word}'"


def query_words(q: str) -> list[str]:
    """The words a query needs, all of them, in any order; the last may be a
    word's beginning (it is matched as a prefix: "evaluate_loc" finds
    evaluate_local, as a search box's user expects while typing)."""
    return words(q)


# The same words as `_split` finds, with their places in the text.
_WORD_CHARS = "A-Za-z0-9\u0080-\U0010ffff"
_WORD = re.compile(f"[{_WORD_CHARS}]+")


class Phrase:
    """A query as a phrase: its words in order, apart only by what is not a word.

    "No LoRA file" is found in "ERROR: No LoRA file found" and in
    "no_lora_file", not where the words are apart. The last word may be a
    word's beginning, as search takes it, unless the query is quoted
    ("No LoRA file" between double quotes: the phrase is finished).
    """

    def __init__(self, words: list[str], *, finished: bool):
        self.first = words[0]
        between = f"[^{_WORD_CHARS}]+"
        end = f"(?![{_WORD_CHARS}])" if finished else ""
        self.pattern = re.compile(f"(?<![{_WORD_CHARS}])" + between.join(map(re.escape, words)) + end)

    def find(self, lower: str) -> int:
        """Where the phrase starts in lower-cased text, or -1.

        Its first word is looked for with str.find, the pattern tried only
        there: a regular expression's own search, which cannot skip ahead to
        a literal behind its lookbehind, was 20 times slower over outputs.
        """
        at = lower.find(self.first)
        while at >= 0:
            if self.pattern.match(lower, at):
                return at
            at = lower.find(self.first, at + 1)
        return -1


def phrase_of(q: str) -> Phrase | None:
    """`q` as a Phrase, or None when it has no words."""
    found = query_words(q)
    if not found:
        return None
    q = q.strip()
    return Phrase(found, finished=len(q) > 1 and q[0] == q[-1] == '"')


def highlighted(text: str, q: str, *, by_words: bool) -> list[tuple[str, bool]]:
    """`text` cut into (part, matched) pieces, to show a search hit.

    By words, the query's words are marked where they are whole words of
    the text, and the last one where it begins a word, as search matched
    them; otherwise the query as typed, in any case.
    """
    spans: list[tuple[int, int]] = []
    if by_words:
        query = query_words(q)
        if query:
            whole, prefix = set(query[:-1]), query[-1]
            for match in _WORD.finditer(text):
                word = match.group().lower()
                if word in whole or word.startswith(prefix):
                    spans.append(match.span())
    elif q:
        spans = [match.span() for match in re.finditer(re.escape(q), text, re.IGNORECASE)]
    pieces: list[tuple[str, bool]] = []
    at = 0
    for start, end in spans:
        if start > at:
            pieces.append((text[at:start], False))
        pieces.append((text[start:end], True))
        at = end
    if at < len(text) or not pieces:
        pieces.append((text[at:], False))
    return pieces


def tsquery(query: list[str]) -> str:
    """A PostgreSQL tsquery literal requiring every word of `query`, the last as a prefix.

    Words come from `words`, so they hold no quote, backslash or colon;
    quoting each keeps characters such as `!` or `&` from being operators.
    """
    return " & ".join([*(quoted(word) for word in query[:-1]), quoted(query[-1]) + ":*"])


def like_patterns(query: list[str]) -> list[str]:
    """LIKE patterns finding `query`'s words in a document, the last as a prefix."""
    return [*(f"%{quoted(word)}%" for word in query[:-1]), f"%'{query[-1]}%"]


class OutputLines:
    """The lines of a rollout's outputs not seen at an earlier step."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.outputs: set[str] = set()

    def new(self, content: str) -> str:
        """The lines of `content` that earlier outputs did not show, in order, each once."""
        if not content or content in self.outputs:
            return ""  # agents poll: the same screen again is common
        self.outputs.add(content)
        seen, see = self.seen, self.seen.add
        # One pass: a line is kept the first time it is met, here or at an earlier step.
        return "\n".join([line for line in content.split("\n") if not (line in seen or see(line))])


def flatten(value: Any) -> str:
    """The strings and numbers of a JSON value (a tool call's arguments).

    Not its JSON text: escapes would glue words together (`\\nimport`).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(flatten(item) for item in value.values())
    if isinstance(value, list):
        return "\n".join(flatten(item) for item in value)
    if value is None or isinstance(value, bool):
        return ""
    return str(value)


def trajectory_documents(steps: Iterable[tuple[str, str, list[Any], list[str]]]) -> tuple[list[str], str]:
    """The documents of a trajectory's steps, in order, and of the rollout.

    Each step is (message, reasoning, tool call arguments, output contents);
    an output line is in the document of the first step that shows it. The
    rollout's document holds every word of its steps'.
    """
    documents = TrajectoryDocuments()
    return documents.add(steps), documents.rollout_words()


class TrajectoryDocuments:
    """trajectory_documents as steps arrive: a live rollout indexes each tick's new steps only."""

    def __init__(self) -> None:
        self._lines = OutputLines()
        self._every: set[bytes] = set()
        self._rollout_words: str | None = ""
        self._steps = 0  # steps added so far
        # The words of the chunks not taken since steps joined them (take_chunks), by first step.
        self._chunks: dict[int, set[bytes]] = {}

    def add(self, steps: Iterable[tuple[str, str, list[Any], list[str]]]) -> list[str]:
        """The documents of `steps`, which follow the steps added before."""
        return self.add_steps(steps)[0]

    def add_steps(self, steps: Iterable[tuple[str, str, list[Any], list[str]]]) -> tuple[list[str], list[str]]:
        """(documents, new output lines) of `steps`: each step's words, and the lines of its
        outputs that no earlier step showed (Step.new_output, which substring search reads)."""
        documents: list[str] = []
        new_outputs: list[str] = []
        for distinct, fresh in self._words_of(steps):
            documents.append(_literal(distinct))
            new_outputs.append(fresh)
        return documents, new_outputs

    def count(self, steps: Iterable[tuple[str, str, list[Any], list[str]]]) -> None:
        """Steps stored already, with their chunks: their words and output lines count for the steps
        after them, and neither their documents nor the chunks they filled are made (a long live
        rollout's first tick, a grown trial's stored steps); the open chunk stays, for later steps."""
        for _ in self._words_of(steps):
            pass
        self._forget_stored_chunks()

    def _words_of(self, steps: Iterable[tuple[str, str, list[Any], list[str]]]):
        """Each step's (distinct words, new output lines), counted into the chunks and the rollout's words."""
        lines, every = self._lines, self._every
        known = len(every)
        chunks = self._chunks
        for message, reasoning, arguments, outputs in steps:
            fresh = "\n".join(text for text in map(lines.new, outputs) if text)
            distinct = _distinct([message, reasoning, *map(flatten, arguments), fresh])
            every.update(distinct)
            first = self._steps - self._steps % CHUNK_STEPS
            chunks.setdefault(first, set()).update(distinct)
            self._steps += 1
            yield distinct, fresh
        if len(every) != known:
            self._rollout_words = None

    def take_chunks(self) -> list[tuple[int, int, str]]:
        """(first step, last step, document) of each chunk that steps joined since the last call, in order.

        Steps are counted from 0 in the order added. The last chunk may be
        partial: a later call gives it again, with the steps added since.
        """
        taken = []
        for first, words in sorted(self._chunks.items()):
            last = min(first + CHUNK_STEPS, self._steps) - 1
            taken.append((first, last, _literal(_capped(words))))
        self._forget_stored_chunks()
        return taken

    def _forget_stored_chunks(self) -> None:
        """The chunks so far are stored: forget them, but the open one, which later steps still join."""
        open_chunk = self._steps - self._steps % CHUNK_STEPS
        self._chunks = {open_chunk: self._chunks[open_chunk]} if open_chunk in self._chunks else {}

    def rollout_words(self) -> str:
        """The rollout's document (made again only when a step brought a new word)."""
        if self._rollout_words is None:
            self._rollout_words = _literal(_capped(self._every))
        return self._rollout_words


def stored_chunks(documents: list[str]) -> list[tuple[int, int, str]]:
    """TrajectoryDocuments.take_chunks for steps whose documents (in order) are already made.

    A chunk's document is the union of its steps' quoted words.
    """
    chunks = []
    for first in range(0, len(documents), CHUNK_STEPS):
        words = {word[1:-1].encode() for text in documents[first : first + CHUNK_STEPS] for word in text.split(" ") if word}
        chunks.append((first, min(first + CHUNK_STEPS, len(documents)) - 1, _literal(_capped(words))))
    return chunks


def _capped(words: set[bytes]) -> list[bytes] | set[bytes]:
    """At most MAX_ROLLOUT_BYTES of words (which ones, when cut, is arbitrary; INCOMPLETE marks the cut)."""
    if sum(map(len, words)) + 8 * len(words) <= MAX_ROLLOUT_BYTES:
        return words
    kept, size = [INCOMPLETE], len(INCOMPLETE) + 8
    for word in words:
        size += len(word) + 8
        if size > MAX_ROLLOUT_BYTES:
            break
        kept.append(word)
    return kept
