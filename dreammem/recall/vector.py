"""The vector path: nearest neighbours of the query embedding in FAISS."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.base import VectorIndex

__all__ = ["VectorPath", "nearest", "nearest_to_text"]


def nearest(index: VectorIndex, query: RecallQuery, vector: npt.NDArray[np.float32]) -> list[Candidate]:
    """The user's nearest memories to ``vector`` (among ``query.allowed`` when a filter narrowed them)."""
    if query.allowed is not None:
        found = index.search_subset(query.user_id, vector, sorted(query.allowed), query.limit)
    else:
        found = index.search(query.user_id, vector, query.limit)
    return [Candidate(rowid, score) for rowid, score in found]


def nearest_to_text(
    index: VectorIndex, embedder: Embedder, query: RecallQuery, text: str, depth: int
) -> list[Candidate]:
    """The ``depth`` nearest memories to ``text``, embedded and searched once per recall.

    Paths asking for the same text of the same recall share one embedding and one index
    search (``query.searches``); ask as deep as the deepest of them, so one search serves all.
    """

    def search(limit: int) -> list[Candidate]:
        return nearest(index, dataclasses.replace(query, limit=limit), embedder.embed_query(text))

    return query.searches.nearest((id(index), embedder.name, text), depth, search)


class VectorPath:
    """Cosine similarity between the query and each memory's embedding."""

    name = "vector"

    def __init__(self, index: VectorIndex, embedder: Embedder) -> None:
        self._index = index
        self._embedder = embedder

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The user's nearest memories (among ``query.allowed`` when a filter narrowed them)."""
        vector = query.embedding if query.embedding is not None else self._embedder.embed_query(query.text)
        return [dataclasses.replace(c, similarity=c.score) for c in nearest(self._index, query, vector)]
