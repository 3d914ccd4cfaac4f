"""SQLite record store: records, full-text index, stored embeddings, dream queue.

SQLite is the source of truth; the FAISS index and the graph are derived from it.
The file runs in WAL mode; one logical write is one transaction
(:meth:`SQLiteRecordStore.transaction`). A single connection is shared by all
threads and guarded by a re-entrant lock, so the store is safe to call from the
worker threads that LangChain and LlamaIndex use for async calls.
"""

from __future__ import annotations

import json
import logging
import math
import random
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dreammem.errors import BackendError, ConfigError
from dreammem.stores import fts_query
from dreammem.stores.fts_query import (
    TermShares,
    match_all,
    match_any,
    match_pairs,
)
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite_erase import SQLiteErasure
from dreammem.types import Kind, Layer, MemoryRecord, Priority, Role, Source, Status

__all__ = ["SQLiteRecordStore"]

log = logging.getLogger(__name__)

_COLUMNS = [
    "id",
    "user_id",
    "agent_id",
    "session_id",
    "layer",
    "kind",
    "source",
    "role",
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
]
_MUTABLE = [
    "layer",
    "kind",
    "content",
    "confidence",
    "importance",
    "priority",
    "pinned",
    "last_accessed_at",
    "access_count",
    "status",
    "superseded_by",
    "valid_to",
    "provenance",
    "entities",
    "slot",
    "metadata",
    "event_time",
]


def _ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _to_row(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "user_id": record.user_id,
        "agent_id": record.agent_id,
        "session_id": record.session_id,
        "layer": record.layer.value,
        "kind": record.kind.value,
        "source": record.source.value,
        "role": record.role.value if record.role else None,
        "content": record.content,
        "confidence": record.confidence,
        "importance": record.importance,
        "priority": int(record.priority),
        "pinned": int(record.pinned),
        "created_at": _ts(record.created_at),
        "event_time": _ts(record.event_time),
        "last_accessed_at": _ts(record.last_accessed_at),
        "access_count": record.access_count,
        "status": record.status.value,
        "superseded_by": record.superseded_by,
        "valid_to": _ts(record.valid_to),
        "provenance": json.dumps(list(record.provenance)),
        "entities": json.dumps(list(record.entities), ensure_ascii=False),
        "slot": record.slot,
        "metadata": json.dumps(dict(record.metadata), ensure_ascii=False),
    }


def _from_row(row: sqlite3.Row) -> MemoryRecord:
    def dt(name: str) -> datetime | None:
        value = row[name]
        return datetime.fromisoformat(value) if value else None

    created, event = dt("created_at"), dt("event_time")
    assert created is not None and event is not None
    return MemoryRecord(
        id=row["id"],
        user_id=row["user_id"],
        agent_id=row["agent_id"],
        session_id=row["session_id"],
        layer=Layer(row["layer"]),
        kind=Kind(row["kind"]),
        source=Source(row["source"]),
        role=Role(row["role"]) if row["role"] else None,
        content=row["content"],
        confidence=row["confidence"],
        importance=row["importance"],
        priority=Priority(row["priority"]),
        pinned=bool(row["pinned"]),
        created_at=created,
        event_time=event,
        last_accessed_at=dt("last_accessed_at"),
        access_count=row["access_count"],
        status=Status(row["status"]),
        superseded_by=row["superseded_by"],
        valid_to=dt("valid_to"),
        provenance=tuple(json.loads(row["provenance"])),
        entities=tuple(json.loads(row["entities"])),
        slot=row["slot"],
        metadata=json.loads(row["metadata"]),
    )


