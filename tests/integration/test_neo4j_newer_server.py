"""The newest Neo4j Community server (``NEWER_VERSION``) filters a vector search by user inside the index.

The server is built from Maven Central and started by ``scripts/neo4j.sh``
(``NEO4J_VERSION``), beside the session's 5.26 server, which keeps the over-fetch
search: the store picks the query by the server's version when it opens.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.base import VectorIndex
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_vectors import FILTERED_SINCE, RECORD_INDEX, Neo4jVectorIndex
from dreammem.testing import VectorIndexSuite
from dreammem.testing.vector_index_suite import unit_rows
from tests.bolt_trips import counting_round_trips
from tests.neo4j_server import Neo4jServer, opened_client

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


@pytest.fixture
def client(newer_neo4j_server: Neo4jServer) -> Iterator[Neo4jClient]:
    yield from opened_client(newer_neo4j_server)


def _properties(client: Neo4jClient, index: str) -> list[str]:
    rows = client.run(
        "test", "SHOW VECTOR INDEXES YIELD name, properties WHERE name = $n RETURN properties", n=index
    )
    return list(rows[0]["properties"])


class TestNewerNeo4jVectorIndex(VectorIndexSuite):
    @pytest.fixture
    def vector_index(self, client: Neo4jClient) -> Iterator[VectorIndex]:
        index = Neo4jVectorIndex(client, self.dim, name="conformance")
        assert index.filtered_inside
        index.reset()
        yield index
        index.reset()


def test_each_server_gets_its_own_query(client: Neo4jClient, neo4j_server: Neo4jServer) -> None:
    old = Neo4jClient(neo4j_server.uri)
    try:
        assert client.server_version() >= FILTERED_SINCE > old.server_version() >= (5, 26)
        assert Neo4jVectorIndex(client, 8, name="version").filtered_inside
        assert not Neo4jVectorIndex(old, 8, name="version").filtered_inside
    finally:
        old.close()


def test_an_index_without_the_filter_properties_is_rebuilt_with_them(client: Neo4jClient) -> None:
    client.schema(
        [
            "DROP INDEX dm_vector_12 IF EXISTS",
            "CREATE VECTOR INDEX dm_vector_12 FOR (n:DMVector) ON (n.embedding_12) OPTIONS "
            "{indexConfig: {`vector.dimensions`: 12, `vector.similarity_function`: 'cosine'}}",
        ]
    )
    assert _properties(client, "dm_vector_12") == ["embedding_12"]  # as 5.26 made it
    Neo4jVectorIndex(client, 12, name="rebuilt")
    assert _properties(client, "dm_vector_12") == ["embedding_12", "index_name", "user_id"]


def test_filtered_search_returns_only_the_users_own_and_matches_exact(client: Neo4jClient) -> None:
    index = Neo4jVectorIndex(client, 16, name=f"crowd-{uuid.uuid4().hex[:6]}")
    rows = unit_rows(303, 16, 11)
    crowd = rows[:200] * 0.1 + rows[0] * 0.9  # the crowd sits around rows[0]
    index.add("crowd", list(range(200)), crowd / np.linalg.norm(crowd, axis=1, keepdims=True))
    index.add("alice", list(range(1000, 1003)), rows[200:203])
    index.add("bob", list(range(2000, 2100)), rows[203:303])
    try:
        hits = index.search("alice", rows[0], 3)  # every nearer vector is the crowd's
        assert [i for i, _ in hits] == [1000 + int(n) for n in np.argsort(-(rows[200:203] @ rows[0]))]
        recalls = []
        for query in unit_rows(20, 16, 5):
            exact = rows[203:303] @ query
            want = {2000 + int(n) for n in np.argsort(-exact)[:10]}
            found = index.search("bob", query, 10)
            assert all(2000 <= i < 2100 for i, _ in found) and len(found) == 10
            assert np.allclose([s for _, s in found], [exact[i - 2000] for i, _ in found], atol=1e-5)
            recalls.append(len(want & {i for i, _ in found}) / 10)
        assert np.mean(recalls) >= 0.98, recalls
    finally:
        index.reset()


def test_recall_on_the_newer_server_sees_only_the_users_active_memories(
    newer_neo4j_server: Neo4jServer,
) -> None:
    alice, bob = (f"{name}-{uuid.uuid4().hex[:8]}" for name in ("alice", "bob"))
    with DreamMemory(newer_neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        kept = memory.add("kayak trip along the coast of Lofoten", user_id=alice)
        gone = memory.add("kayak trip along the coast of Bergen", user_id=alice)
        memory.add("kayak trip along the coast of Lofoten, the secret one", user_id=bob)
        memory.forget(gone.id, user_id=alice)
        query = memory.embedder.embed_query("kayak trip along the coast of Lofoten")
        hits = memory.vector_index.search(alice, query, 10)
        assert [r for r, _ in hits] == list(memory.store.rowids(alice, [kept.id]).values())
        assert memory.recall("kayak trip Lofoten", user_id=alice, k=10).ids == [kept.id]
        client = Neo4jClient(newer_neo4j_server.uri)
        try:
            assert _properties(client, RECORD_INDEX) == ["embedding", "user_id", "status"]
        finally:
            client.close()


def test_a_tie_running_past_the_candidates_still_goes_lower_row_id_first(client: Neo4jClient) -> None:
    index = Neo4jVectorIndex(client, 16, name=f"ties-{uuid.uuid4().hex[:6]}")
    twin, other = unit_rows(2, 16, 3)
    rowids = [int(i) for i in np.random.default_rng(4).permutation(np.arange(100, 160))]
    index.add("carol", rowids, np.stack([twin] * len(rowids)))  # 60 equal vectors, > the 40 candidates
    index.add("carol", [1], other[None, :])
    try:
        assert [i for i, _ in index.search("carol", twin, 3)] == [100, 101, 102]
    finally:
        index.reset()


def test_one_statement_searches_a_batch_as_each_search_alone(
    client: Neo4jClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Neo4jVectorIndex(client, 16, name=f"batch-{uuid.uuid4().hex[:6]}")
    rows = unit_rows(203, 16, 7)
    twin = rows[0]
    tied = [int(i) for i in np.random.default_rng(5).permutation(np.arange(100, 160))]
    index.add("dave", tied, np.stack([twin] * len(tied)))  # 60 equal vectors: the tie runs past 40 candidates
    index.add("dave", list(range(1000, 1200)), rows[1:201])
    index.add("erin", list(range(3000, 3002)), rows[201:203])  # another user's: never in dave's answers
    queries = np.stack([rows[5], twin, rows[9], rows[201], rows[40]])
    try:
        for k, trips_wanted in ((3, 2), (8, 2), (300, 1)):  # 300: the index gives all 260, no tie past them
            alone = [index.search("dave", q, k) for q in queries]
            with counting_round_trips(monkeypatch) as trips:
                batch = index.search_many("dave", queries, k)
            assert batch == alone
            assert trips.count == trips_wanted  # the searches, then the exact ranking of the tied query's
            assert all(not 3000 <= i < 3002 for found in batch for i, _ in found)
            assert len(batch[0]) == min(k, 260)
        assert [i for i, _ in index.search_many("dave", queries, 3)[1]] == [100, 101, 102]
        alone = [index.search("dave", q, 5) for q in queries[[0, 2]]]
        with counting_round_trips(monkeypatch) as trips:
            assert index.search_many("dave", queries[[0, 2]], 5) == alone
        assert trips.count == 1  # no tie past the candidates: no exact ranking
    finally:
        index.reset()
