"""The engine's Neo4j backend: the whole store in one Neo4j database, opened from a URI.

:func:`open_server` builds what :class:`~dreammem.engine.Engine` owns when its path
is a ``bolt://`` or ``neo4j://`` URI: the record store
(:class:`~dreammem.stores.neo4j_store.Neo4jRecordStore`), the graph in the same
database, written in the records' transaction
(:class:`~dreammem.stores.neo4j_shared_graph.SharedNeo4jGraphStore`), the vector
index on the record nodes (:class:`ServerVectors`) and the per-user dream locks as
lease nodes (:class:`~dreammem.engine.leases.LeaseLocks`). Nothing is written to a
local file; every process on every host that opens the URI sees every commit at
its next call, vectors included, with nothing to refresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.engine.leases import LeaseLocks
from dreammem.engine.vectors import claim_model
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_shared_graph import SharedNeo4jGraphStore
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.stores.neo4j_vectors import RECORD_FILTERS, RECORD_INDEX, RecordVectorIndex, ensure_vector_index
from dreammem.types import MemoryRecord

__all__ = ["ServerBackend", "ServerVectors", "open_server"]


class ServerVectors:
    """The vector lifecycle of the Neo4j backend: bind the embedder, nothing to keep in step.

    Embeddings are written with their records, in the records' transaction, and the
    vector index is the server's own index on the record nodes, so adding, dropping,
    refreshing, rebuilding and flushing have nothing to do.
    """

    def __init__(self, store: Neo4jRecordStore) -> None:
        self._store = store
        self.embedder: Embedder | None = None
        self.index: RecordVectorIndex | None = None

    def bind(self, embedder: Embedder) -> None:
        """Check the embedder against the store and open (create) the vector index.

        Raises:
            ConfigError: the store was built with another model or dimension.
        """
        claim_model(self._store, embedder)
        ensure_vector_index(
            self._store.client, RECORD_INDEX, "DMRecord", "embedding", embedder.dim, RECORD_FILTERS
        )
        self.embedder = embedder
        self.index = RecordVectorIndex(self._store.client, embedder.dim)

    def unbind(self) -> None:
        """Forget the embedder and its index (before switching models)."""
        self.embedder = None
        self.index = None

    def rebuild(self) -> None:
        """Nothing to rebuild: the server's index follows the records."""

    def refresh(self) -> str | None:
        """Always current: other processes' commits are in the server's index already."""
        return None

    def bump_generation(self) -> None:
        """Nothing to count: no process holds a copy of the vectors."""

    def add(self, user_id: str, rowids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Nothing to add: the embeddings were written with their records."""

    def drop_inactive(self, records: Sequence[MemoryRecord]) -> None:
        """Nothing to drop: searches see active records only."""

    def flush(self) -> None:
        """Nothing to write out."""


@dataclass(frozen=True)
class ServerBackend:
    """What the engine owns on the Neo4j backend."""

    store: Neo4jRecordStore
    graph: SharedNeo4jGraphStore
    vectors: ServerVectors
    locks: LeaseLocks


def open_server(uri: str, config: DreamMemConfig, auth: tuple[str, str] | None = None) -> ServerBackend:
    """Open the store at a Neo4j URI (auth by argument, else from ``config.store``).

    Raises:
        ConfigError: the URI is invalid, or the server rejects the credentials.
        GraphUnavailableError: the server cannot be reached within ``config.store.timeout``.
    """
    settings = config.store
    if auth is None and settings.user is not None:
        auth = (settings.user, settings.password or "")
    client = Neo4jClient(
        uri,
        auth=auth,
        database=settings.database,
        timeout=settings.timeout,
        query_timeout=settings.query_timeout,
    )
    try:
        store = Neo4jRecordStore(client, context_weight=config.recall.context_weight)
        graph = SharedNeo4jGraphStore(client)
        graph.verify()
    except BaseException:
        client.close()
        raise
    return ServerBackend(
        store, graph, ServerVectors(store), LeaseLocks(client, lease_seconds=settings.lease_seconds)
    )
