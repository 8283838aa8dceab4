"""JSON documents read tolerantly, and their values made storable.

Trial folders hold JSON written by many producers, some of it while we
read it: a live trajectory.json is rewritten in place after every episode.
Reading retries a file caught half-written, and a stray byte that is not
UTF-8 becomes U+FFFD instead of refusing the file. What is read is then
made storable in both databases: text without NUL characters or lone
surrogates (PostgreSQL refuses them), JSON without NaN or infinity,
integers that fit their column, aware timestamps (finite floats:
tasks.lib.numbers.as_float).

ATIF trajectories (reading.atif), trial folders (reading.trial_folder) and
the importer (storing.ingest) all read through here.
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import pydantic_core

# A PostgreSQL `integer` column, and a `bigint` one.
INTEGER_LIMIT = 2**31
BIGINT_LIMIT = 2**63


class JsonFileError(ValueError):
    """A JSON file that cannot be read, or is not JSON."""

    def __init__(self, source: str, problem: str):
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class Decoded(NamedTuple):
    """A decoded document and what decoding it found out."""

    data: Any
    storable: bool  # every string in it already storable (see decode_json)
    notes: list[str]  # what was repaired on the way, for the reader's warnings


# -- Reading and decoding -----------------------------------------------------


def read_json_file(
    path: Path,
    *,
    attempts: int = 1,
    delay: float = 0.1,
    first_read: bytes | None = None,
    read: Callable[[], bytes] | None = None,
) -> Any:
    """The parsed JSON of `path`, retrying decode errors `attempts` times.

    A live trial's trajectory.json is rewritten in place (truncate, then
    write) after every episode, so a reader can catch it empty or cut short;
    a moment later it is whole again. `first_read` is the file's bytes when
    the caller has just read them: they stand for the first attempt's read.
    `read` reads the file (default: by its path); a trial folder's reader
    passes one that refuses links.
    """
    return read_json(Path(path), attempts=attempts, delay=delay, first_read=first_read, read=read).data


def read_json_object(path: Path, *, first_read: bytes | None = None) -> dict:
    """read_json_file's document, which must be a JSON object: any other value is a JsonFileError that names its type."""
    data = read_json_file(path, first_read=first_read)
    if not isinstance(data, dict):
        raise JsonFileError(str(path), f"is not a JSON object (a {type(data).__name__})")
    return data


def read_storable_json(path: Path, *, first_read: bytes | None = None) -> Any:
    """read_json_file's document made storable as it is read (clean_json); at little cost when decoding found every string storable."""
    decoded = read_json(Path(path), first_read=first_read)
    return clean_storable_json(decoded.data) if decoded.storable else clean_json(decoded.data)


def read_json(
    path: Path, *, attempts: int = 1, delay: float = 0.1, first_read: bytes | None = None, read: Callable[[], bytes] | None = None
) -> Decoded:
    """read_json_file's document with what decoding found out (see Decoded)."""
    for attempt in range(max(1, attempts)):
        if attempt == 0 and first_read is not None:
            raw = first_read
        else:
            try:
                raw = read() if read is not None else path.read_bytes()
            except OSError as exc:
                raise JsonFileError(str(path), f"cannot be read ({exc.strerror or exc})") from exc
        try:
            return decode_tolerantly(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if attempt + 1 >= max(1, attempts):
                raise JsonFileError(str(path), f"is not valid JSON ({exc})") from exc
            time.sleep(delay * (attempt + 1))
    raise AssertionError("unreachable")


def decode_json(raw: str | bytes | bytearray) -> tuple[Any, bool]:
    """(decoded JSON, whether every string in it is already storable).

    Bytes go through pydantic-core's JSON parser, which is faster than the
    json module and yields the same values for every document it accepts.
    It refuses lone surrogates (escaped or not) and a byte order mark, so
    when it fails the json module decides, with its own errors and its own
    leniency. A document it accepted holds no lone surrogate, and a NUL
    can only come from a `\\u0000` escape: without one, no string needs
    cleaning, which spares a pass over every character of the file.
    """
    if isinstance(raw, (bytes, bytearray)):
        try:
            data = pydantic_core.from_json(raw)
        except ValueError:
            pass
        else:
            return data, b"\\u0000" not in raw
    return json.loads(raw), False


def decode_tolerantly(raw: str | bytes | bytearray) -> Decoded:
    """decode_json, but bytes that are not UTF-8 become U+FFFD, with a note, instead of refusing the file.

    One bad byte in one observation (a binary dump in a terminal) must not
    lose the whole trajectory.
    """
    try:
        data, storable = decode_json(raw)
        return Decoded(data, storable, [])
    except UnicodeDecodeError:
        if not isinstance(raw, (bytes, bytearray)):
            raise
    text = bytes(raw).decode("utf-8", "replace")
    replaced = text.count("\ufffd") - bytes(raw).count("\ufffd".encode())
    data = json.loads(text)
    return Decoded(data, False, [f"{replaced} byte{'s' if replaced != 1 else ''} that are not UTF-8 replaced with U+FFFD"])


# -- Values ------------------------------------------------------------------


def parse_timestamp(value: Any) -> datetime | None:
    """An aware datetime from an ISO 8601 string; naive times are taken as UTC."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None


def storable_int(value: Any, limit: int = INTEGER_LIMIT) -> int | None:
    """An integer that fits the column (PostgreSQL `integer` by default, BIGINT_LIMIT for `bigint`).

    Integral floats (3.0) and digit strings ("3") count; true and false do not.
    """
    if type(value) is int:  # the usual case, first
        return value if -limit < value < limit else None
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 30:
        value = int(value.strip())
    if isinstance(value, int) and -limit < value < limit:
        return value
    return None


def clean_text(value: Any) -> str:
    """Text safe for every database: no NUL characters, no lone surrogates."""
    if value is None:
        return ""
    if not isinstance(value, str):
        if isinstance(value, (dict, list)):
            value = json.dumps(clean_json(value), ensure_ascii=False)
        else:
            value = str(value)
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    if not value.isascii():  # an ASCII string holds no surrogate
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


def clean_storable_text(value: Any) -> str:
    """`clean_text` for a document whose strings are known storable (see decode_json)."""
    return value if type(value) is str else clean_text(value)


def clean_json(value: Any, _depth: int = 0) -> Any:
    """`value` made storable in a JSON column on SQLite and PostgreSQL alike.

    jsonb refuses NUL characters and lone surrogates, and neither backend
    stores NaN or infinity; strings are cleaned, bad floats become None.
    """
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if _depth > 50:
        return None
    if isinstance(value, dict):
        return {clean_text(key): clean_json(item, _depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(item, _depth + 1) for item in value]
    return clean_text(value)


def clean_storable_json(value: Any, depth: int = 0) -> Any:
    """`clean_json` for decoded JSON whose strings are known storable.

    Only what the decoder lets through is left to clean: NaN and infinity,
    and nesting deeper than clean_json keeps.
    """
    if type(value) is dict:
        if depth > 50:
            return None
        return {key: clean_storable_json(item, depth + 1) for key, item in value.items()}
    if type(value) is list:
        if depth > 50:
            return None
        return [clean_storable_json(item, depth + 1) for item in value]
    if type(value) is float and not math.isfinite(value):
        return None
    return value
