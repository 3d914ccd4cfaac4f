"""The side-by-side backends bench on a real Neo4j: both stores get the same records, measured alike."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem_bench.backends import EMBEDDED, NEO4J, Side, check_targets, run_sizes
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


def test_embedded_beside_neo4j_small(neo4j_server: Neo4jServer, tmp_path: Path) -> None:
    # The model every test on the shared server writes with: a whole-store Neo4j database holds one model.
    embedder = HashingEmbedder()
    prefix = f"bb{uuid.uuid4().hex[:8]}-"  # the test server is shared: this run's users only
    with (
        DreamMemory(tmp_path / "store", embedder=embedder) as embedded,
        DreamMemory(neo4j_server.uri, embedder=embedder) as server,
    ):
        sides = [Side(EMBEDDED, embedded), Side(NEO4J, server)]
        results = run_sizes(sides, [15, 40], users=2, queries=6, k=5, batch=25, prefix=prefix)
        users = [f"{prefix}user-{n:03d}" for n in range(2)]
        assert [embedded.store.count(u) for u in users] == [server.store.count(u) for u in users] == [40, 40]
    last = results[-1]
    assert last.active[EMBEDDED] == last.active[NEO4J] > 0  # the same supersessions on both
    assert set(last.ratio()) == {"p50", "p95", "ingest"}
    assert all(0 < last.recall_ms[side]["p50"] <= last.recall_ms[side]["p95"] for side in (EMBEDDED, NEO4J))
    assert set(check_targets(results)) == {"ingest"}  # 2 users x 40: no recall target reached
