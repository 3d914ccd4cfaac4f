"""The SQLite connection: one shared connection, migrations, transactions, meta values.

SQLite is the source of truth; the FAISS index and the graph are derived from it.
The file runs in WAL mode; one logical write is one transaction
(:meth:`SQLiteConnection.transaction`). A single connection is shared by all
threads and guarded by a re-entrant lock, so the store is safe to call from the
worker threads that LangChain and LlamaIndex use for async calls.
"""

from __future__ import annotations

import logging
import math
import random
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from dreammem.errors import BackendError, ConfigError
from dreammem.stores.fts_query import TermShares
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite.codec import backend_error, scope_expression, split_sql
from dreammem.stores.sqlite.rank_outside import DocumentCounts, OutsideRanker
from dreammem.stores.sqlite.touches import PendingTouches
from dreammem.stores.sqlite.user_stats import UserDocuments
from dreammem.stores.sqlite.user_stats import register as register_user_stats
from dreammem.stores.sqlite.writers import needs_raise, raise_min_writer, refused
from dreammem.stores.sqlite.writers import register as register_client_version

__all__ = ["SQLiteConnection"]

log = logging.getLogger(__name__)

_BUSY_SECONDS = 30.0
"""How long a statement waits for another connection's write lock before SQLite answers busy."""

_OPEN_RETRY_SECONDS = 30.0
"""How long opening a store keeps retrying a file that other processes have locked."""


class _Translated:
    """A context that raises SQLite's errors as :class:`BackendError`, for the file at ``path``.

    A class rather than a generator-based context manager: every statement runs inside one,
    and entering a generator costs several times more (a recall runs about 25 statements).
    """

    __slots__ = ("_path",)

    def __init__(self, path: str) -> None:
        self._path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        if isinstance(exc, sqlite3.Error):
            raise refused(exc, self._path) or backend_error(exc, self._path) from exc


class SQLiteConnection:
    """The connection every table family of the SQLite store shares.

    Args:
        path: The database file, or ``":memory:"`` for an ephemeral store.
        context_weight: The BM25 weight of the keyword context column.
    """

    def __init__(self, path: str | Path = ":memory:", *, context_weight: float = 0.5) -> None:
        self.path = str(path)
        if not (math.isfinite(context_weight) and context_weight >= 0):
            raise ConfigError(f"context_weight must be a finite number >= 0, got {context_weight!r}")
        self.context_weight = float(context_weight)
        self._lock = threading.RLock()
        self._depth = 0
        self._owner = 0  # the thread of the open transaction (when _depth > 0)
        self._closed = False
        try:
            self._conn = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=_BUSY_SECONDS
            )
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        register_user_stats(self._conn)
        register_client_version(self._conn)
        self._term_shares = TermShares(lambda: self._scalar("SELECT COUNT(*) FROM records"), self._fts_count)
        self._documents = DocumentCounts(lambda match: self._fts_count(match, 2**62))
        self._outside = OutsideRanker((1.0, self.context_weight))
        self._user_documents = UserDocuments(
            lambda user, phrase: self._fts_count(f"{scope_expression(user)} AND ({phrase})", 2**62)
        )
        self._touches = PendingTouches()  # recall's accesses waiting for the write lock
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
                    self._raise_min_writer()
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
                    for statement in split_sql(migration.sql):
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_version VALUES (?, ?, datetime('now'))",
                        (migration.version, migration.name),
                    )

    def _raise_min_writer(self) -> None:
        """Record this client as the lowest that may write (a read first: no lock when it is)."""
        with self._lock:
            if needs_raise(self._conn):
                with self.transaction() as conn:
                    raise_min_writer(conn)

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

    def _translated(self) -> _Translated:
        """Raise SQLite's errors as :class:`BackendError` (retryable when the file is busy)."""
        return _Translated(self.path)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic unit of work; nested calls join the outer transaction.

        Raises:
            BackendError: SQLite failed; the whole unit of work was rolled back.
        """
        with self._lock:
            if self._depth == 0:
                with self._translated():
                    self._open().execute("BEGIN IMMEDIATE")
            with self._unit() as conn:
                yield conn

    @contextmanager
    def transaction_if_free(self) -> Iterator[sqlite3.Connection | None]:
        """:meth:`transaction` when the write lock is free at once, else ``None``: nothing waits.

        Free means no other thread of this process holds the store and no other process
        holds the file's write lock (SQLite is asked without its busy timeout). Inside this
        thread's own transaction it joins that transaction.
        """
        if not self._lock.acquire(blocking=False):
            yield None
            return
        try:
            if self._depth == 0 and not self._begin_at_once():
                yield None
                return
            with self._unit() as conn:
                yield conn
        finally:
            self._lock.release()

    def _begin_at_once(self) -> bool:
        """``BEGIN IMMEDIATE`` without waiting: False when another connection holds the write lock."""
        conn = self._open()
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            error = backend_error(exc, self.path)
            if error.is_retryable:
                return False
            raise error from exc
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_SECONDS * 1000)}")
        return True

    @contextmanager
    def _unit(self) -> Iterator[sqlite3.Connection]:
        """The body of a transaction whose ``BEGIN`` ran, or that joins the outer one (lock held)."""
        outer = self._depth == 0
        self._depth += 1
        if outer:
            self._owner = threading.get_ident()
        try:
            yield self._conn
        except BaseException as exc:
            self._depth -= 1
            if outer and self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise refused(exc, self.path) or backend_error(exc, self.path) from exc
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

    def in_transaction_here(self) -> bool:
        """Whether the calling thread is inside one of this store's transactions (holding its lock).

        Work handed to another thread that reads the store would wait for that transaction
        to end, so a recall made inside one keeps its work in the caller
        (:mod:`dreammem.recall.beside`).
        """
        return self._depth > 0 and self._owner == threading.get_ident()

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

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

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

    def _note_indexed(self, count: int) -> None:
        """Record that ``count`` rows of the keyword index were written (cached counts go stale)."""
        self._term_shares.note_writes(count)
        self._documents.note_writes(count)

    def _fts_count(self, match: str, cap: int) -> int:
        """How many full-text rows match (counted up to ``cap``)."""
        return self._scalar(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ? LIMIT ?)", (match, cap)
        )
