"""Public names of the graph stores, config selection and errors (no server, no sockets)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest

import dreammem.stores
from dreammem import ConfigError, DreamMemConfig, DreamMemory, ValidationError
from dreammem.config import Neo4jGraphConfig
from dreammem.embed import HashingEmbedder
from dreammem.stores import EmbeddedGraphStore, Neo4jGraphStore
from dreammem.stores.base import GraphItem, GraphStats
from dreammem.stores.traversal import entity_weight, is_hub


def test_stores_all_is_pinned() -> None:
    assert dreammem.stores.__all__ == [
        "EmbeddedGraphStore",
        "FaissVectorIndex",
        "GraphStore",
        "Neo4jGraphStore",
        "SQLiteRecordStore",
        "VectorIndex",
    ]
    assert "transactional" in EmbeddedGraphStore.capabilities
    assert "transactional" not in Neo4jGraphStore.capabilities


def test_importing_dreammem_does_not_import_the_neo4j_driver() -> None:
    code = "import sys, dreammem, dreammem.stores; assert 'neo4j' not in sys.modules, 'eager import'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_config_selects_neo4j_without_connecting() -> None:
    config = DreamMemConfig(
        graph=Neo4jGraphConfig(uri="bolt://127.0.0.1:1", user="neo4j", password="pw", database="mem")
    )
    with DreamMemory(None, config=config, embedder=HashingEmbedder()) as memory:
        assert isinstance(memory.graph, Neo4jGraphStore)
        assert memory.graph.database == "mem" and "pipeline" not in vars(memory)


def test_bad_neo4j_uri_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Neo4jGraphStore("ftp://not-bolt")


def test_hops_must_be_one_or_two(memory: DreamMemory) -> None:
    assert memory.graph is not None
    with pytest.raises(ValidationError):
        memory.graph.neighbors("u1", ["x"], hops=3)


def test_weights_and_hubs() -> None:
    assert entity_weight(1, 1000) == 1.0
    assert entity_weight(1000, 1000) < 0.11
    assert entity_weight(10, 1000) > entity_weight(100, 1000)
    assert not is_hub(50, 100) and is_hub(51, 100) and is_hub(200, 1000) and not is_hub(100, 1000)


def test_graph_item_time_key_is_utc_and_sortable() -> None:
    plus2 = timezone(timedelta(hours=2))
    early = GraphItem("a", (), event_time=datetime(2024, 1, 1, 12, 0, tzinfo=plus2))
    late = GraphItem("b", (), event_time=datetime(2024, 1, 1, 11, 0, tzinfo=UTC))
    assert early.time_key < late.time_key
    assert GraphItem("c", ()).time_key == ""
    assert GraphStats().empty and not GraphStats(memories=1).empty
