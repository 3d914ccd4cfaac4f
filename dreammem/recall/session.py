"""The session path (name ``session``): score sessions first, then the turns inside the best.

A question is usually about one or a few conversations. The turns the vector and
keyword paths found for this recall vote for their sessions (reciprocal rank, so a
session with several strong matches leads); the path then ranks *every* active memory
of the best sessions by cosine similarity to the query. A turn the global searches
ranked too low, but said in the session the evidence points at, comes up this way.

It reuses the candidates of the paths that ran before it (``RecallQuery.earlier``),
so it must run after them; without them, or without a query embedding, it returns
``[]``. Memories without a session id take no part. Add ``"session"`` to
``RecallConfig.paths`` to use it (off by default; measured in docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.base import RecordStore

__all__ = ["SessionPath", "session_scores"]

_MAX_SESSION_MEMORIES = 500


def session_scores(
    ranked: Sequence[Sequence[Candidate]], session_of: dict[int, str], *, rrf_k: int = 10
) -> dict[str, float]:
    """Each session's vote: the sum over lists of ``1 / (rrf_k + rank)`` of its memories.

    Args:
        ranked: Candidate lists, best first (one per path).
        session_of: Session id by row id (memories without one are left out).
        rrf_k: The reciprocal-rank constant.
    """
    scores: dict[str, float] = {}
    for candidates in ranked:
        for rank, candidate in enumerate(candidates, 1):
            session = session_of.get(candidate.rowid)
            if session is not None:
                scores[session] = scores.get(session, 0.0) + 1.0 / (rrf_k + rank)
    return scores


class SessionPath:
    """The memories of the sessions the other paths' matches point at, most similar first.

    Args:
        store: The record store (sessions, stored vectors).
        embedder: The embedder whose stored vectors are compared (by its name).
        sessions: How many of the best sessions are searched.
        sources: The paths whose candidates vote for sessions.
        rrf_k: The reciprocal-rank constant of the vote.
    """

    name = "session"

    def __init__(
        self,
        store: RecordStore,
        embedder: Embedder,
        *,
        sessions: int = 3,
        sources: Sequence[str] = ("keyword", "vector"),
        rrf_k: int = 10,
    ) -> None:
        if sessions < 1:
            raise ValueError("sessions must be at least 1")
        self._store = store
        self._embedder = embedder
        self.sessions = sessions
        self.sources = tuple(sources)
        self.rrf_k = rrf_k

    def best_sessions(self, query: RecallQuery) -> list[str]:
        """The session ids with the strongest vote, best first (ties: the earlier-voted first)."""
        ranked = [query.earlier[name] for name in self.sources if query.earlier.get(name)]
        rowids = list(dict.fromkeys(c.rowid for candidates in ranked for c in candidates))
        if not rowids:
            return []
        records = self._store.get_by_rowids(query.user_id, rowids)
        session_of = {
            rowid: record.session_id
            for rowid, record in records.items()
            if record.session_id is not None and record.is_active
        }
        scores = session_scores(ranked, session_of, rrf_k=self.rrf_k)
        return sorted(scores, key=lambda s: -scores[s])[: self.sessions]

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Memories of the best sessions by cosine to the query, best first."""
        if query.embedding is None:
            return []
        members = [
            record
            for session in self.best_sessions(query)
            for record in self._store.find(query.user_id, session_id=session, limit=_MAX_SESSION_MEMORIES)
        ]
        if not members:
            return []
        ids = [r.id for r in members]
        vectors = self._store.vectors_of(query.user_id, self._embedder.name, ids)
        rowids = self._store.rowids(query.user_id, ids)
        allowed = query.allowed
        scored = [
            (rowids[rid], float(np.dot(vectors[rid], query.embedding)))
            for rid in ids
            if rid in vectors and rid in rowids and (allowed is None or rowids[rid] in allowed)
        ]
        scored.sort(key=lambda pair: (-pair[1], -pair[0]))
        return [Candidate(rowid, score) for rowid, score in scored[: query.limit]]
