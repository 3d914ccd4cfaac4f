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
can make it happen sooner but cannot change what it finds.
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
MATCH (r:DMRecord {user_id: $user_id}) WHERE r.terms IS NOT NULL OR r.context IS NOT NULL
RETURN count(r) AS rows,
  sum(size([t IN split(coalesce(r.terms, ''), ' ') WHERE t <> ''])
    + size([t IN split(coalesce(r.context, ''), ' ') WHERE t <> ''])) AS tokens
"""

_USER_DOCUMENTS = """
CALL db.index.fulltext.queryNodes($index, $query) YIELD node
WITH node WHERE node.user_id = $user_id
RETURN count(node)
"""


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
        if (
            cached is None
            or now - cached.at >= TTL
            or written - cached.written > STALE * max(cached.corpus.rows, 1)
        ):
            (row,) = self.client.run("user_corpus", _USER_CORPUS, user_id=user_id)
            cached = _Counted(now, written, Corpus(int(row["rows"] or 0), int(row["tokens"] or 0)))
            with self._lock:
                if len(self._users) >= _MAX_USERS:
                    self._users.clear()
                self._users[user_id] = cached
        missing = [p for p in queries if p not in cached.documents]
        for phrase in missing:
            value = self.client.scalar(
                "user_term_count", _USER_DOCUMENTS, index=self.index, query=queries[phrase], user_id=user_id
            )
            cached.documents[phrase] = int(value or 0)
        return cached.corpus, {p: cached.documents[p] for p in queries}