class SQLiteRecordStore(SQLiteErasure):
    """Records, full-text index, embeddings and the dream queue in one SQLite file.

    Args:
        path: The database file, or ``":memory:"`` for an ephemeral store.
    """

    capabilities = frozenset({"fts", "transactions", "vectors", "queue"})

    def __init__(self, path: str | Path = ":memory:", *, context_weight: float = 0.5) -> None:
        self.path = str(path)
        if not (math.isfinite(context_weight) and context_weight >= 0):
            raise ConfigError(f"context_weight must be a finite number >= 0, got {context_weight!r}")
        self.context_weight = float(context_weight)
        self._lock = threading.RLock()
        self._depth = 0
        self._closed = False
        try:
            self._conn = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30.0
            )
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self._term_shares = TermShares(lambda: self._scalar("SELECT COUNT(*) FROM records"), self._fts_count)
        try:
            self._prepare_with_retry()
        except BackendError:
            self._conn.close()
            raise

    # -- plumbing ---------------------------------------------------------------

    def _prepare_with_retry(self) -> None:
        """Set the pragmas and migrate, retrying while other processes hold the new file.

        SQLite answers ``database is locked`` at once, without waiting out the busy
        timeout, when several processes switch a new file to WAL together; the
        retry (with jitter, within :data:`_OPEN_RETRY_SECONDS`) lets them take turns.
        """
        deadline = time.monotonic() + _OPEN_RETRY_SECONDS
        delay = 0.01
        while True:
            try:
                with self._translated():
                    self._conn.execute("PRAGMA foreign_keys = ON")
                    if self.path != ":memory:":
                        self._conn.execute("PRAGMA journal_mode = WAL")
                        self._conn.execute("PRAGMA synchronous = NORMAL")
                    self._migrate()
                return
            except BackendError as exc:
                if not exc.is_retryable or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)

    def _migrate(self) -> None:
        """Apply the missing migrations; safe when several processes open a new file at once."""
        with self._lock:
            if self._applied() >= {m.version for m in MIGRATIONS}:
                return  # up to date: no write lock taken
            # The write lock first, then the check again: another process may have
            # migrated between our read and our lock.
            with self.transaction() as conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version "
                    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
                )
                done = self._applied()
                for migration in MIGRATIONS:
                    if migration.version in done:
                        continue
                    log.debug("applying migration %s %s", migration.version, migration.name)
                    for statement in _split_sql(migration.sql):
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_version VALUES (?, ?, datetime('now'))",
                        (migration.version, migration.name),
                    )

    def _applied(self) -> set[int]:
        """The migrations recorded in the file (none in a new file)."""
        exists = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if exists is None:
            return set()
        return {int(r[0]) for r in self._conn.execute("SELECT version FROM schema_version")}

    @property
    def schema_version(self) -> int:
        """The highest migration applied."""
        row = self.fetchone("SELECT MAX(version) FROM schema_version")
        assert row is not None
        return int(row[0] or 0)

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Raise SQLite's errors as :class:`BackendError` (retryable when the file is busy)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise _backend_error(exc, self.path) from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic unit of work; nested calls join the outer transaction.

        Raises:
            BackendError: SQLite failed; the whole unit of work was rolled back.
        """
        with self._lock:
            outer = self._depth == 0
            if outer:
                with self._translated():
                    self._open().execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self._conn
            except BaseException as exc:
                self._depth -= 1
                if outer and self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _backend_error(exc, self.path) from exc
                raise
            else:
                self._depth -= 1
                if outer:
                    try:
                        with self._translated():
                            self._conn.execute("COMMIT")
                    finally:
                        if self._conn.in_transaction:  # the commit failed: leave nothing half-open
                            self._conn.execute("ROLLBACK")

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one statement under the store's lock (for sibling stores sharing the file)."""
        with self._lock, self._translated():
            return self._open().execute(sql, params)

    def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a query under the lock and return every row."""
        with self._lock, self._translated():
            return self._open().execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        """Run a query under the lock and return the first row (or None)."""
        with self._lock, self._translated():
            row: sqlite3.Row | None = self._open().execute(sql, params).fetchone()
            return row

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> int:
        row = self.fetchone(sql, params)
        return 0 if row is None or row[0] is None else int(row[0])

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for many parameter rows under the lock."""
        with self._lock, self._translated():
            self._open().executemany(sql, rows)

    def _open(self) -> sqlite3.Connection:
        """The connection, or a typed error once the store is closed (call with the lock held)."""
        if self._closed:
            raise BackendError(f"the store {self.path} is closed; open a new DreamMemory to use it")
        return self._conn

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise :class:`BackendError`."""
        with self._lock:
            self._closed = True
            try:
                self._conn.close()
            except sqlite3.Error:  # pragma: no cover - closing twice is harmless
                pass

    # -- meta ---------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A value from the store's key/value metadata."""
        row = self.fetchone("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
        self.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- records --------------------------------------------------------------------

    def insert(
        self,
        records: Sequence[MemoryRecord],
        match_texts: Sequence[str],
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Insert new records with the tokenised text the keyword path matches on.

        Args:
            records: The records.
            match_texts: Each record's own tokenised words.
            contexts: Each record's tokenised context (the previous turns of its
                session), matched with a lower weight; none by default.

        Returns:
            The row ids of the records, in order (the vector index's ids).
        """
        placeholders = ", ".join(f":{c}" for c in _COLUMNS)
        sql = f"INSERT INTO records ({', '.join(_COLUMNS)}) VALUES ({placeholders})"
        context_terms = contexts if contexts is not None else [""] * len(records)
        rowids: list[int] = []
        with self.transaction() as conn:
            for record, terms, context in zip(records, match_texts, context_terms, strict=True):
                cursor = conn.execute(sql, _to_row(record))
                rowid = int(cursor.lastrowid or 0)
                conn.execute(_INSERT_FTS, (rowid, terms, context))
                rowids.append(rowid)
        self._term_shares.note_writes(len(rowids))
        return rowids

    def update(self, record: MemoryRecord) -> None:
        """Write the mutable fields of an existing record (scoped by its user id)."""
        row = _to_row(record)
        assignments = ", ".join(f"{c} = :{c}" for c in _MUTABLE)
        with self.transaction() as conn:
            cursor = conn.execute(
                f"UPDATE records SET {assignments} WHERE id = :id AND user_id = :user_id", row
            )
            if cursor.rowcount != 1:
                raise BackendError(f"record {record.id} not found for update")

    def delete(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Delete records of this user outright, with their keyword rows (undo only).

        Returns:
            The ids that existed.
        """
        rowids = self.rowids(user_id, ids)
        with self.transaction() as conn:
            conn.executemany("DELETE FROM records_fts WHERE rowid = ?", [(r,) for r in rowids.values()])
            conn.executemany(
                "DELETE FROM records WHERE user_id = ? AND id = ?", [(user_id, i) for i in rowids]
            )
        return list(rowids)

    def get(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user with these ids, in the order asked (missing ids skipped)."""
        if not ids:
            return []
        found: dict[str, MemoryRecord] = {}
        for chunk in _chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT * FROM records WHERE +user_id = ? AND id IN ({marks})", (user_id, *chunk)
            )
            found.update((r["id"], _from_row(r)) for r in rows)
        return [found[i] for i in ids if i in found]

    def ids_with_prefix(self, user_id: str, prefix: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` trace ids of this user that start with ``prefix`` (any status)."""
        rows = self.fetchall(
            # A range on the primary key, not LIKE: no wildcards to escape, and it uses the index.
            "SELECT id FROM records WHERE id >= ? AND id < ? AND +user_id = ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\U0010ffff", user_id, limit),
        )
        return [str(r[0]) for r in rows]

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id."""
        found: dict[int, MemoryRecord] = {}
        for chunk in _chunks(list(rowids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                # "+user_id": look rows up by rowid, never by scanning the user's index.
                f"SELECT rowid AS rid, * FROM records WHERE +user_id = ? AND rowid IN ({marks})",
                (user_id, *chunk),
            )
            found.update((int(r["rid"]), _from_row(r)) for r in rows)
        return found

    def rowids(self, user_id: str, ids: Sequence[str]) -> dict[str, int]:
        """Row ids of this user's records by trace id."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT id, rowid FROM records WHERE +user_id = ? AND id IN ({marks})",
                (user_id, *chunk),
            )
            out.update((r[0], int(r[1])) for r in rows)
        return out

    def find(
        self,
        user_id: str,
        *,
        statuses: Sequence[Status] | None = (Status.ACTIVE,),
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        slot: str | None = None,
        slot_prefix: str | None = None,
        session_id: str | None = None,
        pinned: bool | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        newest_first: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        """Records of this user matching every given filter, ordered by event time.

        ``offset`` skips that many of them first (paging).
        """
        where = ["user_id = ?"]
        params: list[Any] = [user_id]
        for column, values in (("status", statuses), ("layer", layers), ("kind", kinds)):
            if values is not None:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params.extend(v.value for v in values)
        for column, value in (("slot", slot), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if slot_prefix is not None:
            where.append("substr(slot, 1, ?) = ?")
            params.extend([len(slot_prefix), slot_prefix])
        if pinned is not None:
            where.append("pinned = 1" if pinned else "pinned = 0")  # literal: lets the partial index serve it
        if since is not None:
            where.append("event_time >= ?")
            params.append(since.isoformat())
        if until is not None:
            where.append("event_time < ?")
            params.append(until.isoformat())
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT * FROM records WHERE {' AND '.join(where)} ORDER BY event_time {order}, rowid {order}"
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params.extend([-1 if limit is None else limit, offset])
        return [_from_row(r) for r in self.fetchall(sql, params)]

    def keyword_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        max_term_share: float | None = None,
    ) -> list[tuple[int, float]]:
        """BM25 over the full-text index: active records of this user, best first.

        Rows holding every term are ranked first and answer alone when there are
        ``limit`` of them; on large match sets, rows holding two terms next; otherwise
        any term may match (:mod:`dreammem.stores.fts_query`).

        Args:
            user_id: The scope.
            terms: Query terms (any may match).
            limit: How many results at most.
            since: Only records with ``event_time >= since``.
            until: Only records with ``event_time < until``.
            max_term_share: When the OR query runs, leave out terms found in more than
                this share of the indexed rows (if a rarer term remains); ``None`` keeps all.

        Returns:
            ``(rowid, score)`` pairs; the score is the negated FTS5 ``bm25()`` (higher is better).
        """
        terms = self._term_shares.present(terms)
        if not terms:
            return []
        if len(terms) > 1:
            rows = self._bm25(match_all(terms), user_id, limit, since, until)
            if len(rows) >= limit:
                return rows
        if self._term_shares.pairs_pay(terms):
            rows = self._bm25(match_pairs(terms), user_id, limit, since, until)
            if len(rows) >= limit:
                return [(rowid, score / (len(terms) - 1)) for rowid, score in rows]
        if max_term_share is not None:
            rare = self._term_shares.rare(terms, max_term_share)
            if not rare:
                newest = self._bm25_newest(match_any(terms), user_id, limit, since, until)
                if newest is not None:
                    return newest
            terms = rare or terms
        return self._bm25(match_any(terms), user_id, limit, since, until)

    def _bm25_newest(
        self, match: str, user_id: str, limit: int, since: datetime | None, until: datetime | None
    ) -> list[tuple[int, float]] | None:
        """BM25 over the newest ``fts_query.FREQUENT_WINDOW`` matching rows; None when that gives too few."""
        floor = self.fetchone(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match, fts_query.FREQUENT_WINDOW - 1),
        )
        if floor is None:  # fewer matches than the window: the full ranking is cheap
            return None
        where, params = _time_filter(since, until, "r.")
        rows = self.fetchall(
            f"SELECT f.rowid, -f.s FROM (SELECT rowid, {self._rank} AS s FROM records_fts "
            "WHERE records_fts MATCH ? AND rowid >= ?) f JOIN records r ON r.rowid = f.rowid "
            f"WHERE +r.user_id = ? AND r.status = 'active'{where} ORDER BY f.s LIMIT ?",
            (match, int(floor[0]), user_id, *params, limit),
        )
        return [(int(r[0]), float(r[1])) for r in rows] if len(rows) >= limit else None

    def _bm25(
        self, match: str, user_id: str, limit: int, since: datetime | None, until: datetime | None
    ) -> list[tuple[int, float]]:
        """Rows of this user matching an FTS5 expression, best BM25 first."""
        rank = self._rank
        where, params = _time_filter(since, until, "r.")
        filters = f"+r.user_id = ? AND r.status = 'active'{where}"
        if since is None and until is None:
            # Rank in the full-text index alone first (cheap), then keep this user's
            # active rows; fall back to the joined query when too few survive.
            rows = self.fetchall(
                f"SELECT f.rowid, -f.s FROM (SELECT rowid, {rank} AS s FROM records_fts "
                "WHERE records_fts MATCH ? ORDER BY s LIMIT ?) f JOIN records r ON r.rowid = f.rowid "
                f"WHERE {filters} ORDER BY f.s LIMIT ?",
                (match, limit * _HEADROOM, user_id, limit),
            )
            cap = limit * _HEADROOM
            if len(rows) == limit or self._fts_count(match, cap) < cap:  # complete: no fallback
                return [(int(r[0]), float(r[1])) for r in rows]
        span = self._window_span(user_id, since, until)
        if span is None:
            return []
        rows = self.fetchall(
            f"SELECT f.rowid, -{rank} AS score FROM records_fts f "
            "JOIN records r ON r.rowid = f.rowid "
            f"WHERE records_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND {filters} "
            f"ORDER BY {rank} LIMIT ?",
            (match, *span, user_id, *params, limit),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    @property
    def _rank(self) -> str:
        """The BM25 expression: own words weigh 1.0, the context column ``context_weight``."""
        return f"bm25(records_fts, 1.0, {self.context_weight!r})"

    def _window_span(
        self, user_id: str, since: datetime | None, until: datetime | None
    ) -> tuple[int, int] | None:
        """The row id range of this user's active records in the window (None: no records).

        FTS5 skips postings outside a row id range cheaply, so a month of a 100k store
        (memories arrive roughly in time order) ranks a few hundred matches, not all.
        """
        if since is None and until is None:
            return (0, 2**63 - 1)
        where, params = _time_filter(since, until, "")
        row = self.fetchone(
            f"SELECT MIN(rowid), MAX(rowid) FROM records WHERE user_id = ? AND status = 'active'{where}",
            (user_id, *params),
        )
        if row is None or row[0] is None:
            return None
        return int(row[0]), int(row[1])

    def _fts_count(self, match: str, cap: int) -> int:
        """How many full-text rows match (counted up to ``cap``)."""
        return self._scalar(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ? LIMIT ?)", (match, cap)
        )

    def window_rowids(
        self,
        user_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        newest_first: bool = True,
    ) -> list[int]:
        """Row ids of this user's active records with ``since <= event_time < until``.

        Ordered by event time (newest first unless asked otherwise); served by the
        ``(user_id, status, event_time)`` index.
        """
        where, params = _time_filter(since, until, "")
        order = "DESC" if newest_first else "ASC"
        rows = self.fetchall(
            f"SELECT rowid FROM records WHERE user_id = ? AND status = 'active'{where} "
            f"ORDER BY event_time {order} LIMIT ?",
            (user_id, *params, limit),
        )
        return [int(r[0]) for r in rows]

    def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
        """Replace the full-text terms (and context terms) of one record."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM records_fts WHERE rowid = ?", (rowid,))
            conn.execute(_INSERT_FTS, (rowid, terms, context))
        self._term_shares.note_writes(1)

    def set_match_terms(self, rowid: int, terms: str) -> None:
        """Replace a record's own full-text terms, keeping its context terms."""
        row = self.fetchone("SELECT context FROM records_fts WHERE rowid = ?", (rowid,))
        self.set_match_text(rowid, terms, str(row[0]) if row is not None and row[0] else "")

    def twins(self, record: MemoryRecord) -> list[MemoryRecord]:
        """Records with the same text linked to this one by provenance (either way)."""
        rows = self.fetchall(
            "SELECT * FROM records WHERE user_id = ? AND content = ? AND id != ?",
            (record.user_id, record.content, record.id),
        )
        found = [_from_row(r) for r in rows]
        return [r for r in found if record.id in r.provenance or r.id in record.provenance]

    def twins_of(self, user_id: str, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """For each of these records that has a twin (see :meth:`twins`), the twin's id."""
        ids = {r.id for r in records}
        if not ids:
            return {}
        linked = self.get(user_id, sorted({p for r in records for p in r.provenance}))
        linked.extend(self.derived_from(user_id, sorted(ids)))
        out: dict[str, str] = {}
        for record in records:
            for other in linked:
                linked_ids = other.id in record.provenance or record.id in other.provenance
                if other.id != record.id and linked_ids and other.content == record.content:
                    out.setdefault(record.id, other.id)
        return out

    def derived_from(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user whose provenance names any of these ids."""
        found: dict[str, MemoryRecord] = {}
        for chunk in _chunks(sorted(set(ids)), 500):
            rows = self.fetchall(
                "SELECT * FROM records r WHERE user_id = ? AND provenance != '[]' AND EXISTS "
                f"(SELECT 1 FROM json_each(r.provenance) p WHERE p.value IN ({', '.join('?' * len(chunk))}))",
                (user_id, *chunk),
            )
            found.update((r["id"], _from_row(r)) for r in rows)
        return list(found.values())

    def superseded_by_any(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user that one of these records directly superseded."""
        found: list[MemoryRecord] = []
        for chunk in _chunks(sorted(set(ids)), 500):
            rows = self.fetchall(
                "SELECT * FROM records WHERE user_id = ? AND status = 'superseded' "
                f"AND superseded_by IN ({', '.join('?' * len(chunk))})",
                (user_id, *chunk),
            )
            found.extend(_from_row(r) for r in rows)
        return found

    def filter_rowids(
        self,
        user_id: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        limit: int,
    ) -> set[int] | None:
        """Row ids of this user's active records with these column values (None: over ``limit``)."""
        where, params = ["user_id = ?", "status = 'active'"], [user_id]
        for column, value in (("agent_id", agent_id), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        for column, values in (("layer", layers), ("kind", kinds)):
            if values is not None:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params.extend(v.value for v in values)
        sql = f"SELECT rowid FROM records WHERE {' AND '.join(where)} LIMIT ?"
        rows = self.fetchall(sql, (*params, limit + 1))
        return None if len(rows) > limit else {int(r[0]) for r in rows}

    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Which of these record ids are taken, by any user (ids are unique in a store)."""
        taken: set[str] = set()
        for chunk in _chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            taken.update(
                str(r[0]) for r in self.fetchall(f"SELECT id FROM records WHERE id IN ({marks})", chunk)
            )
        return taken

    def existing_message_keys(self, user_id: str, session_id: str | None, keys: Sequence[str]) -> set[str]:
        """Which of these adapter message keys are already stored for the user and session."""
        found: set[str] = set()
        session_clause = "session_id IS ?" if session_id is None else "session_id = ?"
        for chunk in _chunks(list(keys), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT json_extract(metadata, '$.message_key') FROM records WHERE user_id = ? "
                f"AND {session_clause} AND json_extract(metadata, '$.message_key') IN ({marks})",
                (user_id, session_id, *chunk),
            )
            found.update(str(r[0]) for r in rows)
        return found

    def touch(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Record that recall returned these records (access time and count only)."""
        if not ids:
            return
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE records SET last_accessed_at = ?, access_count = access_count + 1 "
                "WHERE user_id = ? AND id = ?",
                [(at.isoformat(), user_id, i) for i in ids],
            )

    def count(self, user_id: str | None = None, *, status: Status | None = None) -> int:
        """How many records (of one user, of one status)."""
        where, params = [], []
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        if status is not None:
            where.append("status = ?")
            params.append(status.value)
        sql = "SELECT COUNT(*) FROM records" + (f" WHERE {' AND '.join(where)}" if where else "")
        return self._scalar(sql, params)

    def slots(self, prefix: str) -> list[str]:
        """Distinct slots of active records, across users, that start with ``prefix``."""
        rows = self.fetchall(
            "SELECT DISTINCT slot FROM records WHERE status = 'active' AND slot IS NOT NULL "
            "AND substr(slot, 1, ?) = ? ORDER BY 1",
            (len(prefix), prefix),
        )
        return [str(r[0]) for r in rows]

    def users(self) -> list[str]:
        """Every user id with at least one record."""
        return [r[0] for r in self.fetchall("SELECT DISTINCT user_id FROM records ORDER BY 1")]

    def history_chain(self, user_id: str, record_id: str) -> list[MemoryRecord]:
        """Every record of the same slot or supersede chain as this one, oldest first."""
        (record,) = self.get(user_id, [record_id]) or (None,)
        if record is None:
            return []
        chain: dict[str, MemoryRecord] = {record.id: record}
        if record.slot:
            for r in self.find(user_id, statuses=None, slot=record.slot, newest_first=False):
                chain[r.id] = r
        # Follow superseded_by links both ways.
        frontier = list(chain)
        while frontier:
            current = frontier.pop()
            rows = self.fetchall(
                "SELECT * FROM records WHERE user_id = ? AND (superseded_by = ? OR id = "
                "(SELECT superseded_by FROM records WHERE user_id = ? AND id = ?))",
                (user_id, current, user_id, current),
            )
            for row in rows:
                if row["id"] not in chain:
                    chain[row["id"]] = _from_row(row)
                    frontier.append(row["id"])
        # Equal times (an edited memory and its earlier text): the version that ended first.
        return sorted(chain.values(), key=lambda r: (r.created_at, r.event_time, r.valid_to or _END))

    # -- vectors ------------------------------------------------------------------------

    def put_vectors(self, rowids: Sequence[int], model: str, vectors: npt.NDArray[np.float32]) -> None:
        """Store embeddings (the FAISS index can be rebuilt from them)."""
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (rowid, model, vec) VALUES (?, ?, ?)",
                [(rid, model, data[i].tobytes()) for i, rid in enumerate(rowids)],
            )

    def clear_vectors(self) -> None:
        """Drop every stored embedding and the model they were made with (before a model switch)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM vectors")
            conn.execute("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim')")

    def iter_active_vectors(
        self, model: str, dim: int, batch: int = 10_000
    ) -> Iterator[tuple[str, list[int], npt.NDArray[np.float32]]]:
        """Stored embeddings of active records, as ``(user_id, rowids, matrix)`` batches."""
        cursor = self.execute(
            "SELECT r.user_id, v.rowid, v.vec FROM vectors v JOIN records r ON r.rowid = v.rowid "
            "WHERE r.status = 'active' AND v.model = ? ORDER BY r.user_id, v.rowid",
            (model,),
        )
        while True:
            with self._lock:
                rows = cursor.fetchmany(batch)
            if not rows:
                return
            by_user: dict[str, tuple[list[int], list[bytes]]] = {}
            for user_id, rowid, blob in rows:
                ids, blobs = by_user.setdefault(user_id, ([], []))
                ids.append(int(rowid))
                blobs.append(blob)
            for user_id, (ids, blobs) in by_user.items():
                matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dim)
                yield user_id, ids, matrix

    def vectors_of(self, user_id: str, model: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of these records of this user, by record id."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for chunk in _chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                "SELECT r.id, v.vec FROM vectors v JOIN records r ON r.rowid = v.rowid "
                f"WHERE r.user_id = ? AND v.model = ? AND r.id IN ({marks})",
                (user_id, model, *chunk),
            )
            found.update((str(r[0]), np.frombuffer(r[1], dtype=np.float32)) for r in rows)
        return found

    def rows_missing_vectors(self, model: str) -> list[tuple[int, str, str]]:
        """Active records with no embedding from this model: ``(rowid, user_id, id)``."""
        rows = self.fetchall(
            "SELECT r.rowid, r.user_id, r.id FROM records r LEFT JOIN vectors v "
            "ON v.rowid = r.rowid AND v.model = ? WHERE v.rowid IS NULL AND r.status = 'active'",
            (model,),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def count_vectors(self, model: str, user_id: str | None = None) -> int:
        """How many active records (of one user) have an embedding from this model."""
        scope, params = ("", [model]) if user_id is None else (" AND r.user_id = ?", [model, user_id])
        return self._scalar(
            "SELECT COUNT(*) FROM vectors v JOIN records r ON r.rowid = v.rowid "
            f"WHERE r.status = 'active' AND v.model = ?{scope}",
            params,
        )

    # -- dream queue ---------------------------------------------------------------------

    def enqueue(self, records: Sequence[MemoryRecord]) -> None:
        """Put records on the short-term queue that the next dream consumes."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO queue (record_id, user_id, enqueued_at) VALUES (?, ?, ?)",
                [(r.id, r.user_id, r.created_at.isoformat()) for r in records],
            )

    def queued(self, user_id: str, limit: int | None = None) -> list[MemoryRecord]:
        """Queued records of this user, oldest first."""
        sql = (
            "SELECT r.* FROM queue q JOIN records r ON r.id = q.record_id "
            "WHERE q.user_id = ? ORDER BY q.enqueued_at, r.rowid"
        )
        params: list[Any] = [user_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_from_row(r) for r in self.fetchall(sql, params)]

    def queue_size(self, user_id: str) -> int:
        """How many records wait for this user's next dream."""
        return self._scalar("SELECT COUNT(*) FROM queue WHERE user_id = ?", (user_id,))

    def dequeue(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove records from the queue (inside the dream's transaction)."""
        with self.transaction() as conn:
            conn.executemany(
                "DELETE FROM queue WHERE user_id = ? AND record_id = ?", [(user_id, i) for i in ids]
            )

    # -- task state ----------------------------------------------------------------------

    def get_task_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The saved task state of a session ({} when none)."""
        row = self.fetchone(
            "SELECT state FROM task_state WHERE user_id = ? AND session_id = ?", (user_id, session_id)
        )
        return {} if row is None else dict(json.loads(row[0]))

    def task_states(self, user_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Every saved task state of this user, by session id."""
        rows = self.fetchall(
            "SELECT session_id, state FROM task_state WHERE user_id = ? ORDER BY session_id", (user_id,)
        )
        return [(str(r[0]), dict(json.loads(r[1]))) for r in rows]

    def set_task_state(self, user_id: str, session_id: str, state: dict[str, Any], at: datetime) -> None:
        """Replace the task state of a session."""
        self.execute(
            "INSERT OR REPLACE INTO task_state VALUES (?, ?, ?, ?)",
            (user_id, session_id, json.dumps(state, ensure_ascii=False), at.isoformat()),
        )


_END = datetime.max.replace(tzinfo=UTC)
_INSERT_FTS = "INSERT INTO records_fts (rowid, terms, context) VALUES (?, ?, ?)"
_HEADROOM = 4
"""Full-text candidates ranked per result wanted before scope filtering."""
_OPEN_RETRY_SECONDS = 30.0
"""How long opening a store keeps retrying a file that other processes have locked."""


def _backend_error(exc: sqlite3.Error, path: str) -> BackendError:
    """A SQLite error as DreamMem's backend error; a busy or locked file may clear on retry."""
    message = str(exc)
    retryable = isinstance(exc, sqlite3.OperationalError) and ("locked" in message or "busy" in message)
    return BackendError(f"SQLite failed on {path}: {message}", is_retryable=retryable)


def _time_filter(since: datetime | None, until: datetime | None, prefix: str) -> tuple[str, list[str]]:
    """SQL conditions (with a leading AND) and parameters for an event-time window."""
    where, params = "", []
    if since is not None:
        where += f" AND {prefix}event_time >= ?"
        params.append(since.astimezone(UTC).isoformat())
    if until is not None:
        where += f" AND {prefix}event_time < ?"
        params.append(until.astimezone(UTC).isoformat())
    return where, params


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _split_sql(script: str) -> list[str]:
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
