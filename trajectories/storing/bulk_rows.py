"""Many rows into one table at once: ids reserved up front, then PostgreSQL's COPY (bulk_create elsewhere).

An import stores hundreds of steps, tool calls and observations per trial.
Rows are plain dicts of column values, not model instances. Their ids come
from the tables' sequences in one round trip, so a tool call can name its
step before either is stored, and they go through COPY, binary where every
column type allows: several times faster than INSERT for the large texts of
observations. On SQLite the same rows go through bulk_create.

Nothing here knows what a trial is: storing.ingest decides which rows.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from django.db import connection, models
from django.utils import timezone
from psycopg.types.json import set_json_dumps
from psycopg.types.string import StrBinaryDumper, StrBinaryDumperVarchar, StrDumper

BATCH_SIZE = 500


def reserve_ids(counts: dict[type[models.Model], int]) -> dict[type[models.Model], list[int]]:
    """New primary keys from each model's sequence, in one round trip (PostgreSQL).

    Elsewhere the lists are empty and insert_rows lets the database number
    the rows.
    """
    ids: dict[type[models.Model], list[int]] = {model: [] for model in counts}
    wanted = [(model, n) for model, n in counts.items() if n]
    if connection.vendor != "postgresql" or not wanted:
        return ids
    parts, params = [], []
    for model, n in wanted:
        # The sequence as a constant: pg_get_serial_sequence per row was most of the query. One
        # array per model, in one row: a row per id cost a Python tuple each to read.
        parts.append("ARRAY(SELECT nextval(%s::regclass) FROM generate_series(1, %s))")
        params.extend([_sequence(model._meta.db_table, model._meta.pk.column), n])
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(parts)}", params)
        for (model, _), new_ids in zip(wanted, cursor.fetchone()):
            ids[model] = new_ids
    return ids


_sequences: dict[tuple[str, str], str] = {}


def _sequence(table: str, column: str) -> str:
    """The name of the sequence numbering `table`.`column`, looked up once per process."""
    if (table, column) not in _sequences:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
            _sequences[table, column] = cursor.fetchone()[0]
    return _sequences[table, column]


def insert_rows(model: type[models.Model], rows: list[dict[str, Any]], *, ids: bool = True, copy: bool = True) -> None:
    """Insert `rows` (dicts of field attnames to values) and set their "id".

    Fields a row leaves out get their default. On PostgreSQL the rows go
    through COPY with ids drawn from the table's sequence beforehand (or
    given by the caller, from reserve_ids), several times faster than INSERT
    for the large texts of observations; elsewhere Django's bulk_create
    does it. `ids=False`: the caller needs no row's id, so PostgreSQL
    numbers them as they arrive (no round trip to reserve them first) and
    the rows are left without one (bulk_create elsewhere sets them).
    `copy=False` (with ids=False): on PostgreSQL, one INSERT that reads
    nothing back, which pipeline mode can send without waiting (it refuses
    COPY); for a few rows, as INSERT's parameters cost more than COPY's rows.
    """
    if not copy and ids:
        raise ValueError("insert_rows(copy=False) reads no id back: pass ids=False")
    if not rows:
        return
    pk = model._meta.pk
    fields = [f for f in model._meta.concrete_fields if f is not pk]
    for f in fields:
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            # Fields that fill themselves on save, in a future model version.
            now = timezone.now()
            for row in rows:
                row.setdefault(f.attname, now)
    if connection.vendor != "postgresql":
        objects = [model(**row) for row in rows]
        model.objects.bulk_create(objects, batch_size=BATCH_SIZE)
        for row, instance in zip(rows, objects):
            row[pk.attname] = instance.pk
        return
    if not copy:
        _insert_statement(model, rows)
        return
    if ids:
        missing = [row for row in rows if row.get(pk.attname) is None]
        for row, new_id in zip(missing, reserve_ids({model: len(missing)})[model]):
            row[pk.attname] = new_id
    plan = _copy_plan(model, with_pk=ids)
    with connection.cursor() as cursor:
        if len(rows) >= PLAIN_ENCODE_FROM:
            _encode_text_without_keeping_it(cursor.cursor)
        if plan.types:
            # Binary COPY dumps JSON values itself, with our dumps.
            set_json_dumps(_json_text, cursor.cursor)
        with cursor.cursor.copy(plan.statement) as copy_in:
            if plan.types:
                copy_in.set_types(plan.types)
            for row in rows:
                copy_in.write_row(_values(plan, row, json_as_text=not plan.types))


def _insert_statement(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """The rows in one INSERT ... VALUES, the database numbering them."""
    plan = _copy_plan(model, with_pk=False)
    one_row = f"({', '.join(['%s'] * len(plan.names))})"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {plan.table} ({plan.columns}) VALUES {', '.join([one_row] * len(rows))}",
            [value for row in rows for value in _values(plan, row, json_as_text=True)],
        )


def _values(plan: _CopyPlan, row: dict[str, Any], *, json_as_text: bool) -> list[Any]:
    """The row's column values in the plan's order, its missing fields given their defaults."""
    if len(row) < len(plan.names):  # fields left to their defaults
        for name, default in plan.defaults:
            if name not in row:
                row[name] = default()
    values = list(plan.values_of(row))
    if json_as_text:
        for index in plan.json_columns:
            values[index] = _json_text(values[index])
    return values


class _TextBinary(StrBinaryDumper):
    def dump(self, obj: str) -> bytes:
        return obj.encode()


class _VarcharBinary(StrBinaryDumperVarchar):
    def dump(self, obj: str) -> bytes:
        return obj.encode()


class _Text(StrDumper):
    def dump(self, obj: str) -> bytes:
        return obj.encode()


# From this many rows on, COPY encodes text itself (_encode_text_without_keeping_it).
PLAIN_ENCODE_FROM = 1_000


def _encode_text_without_keeping_it(cursor) -> None:
    """Have COPY on `cursor` encode strings with str.encode.

    psycopg's own dumpers ask CPython for a string's UTF-8 form, which
    CPython then keeps inside the string for as long as it lives: the
    text of a long trial's steps, held until its import ends, weighed as
    much again (most observation text is not ASCII). A plain encode lets
    each copy go once it is written, at the cost of a Python call per
    value: worth it for many rows only.
    """
    for dumper in (_TextBinary, _VarcharBinary, _Text):
        cursor.adapters.register_dumper(str, dumper)


@dataclass(frozen=True)
class _CopyPlan:
    """How a model's rows go through COPY: the same for every trial, so worked out once."""

    statement: str
    table: str  # quoted
    columns: str  # quoted, comma-separated, in the order of `names`
    names: tuple[str, ...]  # attnames, in column order, the primary key first (when the rows bring it)
    defaults: tuple[tuple[str, Any], ...]  # (attname, get_default) of the other fields
    json_columns: tuple[int, ...]  # indexes of JSON columns, for text COPY
    types: list[str] | None  # binary COPY types, None for text COPY
    values_of: Any  # row dict -> column values


