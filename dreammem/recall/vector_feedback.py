"""The vector feedback path (name ``vector_feedback``): the query embedding moved toward its best matches.

Dense pseudo-relevance feedback (Rocchio): the vector path's top memories for this
recall are taken as relevant, and the query embedding plus ``weight`` times their mean
embedding (normalised again) is searched once more. A memory close to the answers'
neighbourhood rather than to the question's wording can rank.

It reuses the vector path's candidates of this recall (``RecallQuery.earlier``) and the
stored embeddings, so it must run after the vector path; without them it returns
``[]``. Add ``"vector_feedback"`` to ``RecallConfig.paths`` to use it (off by default;
measured in docs/BENCHMARKS.md).
"""

from __future__ import annotations

import numpy as np

from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.vector import nearest
from dreammem.stores.base import RecordStore, VectorIndex

__all__ = ["VectorFeedbackPath"]


class VectorFeedbackPath:
    """Nearest neighbours of the query embedding moved toward the vector path's best matches.

    Args:
        store: The record store (its stored embeddings).
        index: The vector index.
        embedder: The store's embedder (its name keys the stored embeddings).
        docs: How many of the vector path's best candidates are read.
        weight: How far the query moves toward their mean (Rocchio's beta; the query weighs 1).
    """

    name = "vector_feedback"

    def __init__(
        self,
        store: RecordStore,
        index: VectorIndex,
        embedder: Embedder,
        *,
        docs: int = 3,
        weight: float = 0.5,
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self.docs = docs
        self.weight = weight

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The user's nearest memories to the moved query (``[]`` without vector candidates)."""
        top = list(query.earlier.get("vector", ()))[: self.docs]
        if not top:
            return []
        records = self._store.get_by_rowids(query.user_id, [c.rowid for c in top])
        stored = self._store.vectors_of(query.user_id, self._embedder.name, [r.id for r in records.values()])
        if not stored:
            return []
        vector = query.embedding if query.embedding is not None else self._embedder.embed_query(query.text)
        moved = np.asarray(vector, dtype=np.float32) + self.weight * np.mean(list(stored.values()), axis=0)
        moved = (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(np.float32)
        return nearest(self._index, query, moved)
