"""The embeddings role: one stored embedding per record and model (vector indexes are built from it)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["StoredEmbeddings"]


class StoredEmbeddings(ABC):
    """Embeddings stored with the records, under their row ids."""

    @abstractmethod
    def put_vectors(self, rowids: Sequence[int], model: str, vectors: npt.NDArray[np.float32]) -> None:
        """Store embeddings of these rows for this model (replacing older ones)."""

    @abstractmethod
    def clear_vectors(self) -> None:
        """Drop every embedding and the model name and dimension they were made with."""

    @abstractmethod
    def iter_active_vectors(
        self, model: str, dim: int, batch: int = 10_000
    ) -> Iterator[tuple[str, list[int], npt.NDArray[np.float32]]]:
        """Embeddings of active records as ``(user_id, rowids, matrix)`` batches."""

    @abstractmethod
    def vectors_of(self, user_id: str, model: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of these records of this user, by record id."""

    @abstractmethod
    def recent_vectors(self, user_id: str, model: str, limit: int) -> npt.NDArray[np.float32]:
        """Embeddings of this user's ``limit`` most recent records (by event time, any status), one per row.

        :class:`~dreammem.stores.base.RecordStore` has a default that reads the records,
        then their vectors; a backend may do it in one query.
        """

    @abstractmethod
    def rows_missing_vectors(self, model: str) -> list[tuple[int, str, str]]:
        """Active records with no embedding from this model: ``(rowid, user_id, id)``."""

    @abstractmethod
    def count_vectors(self, model: str, user_id: str | None = None) -> int:
        """How many active records (of one user) have an embedding from this model."""
