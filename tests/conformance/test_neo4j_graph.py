"""Both Neo4j graph stores (graph-only mode, whole-store backend) pass the graph suite on a real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dreammem.stores import Neo4jGraphStore
from dreammem.stores.base import GraphStore
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_shared_graph import SharedNeo4jGraphStore
from tests.conformance.graph_suite import GraphStoreSuite
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


class TestNeo4jGraphStore(GraphStoreSuite):
    @pytest.fixture
    def graph_store(self, neo4j_server: Neo4jServer) -> Iterator[GraphStore]:
        store = Neo4jGraphStore(neo4j_server.uri)
        yield store
        store.close()


class TestSharedNeo4jGraphStore(GraphStoreSuite):
    """The Neo4j backend's graph (it joins the record store's transaction when one is open)."""

    @pytest.fixture
    def graph_store(self, neo4j_server: Neo4jServer) -> Iterator[GraphStore]:
        client = Neo4jClient(neo4j_server.uri)
        store = SharedNeo4jGraphStore(client)
        yield store
        store.close()
        client.close()
