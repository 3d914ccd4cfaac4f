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

from dreammem.stores.capabilities import GraphCapability
from dreammem.stores.neo4j import Neo4jGraphStore
from dreammem.stores.neo4j_client import Neo4jClient

__all__ = ["SharedNeo4jGraphStore"]

_CLEAR = (
    "MATCH (u:DreamMemUser {user_id: $user_id}) DELETE u",
    "MATCH (n:DreamMemMemory {user_id: $user_id}) DETACH DELETE n",
    "MATCH (n:DreamMemEntity {user_id: $user_id}) DETACH DELETE n",
)


class SharedNeo4jGraphStore(Neo4jGraphStore):
    """A Neo4j graph store on the record store's connection (see the module docstring).

    Its writes join the transaction the connection has open in this thread (the
    unit's), or run in one of their own outside a unit. Closing it leaves the
    connection to the record store.

    Args:
        client: The record store's connection (its server, database, timeouts and transactions).
    """

    capabilities = frozenset(
        {GraphCapability.RELATIONS, GraphCapability.SHARED, GraphCapability.TRANSACTIONAL}
    )

    def __init__(self, client: Neo4jClient) -> None:
        self._attach(client, owned=False)

    def clear(self, user_id: str | None = None) -> None:
        """Remove one user's graph (inside the unit's transaction when one is open)."""
        if user_id is None or self._client.current() is None:
            super().clear(user_id)
            return
        for statement in _CLEAR:
            self._client.run("clear", statement, user_id=user_id)
