"""Storage backends and their contracts.

``Neo4jGraphStore`` is imported on first use, so the ``neo4j`` driver stays an
optional dependency (``pip install 'dreammem[neo4j]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dreammem.stores.base import GraphStore, VectorIndex
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore

if TYPE_CHECKING:
    from dreammem.stores.neo4j import Neo4jGraphStore

__all__ = [
    "EmbeddedGraphStore",
    "FaissVectorIndex",
    "GraphStore",
    "Neo4jGraphStore",
    "SQLiteRecordStore",
    "VectorIndex",
]


def __getattr__(name: str) -> Any:
    if name == "Neo4jGraphStore":
        from dreammem.stores.neo4j import Neo4jGraphStore  # noqa: PLC0415 - the neo4j extra is optional

        return Neo4jGraphStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
