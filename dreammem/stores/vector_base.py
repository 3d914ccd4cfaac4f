"""The vector-index contract: nearest-neighbour search over record embeddings, scoped by user."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dreammem.stores.capabilities import VectorCapability

__all__ = ["VectorIndex"]


class VectorIndex(ABC):
    """Nearest-neighbour search over record embeddings, always inside one user's scope.

    Ids are the integer row ids of the records in the record store; payloads never
    live in the index.
    """

    capabilities: frozenset[VectorCapability] = frozenset()

    @property
    @abstractmethod
    def dim(self) -> int:
        """The embedding dimension."""

    @abstractmethod
    def add(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Add (or replace) the vectors of these row ids for this user."""

    @abstractmethod
    def remove(self, ids: Sequence[int]) -> None:
        """Remove the vectors of these row ids (unknown ids are ignored)."""

    @abstractmethod
    def search(self, user_id: str, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest row ids of this user's vectors, best first, with cosine scores.

        Equal scores go lower row id first, also where the ``k``-th place is tied
        (:mod:`dreammem.stores.ties`).
        """

    def search_many(
        self, user_id: str, queries: npt.NDArray[np.float32], k: int
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries`` (all of one user), in order.

        The default searches row by row; backends that search a batch in one call override it.
        """
        return [self.search(user_id, query, k) for query in queries]

    def search_stored(
        self, user_id: str, queries: npt.NDArray[np.float32], k: int, *, written: range
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search_many` among the vectors stored before a write in progress.

        ``written`` holds the row ids that write added. An index that learns a write's rows
        only after its commit (FAISS) holds none of them while it runs: the default is
        :meth:`search_many`. An index over the records' own nodes, searched inside the
        write's transaction, may see them and leaves them out.
        """
        return self.search_many(user_id, queries, k)

    def search_subset(
        self, user_id: str, query: npt.NDArray[np.float32], ids: Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest of the given row ids (inside this user's scope), best first.

        The default ranks every vector of the user and keeps the given ids; backends
        that can filter inside the search override it.
        """
        wanted = set(ids)
        ranked = self.search(user_id, query, self.count(user_id))
        return [(i, s) for i, s in ranked if i in wanted][:k]

    @abstractmethod
    def count(self, user_id: str | None = None) -> int:
        """How many vectors the index holds (for one user, or in all)."""

    @abstractmethod
    def reset(self) -> None:
        """Drop every vector."""

    def flush(self) -> None:  # noqa: B027 - optional hook
        """Persist pending changes (no-op for indexes that need none)."""

    def close(self) -> None:
        """Flush and release resources."""
        self.flush()

    async def asearch(self, user_id: str, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """Async twin of :meth:`search`."""
        return await asyncio.to_thread(self.search, user_id, query, k)
