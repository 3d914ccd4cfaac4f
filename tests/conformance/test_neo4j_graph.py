"""The Neo4j graph store passes the graph conformance suite on a real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dreammem.stores import Neo4jGraphStore
from dreammem.stores.base import GraphStore
from tests.conformance.graph_suite import GraphStoreSuite
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


class TestNeo4jGraphStore(GraphStoreSuite):
    @pytest.fixture
    def graph_store(self, neo4j_server: Neo4jServer) -> Iterator[GraphStore]:
        store = Neo4jGraphStore(neo4j_server.uri)
        yield store
        store.close()
