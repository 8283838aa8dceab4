"""One JSON document read piece by piece: its top-level object, one element of a large list at a time.

A 20,000-step trajectory.json is 87 MB; decoded whole, beside its bytes, it
held four times that. Here the file is read in chunks and decoded with the
json module's own decoder (json.JSONDecoder.raw_decode), one value at a
time: the elements of the list under `stream_key` go to a callback as they
are decoded, and are never all held at once; every other top-level value is
returned as usual. The text is decoded as json.loads decodes bytes (UTF-8,
a byte order mark skipped, encoded surrogates let through).

Only the syntax of JSON is checked here; what the values mean is the
caller's. A document cut short, or not JSON, raises json.JSONDecodeError;
bytes that are not UTF-8, UnicodeDecodeError (json_data.decode_tolerantly
reads such a file whole, replacing them).
"""
from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from typing import Any, BinaryIO

CHUNK_SIZE = 1 << 20
_WHITESPACE = " \t\n\r"
# A number is taken as whole once this many characters follow it in the buffer (or the file ends).
_NUMBER_ROOM = 64
_decoder = json.JSONDecoder()


class RepeatedKey(ValueError):
    """The streamed key appears twice: json.loads would keep the last, but the first was handed out."""


class StreamedDocument:
    """A top-level JSON object without the list under `stream_key` (handed out element by element)."""

    def __init__(self, fields: dict[str, Any], streamed: bool, n_elements: int):
        self.fields = fields
        self.streamed = streamed  # the key was there and held a list
        self.n_elements = n_elements


def read_streamed(
    handle: BinaryIO, stream_key: str, on_element: Callable[[int, Any], None], *, chunk_size: int = CHUNK_SIZE,
) -> StreamedDocument | Any:
    """Read the JSON document in `handle`, calling on_element(index, value) for each element of its `stream_key` list.

    Returns a StreamedDocument when the document is an object; any other
    document is returned decoded (the caller refuses it). The list's
    elements are not kept. A key that appears twice keeps its last value,
    as json.loads does, but `stream_key` twice raises RepeatedKey.
    """
    reader = _Reader(handle, chunk_size)
    reader.skip_whitespace()
    if reader.peek() != "{":
        value = reader.value()
        reader.end()
        return value
    reader.advance(1)
    fields: dict[str, Any] = {}
    streamed, n_elements = False, 0
    reader.skip_whitespace()
    if reader.peek() == "}":
        reader.advance(1)
    else:
        while True:
            reader.skip_whitespace()
            if reader.peek() != '"':
                reader.fail("Expecting property name enclosed in double quotes")
            key = reader.value()
            reader.skip_whitespace()
            reader.expect(":", "Expecting ':' delimiter")
            reader.skip_whitespace()
            if key == stream_key and (streamed or key in fields):
                # json.loads keeps the last of two; elements of the first are handed out already.
                raise RepeatedKey(f"{stream_key!r} appears twice")
            if key == stream_key and reader.peek() == "[":
                streamed = True
                n_elements = reader.stream_list(on_element)
            else:
                fields[key] = reader.value()
            reader.skip_whitespace()
            if reader.peek() == ",":
                reader.advance(1)
                continue
            reader.expect("}", "Expecting ',' delimiter")
            break
    reader.end()
    return StreamedDocument(fields, streamed, n_elements)


class _Reader:
    """A window of decoded text over the file, refilled as values need more."""

    def __init__(self, handle: BinaryIO, chunk_size: int):
        self.handle = handle
        self.chunk_size = chunk_size
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogatepass")
        self.text = ""
        self.pos = 0
        self.offset = 0  # characters dropped before self.text, for error positions
        self.eof = False
        self.first = True

    def more(self, at_least: int = 0) -> bool:
        """Read on until `at_least` more characters are buffered (one chunk when 0); False at the end of the file."""
        if self.eof:
            return False
        # Keep only what is not consumed yet.
        if self.pos:
            self.offset += self.pos
            self.text = self.text[self.pos:]
            self.pos = 0
        wanted = len(self.text) + max(at_least, 1)
        while len(self.text) < wanted:
            raw = self.handle.read(max(self.chunk_size, at_least))
            final = not raw
            piece = self.decoder.decode(raw, final)
            if self.first and piece:
                self.first = False
                if piece.startswith("\ufeff"):
                    piece = piece[1:]  # json.loads skips a byte order mark in bytes (utf-8-sig)
            self.text += piece
            if final:
                self.eof = True
                break
        return True

    def peek(self) -> str:
        while self.pos >= len(self.text):
            if not self.more():
                return ""
        return self.text[self.pos]

    def advance(self, n: int) -> None:
        self.pos += n

    def skip_whitespace(self) -> None:
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text) or not self.more():
                return

    def expect(self, char: str, message: str) -> None:
        if self.peek() != char:
            self.fail(message)
        self.pos += 1

    def fail(self, message: str):
        raise json.JSONDecodeError(message, self.text, self.pos)

    def value(self) -> Any:
        """The next JSON value, reading on as long as the buffer holds only part of it."""
        need = 0
        while True:
            self.peek()
            try:
                value, end = _decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                if self.eof:
                    raise
                # Cut short by the buffer, most likely: read on, doubling, and try again.
                need = max(need * 2, len(self.text) - self.pos, self.chunk_size)
                self.more(need)
                continue
            if not self.eof and end + _NUMBER_ROOM > len(self.text) and self.text[self.pos] in "-0123456789":
                # A number near the end of the buffer may go on in the next chunk ("-1" of "-1.5").
                self.more(_NUMBER_ROOM)
                continue
            self.pos = end
            return value

    def stream_list(self, on_element: Callable[[int, Any], None]) -> int:
        self.expect("[", "Expecting '['")
        self.skip_whitespace()
        if self.peek() == "]":
            self.pos += 1
            return 0
        index = 0
        while True:
            self.skip_whitespace()
            on_element(index, self.value())
            index += 1
            self.skip_whitespace()
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("]", "Expecting ',' delimiter")
            return index

    def end(self) -> None:
        self.skip_whitespace()
        if self.peek() != "":
            self.fail("Extra data")

