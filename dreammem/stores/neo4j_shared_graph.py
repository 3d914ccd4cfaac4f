"""The graph of the Neo4j backend: the graph store's nodes, written in the records' transaction.

When the records live in the same Neo4j database (:class:`~dreammem.stores.neo4j_store.Neo4jRecordStore`),
the graph needs no outbox: :class:`SharedNeo4jGraphStore` declares itself
``"transactional"``, so the engine writes it inside the records' unit of work, and
its writes run on that unit's open transaction (the record store's client keeps one
per thread). A record, its embedding, its keyword terms and its graph nodes commit
together or not at all; a dream is one transaction. Reads and writes outside a unit
work as in :class:`~dreammem.stores.neo4j.Neo4jGraphStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import neo4j

from dreammem.stores.neo4j import Neo4jGraphStore
from dreammem.stores.neo4j_client import Neo4jClient

__all__ = ["SharedNeo4jGraphStore"]

T = TypeVar("T")

_CLEAR = (
    "MATCH (u:DreamMemUser {user_id: $user_id}) DELETE u",
    "MATCH (n:DreamMemMemory {user_id: $user_id}) DETACH DELETE n",
    "MATCH (n:DreamMemEntity {user_id: $user_id}) DETACH DELETE n",
)


class SharedNeo4jGraphStore(Neo4jGraphStore):
    """A Neo4j graph store that joins the record store's transaction (see the module docstring).

    Args:
        client: The record store's connection (its server, database, timeouts and transactions).
    """

    capabilities = frozenset({"relations", "shared", "transactional"})

    def __init__(
        self, client: Neo4jClient, *, auth: tuple[str, str] | None = None, timeout: float = 5.0
    ) -> None:
        super().__init__(
            client.uri,
            auth=auth,
            database=client.database,
            timeout=timeout,
            query_timeout=client.query_timeout,
        )
        self._client = client

    def _write(self, action: str, work: Callable[[neo4j.Transaction], T]) -> T:
        """Run ``work`` on the unit's open transaction, or in one of its own outside a unit."""
        tx = self._client.current()
        if tx is None:
            return super()._write(action, work)
        with self._client.guarded(action):
            return work(tx)

    def clear(self, user_id: str | None = None) -> None:
        """Remove one user's graph (inside the unit's transaction when one is open)."""
        if user_id is None or self._client.current() is None:
            super().clear(user_id)
            return
        for statement in _CLEAR:
            self._client.run("clear", statement, user_id=user_id)
