"""Rows of the ``records`` table as :class:`~dreammem.types.MemoryRecord` and back, and shared SQL helpers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from dreammem.errors import BackendError
from dreammem.stores.fts_query import match_any
from dreammem.stores.sqlite.user_stats import count_rows
from dreammem.types import FIXED_FIELDS, MemoryRecord, RecordDecoder

__all__ = [
    "COLUMNS",
    "HEADROOM",
    "MUTABLE",
    "backend_error",
    "chunks",
    "from_row",
    "from_rows",
    "insert_fts_rows",
    "remove_fts_rows",
    "scope_expression",
    "scope_token",
    "split_sql",
    "time_filter",
    "to_row",
]

COLUMNS = [
    "id",
    "user_id",
    "agent_id",
    "session_id",
    "layer",
    "kind",
    "source",
    "role",
    "speaker",
    "content",
    "confidence",
    "importance",
    "priority",
    "pinned",
    "created_at",
    "event_time",
    "last_accessed_at",
    "access_count",
    "status",
    "superseded_by",
    "valid_to",
    "provenance",
    "entities",
    "slot",
    "metadata",
    "system",
]
MUTABLE = [c for c in COLUMNS if c not in FIXED_FIELDS]
"""The columns an update rewrites (all but :data:`~dreammem.types.FIXED_FIELDS`)."""
"""Columns an update writes back."""


def ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def to_row(record: MemoryRecord) -> dict[str, Any]:
    """A record as the named parameters of a ``records`` row."""
    return {
        "id": record.id,
        "user_id": record.user_id,
        "agent_id": record.agent_id,
        "session_id": record.session_id,
        "layer": record.layer.value,
        "kind": record.kind.value,
        "source": record.source.value,
        "role": record.role.value if record.role else None,
        "speaker": record.speaker,
        "content": record.content,
        "confidence": record.confidence,
        "importance": record.importance,
        "priority": int(record.priority),
        "pinned": int(record.pinned),
        "created_at": ts(record.created_at),
        "event_time": ts(record.event_time),
        "last_accessed_at": ts(record.last_accessed_at),
        "access_count": record.access_count,
        "status": record.status.value,
        "superseded_by": record.superseded_by,
        "valid_to": ts(record.valid_to),
        "provenance": _dumps(list(record.provenance), ascii_only=True),
        "entities": _dumps(list(record.entities)),
        "slot": record.slot,
        "metadata": _dumps(dict(record.metadata)),
        "system": _dumps(dict(record.system)),
    }


def _dumps(value: list[Any] | dict[str, Any], *, ascii_only: bool = False) -> str:
    """JSON, without the encoder for the empty list and object most rows hold."""
    if not value:
        return "[]" if isinstance(value, list) else "{}"
    return json.dumps(value, ensure_ascii=ascii_only)


def from_row(row: sqlite3.Row) -> MemoryRecord:
    """A stored row as a record: :meth:`MemoryRecord.from_dict`'s record, by a decoder per column layout."""
    return _decoder(row)(row)


def from_rows(rows: Sequence[sqlite3.Row]) -> list[MemoryRecord]:
    """Rows of one statement as records (:func:`from_row`, with the layout's decoder found once)."""
    if not rows:
        return []
    decode = _decoder(rows[0])
    return [decode(row) for row in rows]


def _decoder(row: sqlite3.Row) -> RecordDecoder:
    names = tuple(row.keys())
    decode = _DECODERS.get(names)
    if decode is None:
        decode = _DECODERS[names] = RecordDecoder(names, _loads)
    return decode


_DECODERS: dict[tuple[str, ...], RecordDecoder] = {}
"""One decoder per column layout (a handful: the statements' select lists)."""


def _loads(text: str) -> Any:
    """JSON, without the parser for the empty object most rows hold; a list as a tuple, parsed once."""
    if text == "{}":
        return {}
    if text.startswith("["):
        return _items(text)
    return json.loads(text)


@lru_cache(maxsize=8192)
def _items(text: str) -> tuple[Any, ...]:
    """A stored list (``provenance`` ids, ``entities`` names) as a tuple.

    Parsed once per text: the same records are decoded recall after recall. A tuple of
    strings may be shared between records, as it cannot change.
    """
    return tuple(json.loads(text))


_FTS_ROWS = 300
"""Rows of one full-text insert (three parameters each: under SQLite's oldest cap of 999)."""


def insert_fts_rows(conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]]) -> None:
    """Index records' terms and context, ``(rowid, terms, context)`` each, with their user's scope.

    Their users' keyword statistics are counted in the same transaction
    (:mod:`~dreammem.stores.sqlite.user_stats`).

    Few statements for many rows: inside a transaction every statement opens a savepoint,
    and FTS5 writes its pending rows to disk at each one: a statement per row made a segment
    per row, and the merges that go with them (about half of the insert's time at 300 rows).
    """
    for part in chunks(list(rows), _FTS_ROWS):
        values = ", ".join(["(?, ?, ?)"] * len(part))
        conn.execute(
            "INSERT INTO records_fts (rowid, terms, context, scope) "
            "SELECT v.column1, v.column2, v.column3, 'u' || hex(r.user_id) "
            f"FROM (VALUES {values}) v JOIN records r ON r.rowid = v.column1",
            [value for row in part for value in row],
        )
    count_rows(conn, [row[0] for row in rows], 1)


def remove_fts_rows(conn: sqlite3.Connection, rowids: Sequence[int]) -> None:
    """Remove records' keyword rows (and take them from their users' totals; the records still exist)."""
    count_rows(conn, rowids, -1)
    conn.executemany("DELETE FROM records_fts WHERE rowid = ?", [(r,) for r in rowids])


def scope_token(user_id: str) -> str:
    """The ``scope`` token :func:`insert_fts_rows` writes for a user's rows.

    SQLite's ``hex()`` of a text is the hex of its UTF-8 bytes; the tokenizer folds case.
    """
    return "u" + user_id.encode("utf-8").hex()


def scope_expression(user_id: str) -> str:
    """The FTS5 expression matching a user's keyword rows (its scope token in the scope column)."""
    return f"scope : {match_any([scope_token(user_id)])}"


HEADROOM = 4
"""Full-text candidates ranked per result wanted before scope filtering."""


def backend_error(exc: sqlite3.Error, path: str) -> BackendError:
    """A SQLite error as DreamMem's backend error; a busy or locked file may clear on retry."""
    message = str(exc)
    retryable = isinstance(exc, sqlite3.OperationalError) and ("locked" in message or "busy" in message)
    return BackendError(f"SQLite failed on {path}: {message}", is_retryable=retryable)


def time_filter(since: datetime | None, until: datetime | None, prefix: str) -> tuple[str, list[str]]:
    """SQL conditions (with a leading AND) and parameters for an event-time window."""
    where, params = "", []
    if since is not None:
        where += f" AND {prefix}event_time >= ?"
        params.append(since.astimezone(UTC).isoformat())
    if until is not None:
        where += f" AND {prefix}event_time < ?"
        params.append(until.astimezone(UTC).isoformat())
    return where, params


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    """Slices of at most ``size`` items (SQLite caps the parameters of one statement)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def split_sql(script: str) -> list[str]:
    """Split a migration script into complete statements (a trigger body keeps its ``;``)."""
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending.strip())
            pending = ""
    if pending.strip(" \n;"):
        statements.append(pending.strip())
    return statements
