"""The second vector path: nearest neighbours by the opt-in second embedding model.

The store keeps the second model's index (:class:`~dreammem.engine.second.SecondVectors`,
``EmbeddingConfig.second_model``); the pipeline's query embedding belongs to the first
model, so the index embeds the query itself.
"""

from __future__ import annotations

from typing import Protocol

from dreammem.recall.base import Candidate, RecallQuery

__all__ = ["SecondIndex", "SecondVectorPath"]


class SecondIndex(Protocol):
    """What the path needs of the second index."""

    def search(
        self, user_id: str, text: str, limit: int, allowed: frozenset[int] | None = None
    ) -> list[tuple[int, float]]:
        """The user's nearest memories as ``(rowid, cosine)``, among ``allowed`` when given."""


class SecondVectorPath:
    """Cosine similarity between the query and each memory by the second model."""

    name = "second_vector"

    def __init__(self, index: SecondIndex) -> None:
        self._index = index

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The user's nearest memories (among ``query.allowed`` when a filter narrowed them)."""
        found = self._index.search(query.user_id, query.text, query.limit, query.allowed)
        return [Candidate(rowid, score) for rowid, score in found]
