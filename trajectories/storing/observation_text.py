"""Bounded observation text: a head and a tail kept in the row, the whole compressed apart.

An agent's `cat` of a log or a `pip install` can print tens of megabytes
into one observation. Pages only ever show the start and the end of such
an output, so the observation row keeps at most `limit` characters (half
from the start, half from the end) and the full text is kept zlib
compressed, read back only when a reader asks for it, as a stream.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterator

DEFAULT_LIMIT = 256 * 1024
# Characters decompressed and sent per chunk of a streamed full text.
CHUNK_CHARS = 64 * 1024


@dataclass(frozen=True)
class Bounded:
    """What an observation row stores of a text."""

    kept: str  # the whole text, or its head followed by its tail
    cut_at: int | None  # where head ends and tail starts in `kept`; None when nothing was cut
    full_length: int

    @property
    def cut(self) -> bool:
        return self.cut_at is not None


def bound(text: str, limit: int = DEFAULT_LIMIT) -> Bounded:
    """`text` whole if it fits in `limit` characters, else its first and last limit/2."""
    if limit <= 0 or len(text) <= limit:
        return Bounded(kept=text, cut_at=None, full_length=len(text))
    head = limit - limit // 2
    tail = limit // 2
    return Bounded(kept=text[:head] + (text[-tail:] if tail else ""), cut_at=head, full_length=len(text))


def compress(text: str) -> bytes:
    # Level 1: terminal output compresses well even so, and an import of a
    # big trial should not wait on the compressor.
    return zlib.compress(text.encode("utf-8", "replace"), 1)


def decompressed_chunks(data: bytes, chunk_bytes: int = CHUNK_CHARS) -> Iterator[bytes]:
    """The UTF-8 bytes of a compressed text, a bounded piece at a time."""
    decompressor = zlib.decompressobj()
    view = memoryview(data)
    for start in range(0, len(view), chunk_bytes):
        piece = decompressor.decompress(view[start : start + chunk_bytes])
        if piece:
            yield piece
    rest = decompressor.flush()
    if rest:
        yield rest


def text_chunks(text: str, chunk_chars: int = CHUNK_CHARS) -> Iterator[bytes]:
    for start in range(0, len(text), chunk_chars):
        yield text[start : start + chunk_chars].encode("utf-8", "replace")
