"""Equal scores rank by insertion order on a real Neo4j server (both ways of using it)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores import Neo4jGraphStore
from tests.neo4j_server import Neo4jServer
from tests.unit.test_tie_order import check_ties, fill

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


def _fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def test_ties_rank_alike_whatever_the_ids_on_the_neo4j_backend(
    neo4j_server: Neo4jServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = _fresh("rising"), _fresh("falling")

    def open_store() -> DreamMemory:
        return DreamMemory(neo4j_server.uri, embedder=HashingEmbedder())

    rising = fill(open_store, users[0], monkeypatch, rising=True)
    falling = fill(open_store, users[1], monkeypatch, rising=False)
    try:
        check_ties((rising, users[0]), (falling, users[1]))
    finally:
        rising.close()
        falling.close()


def test_ties_rank_alike_whatever_the_ids_on_a_neo4j_graph_beside_sqlite(
    neo4j_server: Neo4jServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = _fresh("u")
    graphs = [Neo4jGraphStore(neo4j_server.uri) for _ in range(2)]
    stores = [
        fill(
            lambda n=n: DreamMemory(tmp_path / f"s{n}", embedder=HashingEmbedder(), graph=graphs[n]),
            user if n == 0 else f"{user}-b",
            monkeypatch,
            rising=n == 0,
        )
        for n in range(2)
    ]
    try:
        assert all(s.graph is g for s, g in zip(stores, graphs, strict=True))
        check_ties((stores[0], user), (stores[1], f"{user}-b"))
    finally:
        graphs[0].clear(user)
        graphs[1].clear(f"{user}-b")
        for memory in stores:
            memory.close()
