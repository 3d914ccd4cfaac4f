"""Store contracts: small ABCs that every backend implements.

* :class:`RecordStore` holds the records (the source of truth), their full-text index
  and the dream queue.
* :class:`VectorIndex` holds one embedding per active record, scoped by user.
* :class:`GraphStore` holds entity and memory nodes and the edges between them.

Methods are sync and batch-first; each has an ``a``-prefixed async twin that runs it
in a worker thread unless a backend overrides it. Capabilities are declared in
``capabilities``, never probed.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from dreammem.types import MemoryRecord

__all__ = [
    "GraphEntity",
    "GraphItem",
    "GraphNeighbor",
    "GraphRelation",
    "GraphStore",
    "VectorIndex",
]


class VectorIndex(ABC):
    """Nearest-neighbour search over record embeddings, always inside one user's scope.

    Ids are the integer row ids of the records in the record store; payloads never
    live in the index.
    """

    capabilities: frozenset[str] = frozenset()

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
        """The ``k`` nearest row ids of this user's vectors, best first, with cosine scores."""

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


@dataclass(frozen=True, slots=True)
class GraphEntity:
    """An entity node: ``key`` is the normalised identity, ``name`` the display form."""

    key: str
    name: str
    kind: str = "name"


@dataclass(frozen=True, slots=True)
class GraphRelation:
    """A typed edge between two entities, extracted from a memory."""

    source: str
    relation: str
    target: str


@dataclass(frozen=True, slots=True)
class GraphItem:
    """What the graph learns from one memory: the entities it mentions and relations."""

    memory_id: str
    entities: tuple[GraphEntity, ...]
    relations: tuple[GraphRelation, ...] = ()
    event_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class GraphNeighbor:
    """A memory reached from query entities: how many hops away and through what."""

    memory_id: str
    hops: int
    score: float
    via: tuple[str, ...] = field(default=())


class GraphStore(ABC):
    """Entity/memory graph, scoped by user.

    Memory nodes are linked to the entity nodes they mention (co-mention edges), and
    entities to each other by extracted relations. Traversal starts at query entities
    and walks 1-2 hops to memory nodes. Everything is scoped: a user's traversal never
    reaches another user's nodes, even for an entity of the same name.
    """

    capabilities: frozenset[str] = frozenset()

    @abstractmethod
    def upsert(self, user_id: str, items: Sequence[GraphItem]) -> None:
        """Add or replace the nodes and edges of these memories (idempotent)."""

    @abstractmethod
    def remove(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """Remove these memory nodes and their edges (entities left orphaned go too)."""

    @abstractmethod
    def neighbors(
        self, user_id: str, entity_keys: Sequence[str], *, hops: int = 2, limit: int = 30
    ) -> list[GraphNeighbor]:
        """Memories within ``hops`` of the given entities, best first."""

    @abstractmethod
    def entity_keys(self, user_id: str) -> set[str]:
        """The normalised keys of every entity this user's graph knows."""

    @abstractmethod
    def clear(self, user_id: str | None = None) -> None:
        """Remove one user's graph, or everything."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""

    async def aneighbors(
        self, user_id: str, entity_keys: Sequence[str], *, hops: int = 2, limit: int = 30
    ) -> list[GraphNeighbor]:
        """Async twin of :meth:`neighbors`."""
        return await asyncio.to_thread(self.neighbors, user_id, entity_keys, hops=hops, limit=limit)

    async def aupsert(self, user_id: str, items: Sequence[GraphItem]) -> None:
        """Async twin of :meth:`upsert`."""
        await asyncio.to_thread(self.upsert, user_id, items)


def records_to_graph_items(records: Sequence[MemoryRecord]) -> list[GraphItem]:
    """Graph items for records, from the entities stored on each record."""
    from dreammem.text.entities import extract_entities

    items: list[GraphItem] = []
    for record in records:
        entities = tuple(
            GraphEntity(key=e.key, name=e.text, kind=e.kind) for e in extract_entities(record.content)
        )
        items.append(GraphItem(record.id, entities, event_time=record.event_time))
    return items