@functools.cache
def _copy_plan(model: type[models.Model], with_pk: bool = True) -> _CopyPlan:
    pk = model._meta.pk
    columns = [*([pk] if with_pk else []), *(f for f in model._meta.concrete_fields if f is not pk)]
    types = _binary_types(columns)
    names = tuple(f.attname for f in columns)
    quoted = ", ".join(connection.ops.quote_name(f.column) for f in columns)
    table = connection.ops.quote_name(model._meta.db_table)
    return _CopyPlan(
        statement=f"COPY {table} ({quoted}) FROM STDIN" + (" (FORMAT BINARY)" if types else ""),
        table=table,
        columns=quoted,
        names=names,
        defaults=tuple((f.attname, f.get_default) for f in columns if f is not pk),
        json_columns=tuple(index for index, f in enumerate(columns) if isinstance(f, models.JSONField)),
        types=types,
        # itemgetter of one name gives the value, not a 1-tuple.
        values_of=itemgetter(*names) if len(names) > 1 else (lambda row: (row[names[0]],)),
    )


# PostgreSQL types whose binary COPY format psycopg writes. Binary COPY
# skips escaping every large text; a table with any other column type (the
# search document's tsvector) goes as text.
BINARY_TYPES = {
    "bigint": "int8",
    "integer": "int4",
    "smallint": "int2",
    "text": "text",
    "varchar": "varchar",
    "jsonb": "jsonb",
    "timestamp with time zone": "timestamptz",
    "double precision": "float8",
    "boolean": "bool",
}


def _binary_types(fields: list[models.Field]) -> list[str] | None:
    types = []
    for f in fields:
        name = f.db_type(connection) or ""
        name = BINARY_TYPES.get(name.split("(")[0].strip())
        if name is None:
            return None
        types.append(name)
    return types


def _json_text(value: Any) -> str:
    if not value and type(value) is dict:
        return "{}"  # most extras: not worth the encoder
    return json.dumps(value, ensure_ascii=False)
