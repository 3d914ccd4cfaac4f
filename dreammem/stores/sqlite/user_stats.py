"""Each user's keyword statistics, so that a user's BM25 scores depend on that user's rows only.

FTS5's ``bm25()`` takes its statistics (rows, average length, each phrase's document
count) from the whole table, so one user's ranking moved when other users wrote. The
table ``keyword_users`` (migration 16) holds, per user, the rows in the keyword index,
their tokens (own words and context, FTS5's own counts from ``records_fts_docsize``)
and the store's write stamp at its last change; every statement that adds or removes a user's keyword rows
changes it in the same transaction (:func:`count_rows`). A phrase's documents among a
user's rows are counted in the index (the phrase ANDed with the user's scope token)
and cached until that user's stamp moves (:class:`UserDocuments`): exact, and
no other user's write can change them.

The table holds numbers and user ids only (no text); erasing a user deletes the row.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dreammem.stores.fts5_terms import Corpus
from dreammem.stores.sqlite.rank_outside import varints

__all__ = ["TOKENS_FUNCTION", "UserDocuments", "UserStats", "count_rows", "fts_tokens", "register"]

TOKENS_FUNCTION = "dm_fts_tokens"
"""The SQL function :func:`register` adds: a ``records_fts_docsize`` blob's text tokens."""
_STAMP = "keyword_writes"
"""The meta key counting the writes to the keyword index: a user's ``writes`` is the count at its last change.

A store-wide count, so a user erased and written again never returns to a stamp seen before.
"""
_MAX_CACHED = 50_000
_CHUNK = 500


def fts_tokens(sizes: bytes | None) -> int:
    """A row's tokens in the own-words and context columns, from its ``records_fts_docsize`` blob."""
    return sum(varints(bytes(sizes or b""))[:2])


def register(conn: sqlite3.Connection) -> None:
    """Add :data:`TOKENS_FUNCTION` to a connection (migration 16 and :func:`count_rows` use it)."""
    conn.create_function(TOKENS_FUNCTION, 1, fts_tokens, deterministic=True)


def count_rows(conn: sqlite3.Connection, rowids: Sequence[int], sign: int) -> None:
    """Add keyword rows to their users' totals (``sign`` 1, after indexing), or take them away (-1).

    Taking away comes before the rows are removed.

    Call inside the transaction that writes the keyword rows, while the rows and their
    records exist.
    """
    if not rowids:
        return
    conn.execute(
        f"INSERT INTO meta VALUES ('{_STAMP}', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
    for start in range(0, len(rowids), _CHUNK):
        part = list(rowids[start : start + _CHUNK])
        marks = ", ".join("?" * len(part))
        conn.execute(
            "INSERT INTO keyword_users (user_id, rows, tokens, writes) "
            f"SELECT r.user_id, {int(sign)} * count(*), {int(sign)} * sum({TOKENS_FUNCTION}(d.sz)), "
            f"(SELECT CAST(value AS INTEGER) FROM meta WHERE key = '{_STAMP}') "
            "FROM records_fts_docsize d JOIN records r ON r.rowid = d.id "
            f"WHERE d.id IN ({marks}) GROUP BY r.user_id "
            "ON CONFLICT (user_id) DO UPDATE SET rows = rows + excluded.rows, "
            "tokens = tokens + excluded.tokens, writes = excluded.writes",
            part,
        )


@dataclass(frozen=True, slots=True)
class UserStats:
    """One user's keyword rows, their tokens and the write stamp of their last change."""

    rows: int
    tokens: int
    writes: int
    """The store's write stamp when the user's rows last changed (never reused)."""

    @property
    def corpus(self) -> Corpus:
        """The statistics BM25 takes for this user's rows."""
        return Corpus(self.rows, self.tokens)


class UserDocuments:
    """Each user's rows holding a phrase, counted in the index and kept until the user's rows change.

    Args:
        count: ``count(user_id, phrase)`` counts the user's keyword rows holding an FTS5 phrase.
    """

    def __init__(self, count: Callable[[str, str], int]) -> None:
        self._count = count
        self._lock = threading.Lock()
        self._cached: dict[tuple[str, str], tuple[int, int]] = {}

    def get(self, user_id: str, stats: UserStats, phrase: str, *, cache: bool = True) -> int:
        """The user's rows holding ``phrase``, the user's totals being ``stats`` (asked unlocked).

        ``cache=False`` (inside a write transaction, which may roll back) counts and keeps nothing.
        """
        key = (user_id, phrase)
        with self._lock:
            cached = self._cached.get(key)
        if cached is not None and cached[0] == stats.writes:
            return cached[1]
        count = self._count(user_id, phrase)
        if not cache:
            return count
        with self._lock:
            if len(self._cached) >= _MAX_CACHED:
                self._cached.clear()
            self._cached[key] = (stats.writes, count)
        return count
