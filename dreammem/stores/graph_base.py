"""Graph store contract: entity and memory nodes and the edges between them.

Re-exported by :mod:`dreammem.stores.base` beside the other store contracts.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from dreammem.stores.capabilities import GraphCapability
from dreammem.stores.traversal import GraphNeighbor, traverse
from dreammem.text.entities import extract_entities
from dreammem.types import MemoryRecord

__all__ = [
    "GraphEntity",
    "GraphItem",
    "GraphNeighbor",
    "GraphRelation",
    "GraphStats",
    "GraphStore",
    "records_to_graph_items",
]


@dataclass(frozen=True, slots=True)
class GraphEntity:
    """An entity node: ``key`` is the normalised identity, ``name`` the display form."""

    key: str
    name: str
    kind: str = "name"


@dataclass(frozen=True, slots=True)
class GraphRelation:
    """A typed edge between two entities (by key), extracted from a memory."""

    source: str
    relation: str
    target: str


@dataclass(frozen=True, slots=True)
class GraphItem:
    """What the graph learns from one memory: the entities it mentions and relations.

    The endpoints of every relation count as mentioned by the memory too. ``rowid`` is
    the record's row id in its store (its insertion order): it breaks ties of equal
    event time (the embedded graph reads it from the records' table it shares).
    """

    memory_id: str
    entities: tuple[GraphEntity, ...]
    relations: tuple[GraphRelation, ...] = ()
    event_time: datetime | None = None
    rowid: int | None = None

    @property
    def time_key(self) -> str:
        """The event time as a sortable UTC ISO string ('' when unknown); orders recency."""
        if self.event_time is None:
            return ""
        when = self.event_time
        return (when if when.tzinfo is None else when.astimezone(UTC)).isoformat()

    def mentions(self) -> dict[str, GraphEntity]:
        """The entities this memory mentions, by key (relation endpoints included)."""
        mentioned = {e.key: e for e in self.entities if e.key}
        for relation in self.relations:
            for key in (relation.source, relation.target):
                mentioned.setdefault(key, GraphEntity(key=key, name=key))
        return mentioned


@dataclass(frozen=True, slots=True)
class GraphStats:
    """Sizes of a graph (of one user, or of all): nodes and edges by type."""

    memories: int = 0
    entities: int = 0
    mentions: int = 0
    relations: int = 0

    @property
    def empty(self) -> bool:
        """True when the graph holds nothing at all."""
        return not (self.memories or self.entities or self.mentions or self.relations)


class GraphStore(ABC):
    """Entity/memory graph, scoped by user.

    Memory nodes are linked to the entity nodes they mention (co-mention edges), and
    entities to each other by extracted relations. Traversal starts at query entities
    and walks 1-2 hops to memory nodes. Everything is scoped: a user's traversal never
    reaches another user's nodes, even for an entity of the same name.

    A backend implements the writes and four read primitives; :meth:`neighbors` is
    built on them (:func:`dreammem.stores.traversal.traverse`), so every backend ranks
    alike. Declared capabilities (:class:`~dreammem.stores.capabilities.GraphCapability`):

    * ``TRANSACTIONAL``: writes join the record store's open transaction (the
      embedded graph), so the facade writes the graph inside it; otherwise writes go
      through an outbox and are replayed after the records commit.
    * ``RELATIONS``: entity-entity relation edges are stored and traversed.
    * ``SHARED``: one graph for processes on many hosts.
    """

    capabilities: frozenset[GraphCapability] = frozenset()

    # -- writes ------------------------------------------------------------------

    @abstractmethod
    def upsert(self, user_id: str, items: Sequence[GraphItem]) -> None:
        """Add or replace the nodes and edges of these memories (idempotent)."""

    @abstractmethod
    def remove(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """Remove these memory nodes and their edges (entities left orphaned go too)."""

    @abstractmethod
    def clear(self, user_id: str | None = None) -> None:
        """Remove one user's graph, or everything this store wrote."""

    # -- read primitives -----------------------------------------------------------

    @abstractmethod
    def entity_stats(self, user_id: str, keys: Sequence[str]) -> tuple[int, dict[str, int]]:
        """The user's memory count and, for each known key, how many memories mention it."""

    @abstractmethod
    def memories_of(self, user_id: str, keys: Sequence[str], *, per_entity: int) -> list[tuple[str, str]]:
        """``(entity_key, memory_id)`` pairs: at most ``per_entity`` memories per key.

        Newest ``event_time`` first within a key; ties by the record's row id, newest
        first (:attr:`GraphItem.rowid`), then by memory id, descending, so stores holding
        the same memories under other random ids list (and cut) them alike.
        """

    @abstractmethod
    def entities_of(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, tuple[GraphEntity, ...]]:
        """The entities each memory mentions (memories unknown to the graph are left out)."""

    @abstractmethod
    def related(self, user_id: str, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(key, relation, other_key)`` for relation edges touching these keys (either way)."""

    @abstractmethod
    def stats(self, user_id: str | None = None) -> GraphStats:
        """Node and edge counts of one user's graph, or of everything."""

    # -- derived ------------------------------------------------------------------------

    def neighbors(
        self, user_id: str, entity_keys: Sequence[str], *, hops: int = 2, limit: int = 30
    ) -> list[GraphNeighbor]:
        """Memories within ``hops`` (1 or 2) of the given entities, best first.

        Unknown keys are ignored; hub entities (mentioned by a large share of the
        user's memories) neither seed nor bridge the walk. See
        :func:`dreammem.stores.traversal.traverse` for the scoring.
        """
        return traverse(self, user_id, entity_keys, hops=hops, limit=limit)

    def entity_keys(self, user_id: str, candidates: Sequence[str]) -> set[str]:
        """Which of these candidate keys name an entity of this user."""
        return set(self.entity_stats(user_id, candidates)[1])

    def retry_now(self) -> None:  # noqa: B027 - optional hook
        """Try the server on the next call even if it failed recently.

        Stores that fail fast after an outage (a circuit breaker) reset it here; an
        explicit replay (``replay_graph``, ``reindex_graph``) calls it first.
        """

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

    async def aremove(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """Async twin of :meth:`remove`."""
        await asyncio.to_thread(self.remove, user_id, memory_ids)


def records_to_graph_items(
    records: Sequence[MemoryRecord], rowids: Mapping[str, int] | None = None
) -> list[GraphItem]:
    """Graph items for records, from the entities stored on each record.

    ``rowids``: the records' row ids by id (their insertion order; ties are broken by it).
    """
    rowids = rowids or {}
    items: list[GraphItem] = []
    for record in records:
        entities = tuple(
            GraphEntity(key=e.key, name=e.text, kind=e.kind) for e in extract_entities(record.content)
        )
        items.append(
            GraphItem(record.id, entities, event_time=record.event_time, rowid=rowids.get(record.id))
        )
    return items
