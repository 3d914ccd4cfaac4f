"""On a real server the Neo4j record store passes each role's conformance suite, the vector index its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import timedelta

import numpy as np
import pytest

from dreammem import testing as suites
from dreammem.stores.base import RecordStore, VectorIndex
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.stores.neo4j_vectors import Neo4jVectorIndex
from dreammem.testing import VectorIndexSuite, check_read_for_update_holds_off_writers
from dreammem.testing.records import T0, rec
from dreammem.testing.vector_index_suite import unit_rows
from dreammem.text.tokenize import tokenize
from dreammem.types import MemoryRecord
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


class Neo4jStore:
    """The store under test: one database on the shared server (the suites use fresh users)."""

    @pytest.fixture
    def record_store(self, neo4j_server: Neo4jServer) -> Iterator[RecordStore]:
        store = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
        yield store
        store.close()


class TestNeo4jLifecycle(Neo4jStore, suites.StoreLifecycleSuite):
    pass


class TestNeo4jRecords(Neo4jStore, suites.RecordsSuite):
    pass


class TestNeo4jHistory(Neo4jStore, suites.RecordHistorySuite):
    pass


class TestNeo4jKeyword(Neo4jStore, suites.KeywordIndexSuite):
    pass


class TestNeo4jTimes(Neo4jStore, suites.TimeIndexSuite):
    pass


class TestNeo4jEmbeddings(Neo4jStore, suites.StoredEmbeddingsSuite):
    pass


class TestNeo4jDreamQueue(Neo4jStore, suites.DreamQueueSuite):
    pass


class TestNeo4jTaskStates(Neo4jStore, suites.TaskStatesSuite):
    pass


class TestNeo4jDreamLog(Neo4jStore, suites.DreamLogSuite):
    pass


class TestNeo4jErasure(Neo4jStore, suites.ErasureSuite):
    pass


class TestNeo4jAcrossRoles(Neo4jStore, suites.AcrossRolesSuite):
    pass


def test_every_role_suite_runs_here() -> None:
    assert suites.suites_not_run(globals()) == []


class UnlockedReads(Neo4jRecordStore):
    """A mutant: ``for_update`` reads lock nothing (Neo4j's plain read-committed read)."""

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        return super().get(user_id, ids)


class TestNeo4jLockedReads:
    """Two stores on one server, as two processes would hold them."""

    def test_a_read_for_update_holds_off_another_writer(self, neo4j_server: Neo4jServer) -> None:
        first, second = (
            Neo4jRecordStore(Neo4jClient(neo4j_server.uri)),
            Neo4jRecordStore(Neo4jClient(neo4j_server.uri)),
        )
        try:
            check_read_for_update_holds_off_writers(first, second, f"lock-{uuid.uuid4().hex[:8]}")
        finally:
            first.close()
            second.close()

    def test_the_check_fails_a_store_whose_reads_lock_nothing(self, neo4j_server: Neo4jServer) -> None:
        first, second = (
            UnlockedReads(Neo4jClient(neo4j_server.uri)),
            Neo4jRecordStore(Neo4jClient(neo4j_server.uri)),
        )
        try:
            with pytest.raises(AssertionError, match="read for update"):
                check_read_for_update_holds_off_writers(first, second, f"lock-{uuid.uuid4().hex[:8]}")
        finally:
            first.close()
            second.close()


class TestNeo4jVectorIndex(VectorIndexSuite):
    @pytest.fixture
    def vector_index(self, neo4j_server: Neo4jServer) -> Iterator[VectorIndex]:
        client = Neo4jClient(neo4j_server.uri)
        index = Neo4jVectorIndex(client, self.dim, name="conformance")
        index.reset()
        yield index
        index.reset()
        client.close()


class TestNeo4jScoping:
    """What the suites cannot see: the user filter after an approximate search, Chinese terms."""

    @pytest.fixture
    def store(self, neo4j_server: Neo4jServer) -> Iterator[Neo4jRecordStore]:
        store = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
        yield store
        store.close()

    def test_a_user_with_few_vectors_among_many_gets_only_their_own(self, neo4j_server: Neo4jServer) -> None:
        client = Neo4jClient(neo4j_server.uri)
        index = Neo4jVectorIndex(client, 16, name=f"crowd-{uuid.uuid4().hex[:6]}")
        rows = unit_rows(203, 16, 11)
        crowd = rows[:200] * 0.1 + rows[0] * 0.9  # the crowd sits around rows[0]
        index.add("crowd", list(range(200)), crowd / np.linalg.norm(crowd, axis=1, keepdims=True))
        index.add("alice", [1000, 1001, 1002], rows[200:])
        try:
            hits = index.search("alice", rows[0], 3)  # the ANN's top 64 are all the crowd's
            assert {i for i, _ in hits} == {1000, 1001, 1002}
            assert all(-1.0 <= s <= 1.0 for _, s in hits)
        finally:
            index.reset()
            client.close()

    def test_chinese_terms_are_found_and_a_window_filters(self, store: Neo4jRecordStore) -> None:
        user = f"zh-{uuid.uuid4().hex[:8]}"
        texts = ["我喜欢喝茶", "明天去北京开会", "他喜欢喝咖啡"]
        records = [rec(user, t, n * 60) for n, t in enumerate(texts)]
        rowids = store.insert(records, [" ".join(tokenize(t)) for t in texts])
        try:
            hits = store.keyword_search(user, tokenize("喜欢喝茶吗"), 5)
            assert hits[0][0] == rowids[0] and {r for r, _ in hits} <= {rowids[0], rowids[2]}
            late = store.keyword_search(user, tokenize("喜欢"), 5, since=T0 + timedelta(minutes=30))
            assert [r for r, _ in late] == [rowids[2]]
            assert store.keyword_search("someone-else", tokenize("喜欢"), 5) == []
        finally:
            store.delete(user, [r.id for r in records])
