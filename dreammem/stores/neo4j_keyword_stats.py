"""Each user's keyword statistics on Neo4j: BM25 over a user's records, never the whole index.

FTS5's ``bm25()`` (which the Neo4j store reproduces) takes its row count, average
length and each phrase's document count from the index; counted over every user, they
made one user's scores move with other users' writes. They are counted here over the
user's own ``(:DMRecord)`` nodes (every status, as the SQLite store's keyword rows):

* rows and tokens: the user's nodes with keyword text (the ``user_id`` index);
* a phrase's documents: the user's nodes among the full-text index's matches.

Counts are cached per user and counted again after ``TTL`` seconds, or once this
process wrote more than ``STALE`` of that user's row count (other processes write
too, hence the clock). A recount counts the user's nodes only, so another user's writes
can make it happen sooner but cannot change what it finds. What a search needs counted
(the corpus when due, every phrase not counted yet) is counted in one query: one round
trip, whatever the number of phrases.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from dreammem.stores.fts5_terms import Corpus
from dreammem.stores.neo4j_client import Neo4jClient

__all__ = ["STALE", "TTL", "UserKeywordCounts"]

TTL = 30.0
"""Seconds a user's counts are reused."""
STALE = 0.01
"""Share of a user's rows this process may write before the user's counts are counted again."""
_MAX_USERS = 10_000

_USER_CORPUS = """
CALL () {
  MATCH (r:DMRecord {user_id: $user_id}) WHERE r.terms IS NOT NULL OR r.context IS NOT NULL
  RETURN count(r) AS rows,
    sum(size([t IN split(coalesce(r.terms, ''), ' ') WHERE t <> ''])
      + size([t IN split(coalesce(r.context, ''), ' ') WHERE t <> ''])) AS tokens
}
"""
"""The user's rows and tokens (a subquery of :data:`_COUNTS`, when they are due)."""

_COUNTS = """
CALL () {
  UNWIND $queries AS query
  CALL (query) {
    CALL db.index.fulltext.queryNodes($index, query) YIELD node
    WITH node WHERE node.user_id = $user_id
    RETURN count(node) AS n
  }
  RETURN collect([query, n]) AS documents
}
"""
"""Each query's documents among the user's nodes (then ``RETURN``, with the corpus when it was counted)."""


@dataclass
class _Counted:
    at: float
    written: int
    corpus: Corpus
    documents: dict[str, int] = field(default_factory=dict)


class UserKeywordCounts:
    """Per-user rows, tokens and phrase document counts of the Neo4j keyword index.

    Args:
        client: The server connection.
        index: The full-text index's name.
    """

    def __init__(self, client: Neo4jClient, index: str) -> None:
        self.client = client
        self.index = index
        self._lock = threading.Lock()
        self._written = 0
        self._users: dict[str, _Counted] = {}

    def note_writes(self, count: int) -> None:
        """Record that this process (re)indexed ``count`` rows."""
        with self._lock:
            self._written += count

    def counts(self, user_id: str, queries: dict[str, str]) -> tuple[Corpus, dict[str, int]]:
        """The user's corpus and, for each phrase, its documents among the user's rows.

        Args:
            user_id: The user.
            queries: Each phrase's Lucene query (any field).
        """
        now = time.monotonic()
        with self._lock:
            cached, written = self._users.get(user_id), self._written
        due = (
            cached is None
            or now - cached.at >= TTL
            or written - cached.written > STALE * max(cached.corpus.rows, 1)
        )
        missing = (
            list(queries) if cached is None or due else [p for p in queries if p not in cached.documents]
        )
        if cached is not None and not due and not missing:
            return cached.corpus, {p: cached.documents[p] for p in queries}
        cypher = (
            _USER_CORPUS + _COUNTS + "RETURN rows, tokens, documents" if due else _COUNTS + "RETURN documents"
        )
        (row,) = self.client.run(
            "user_term_count",
            cypher,
            index=self.index,
            queries=list(dict.fromkeys(queries[p] for p in missing)),
            user_id=user_id,
        )
        if cached is None or due:
            cached = _Counted(now, written, Corpus(int(row["rows"] or 0), int(row["tokens"] or 0)))
            with self._lock:
                if len(self._users) >= _MAX_USERS:
                    self._users.clear()
                self._users[user_id] = cached
        found = {str(query): int(n or 0) for query, n in row["documents"]}
        cached.documents.update((p, found[queries[p]]) for p in missing)
        return cached.corpus, {p: cached.documents[p] for p in queries}
