"""trajectory.json of a running trial, read as it grows: each read decodes only the steps added since the last.

Harbor's agents rewrite the whole file after every step (json.dumps with
indent 2, terminus-2's numeric arrays compacted), so the steps already read
come back as the same bytes at the same offsets, followed by the new steps
and the keys after the list (final_metrics). A read checks that the file
still starts with the bytes read before, up to the end of the last step,
and decodes only the rest. When it does not (a summarisation restarted the
trajectory, a step was rewritten, another writer formats differently), or
the rest is not what such a file holds, `read` returns None and the caller
reads the file in full and calls `restart`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


class NotYet(ValueError):
    """The file continues the steps read so far but cannot be read yet (caught mid-write, or damaged)."""


@dataclass
class Growth:
    """What a read found after the steps already read."""

    steps: list[Any]  # the new steps, decoded JSON
    tail: dict[str, Any] = field(default_factory=dict)  # the keys after the steps (final_metrics)


class GrowingTrajectory:
    def __init__(self) -> None:
        # The file up to the end of its last step read, in pieces: the part
        # the first read found, then what each read added, merged as they
        # pile up. Comparing piece by piece (bytes.startswith at an offset)
        # copies nothing; joining them after each read would copy the file.
        self._prefix: list[bytes] = []
        self._length = 0
        self.n_steps = 0

    def restart(self, raw: bytes) -> dict[str, Any] | None:
        """Read `raw` in full and remember where its steps end; the decoded document, or None if it is not one."""
        self._prefix, self._length, self.n_steps = [], 0, 0
        try:
            text = raw.decode("utf-8")
            data, end, steps_end = _document(text)
        except (UnicodeDecodeError, ValueError):
            return None
        if text[end:].strip(_SPACE):
            return None
        self._add(text[:steps_end].encode("utf-8"))
        self.n_steps = len(data["steps"])
        return data

    def read(self, raw: bytes) -> Growth | None:
        """The steps `raw` holds after those read before, or None when `raw` does not continue them.

        Raises NotYet when `raw` continues them but ends early or does not
        decode: a file caught while it is being written looks like that.
        """
        if not self._prefix:
            return None
        if len(raw) < self._length or not self._continues(raw):
            if len(raw) < self._length and self._begins_with(raw):
                raise NotYet("the file ends inside the steps already read")
            return None
        try:
            rest = raw[self._length :].decode("utf-8")
            steps, consumed, tail = _continuation(rest, empty=self.n_steps == 0)
        except (UnicodeDecodeError, ValueError) as exc:
            raise NotYet(f"what follows the steps already read does not decode ({exc})") from exc
        if steps:
            self._add(rest[:consumed].encode("utf-8"))
            self.n_steps += len(steps)
        return Growth(steps=steps, tail=tail)

    def _add(self, piece: bytes) -> None:
        prefix = self._prefix
        prefix.append(piece)
        self._length += len(piece)
        # Like a binary counter: a few pieces, each byte copied O(log n) times.
        while len(prefix) > 1 and len(prefix[-2]) <= 2 * len(prefix[-1]):
            last = prefix.pop()
            prefix[-1] += last

    def _continues(self, raw: bytes) -> bool:
        offset = 0
        for piece in self._prefix:
            if not raw.startswith(piece, offset):
                return False
            offset += len(piece)
        return True

    def _begins_with(self, raw: bytes) -> bool:
        """Whether `raw` is a beginning of the steps already read (a file cut short)."""
        offset = 0
        for piece in self._prefix:
            part = raw[offset : offset + len(piece)]
            if not piece.startswith(part):
                return False
            offset += len(piece)
            if offset >= len(raw):
                return True
        return True


def _document(text: str) -> tuple[dict[str, Any], int, int]:
    """(the object, where it ends, where its steps' last element ends); ValueError unless an object with a list of steps."""
    position = _skip(text, 0)
    if text[position : position + 1] != "{":
        raise ValueError("not an object")
    data: dict[str, Any] = {}
    steps_end = -1
    position = _skip(text, position + 1)
    if text[position : position + 1] == "}":
        raise ValueError("no steps")
    while True:
        key, position = _DECODER.raw_decode(text, position)
        if not isinstance(key, str):
            raise ValueError("not an object")
        position = _skip(text, position)
        if text[position : position + 1] != ":":
            raise ValueError("not an object")
        value, end = _DECODER.raw_decode(text, _skip(text, position + 1))
        if key == "steps" and isinstance(value, list):
            # The list's closing bracket is its last character; the last step ends before it.
            steps_end = len(text[: end - 1].rstrip(_SPACE))
            if not value:
                steps_end = end - 1  # just after "[": new steps follow it with no comma
        data[key] = value
        position = _skip(text, end)
        if text[position : position + 1] == ",":
            position = _skip(text, position + 1)
            continue
        if text[position : position + 1] == "}":
            break
        raise ValueError("not an object")
    if steps_end < 0:
        raise ValueError("no list of steps")
    return data, position + 1, steps_end


def _continuation(rest: str, *, empty: bool) -> tuple[list[Any], int, dict[str, Any]]:
    """(new steps, characters of `rest` they take, the keys after the list) of what follows the last step read."""
    steps: list[Any] = []
    position = consumed = 0
    while True:
        position = _skip(rest, position)
        if rest[position : position + 1] == "]":
            break
        if steps or not empty:
            if rest[position : position + 1] != ",":
                raise ValueError("not a continuation")
            position = _skip(rest, position + 1)
        step, position = _DECODER.raw_decode(rest, position)
        steps.append(step)
        consumed = position
    # After the list: `}` or `, "key": value, ... }`, an object's tail.
    after = rest[position + 1 :].strip(_SPACE)
    if after == "}":
        return steps, consumed, {}
    if not after.startswith(","):
        raise ValueError("not a continuation")
    tail = json.loads("{" + after[1:])
    if not isinstance(tail, dict) or "steps" in tail:
        raise ValueError("not a continuation")
    return steps, consumed, tail


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _SPACE:
        position += 1
    return position
