"""The bridge path on Neo4j: the same rules as on the embedded graph (tests/unit/test_bridge_path.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from tests.neo4j_server import Neo4jServer
from tests.unit.test_bridge_path import bridge_scenario

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


@pytest.fixture
def memory(neo4j_server: Neo4jServer) -> Iterator[DreamMemory]:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as opened:
        yield opened


def test_the_bridge_follows_rare_entities_only_on_neo4j(memory: DreamMemory) -> None:
    bridge_scenario(memory, user=f"bridge-{uuid.uuid4().hex[:8]}")
