"""Recall on Neo4j reads its candidates, not every record of the user (issue 37).

The gathered read (:mod:`dreammem.stores.neo4j_surroundings`) and the exact ranking of a
subset of vectors (the temporal path's) once read every record node of the user; at
10,000 records of one user they cost ~45,000 database hits and ~250 ms. These tests
profile the statements the store really runs on a real server and check that their
database hits do not grow with the user's other records, that the answers stay those
of the single reads and of an exact ranking, and that a default recall takes no more
Bolt round trips than it did (:mod:`tests.bolt_trips`).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.stores.neo4j_vectors import RecordVectorIndex
from dreammem.stores.surroundings import read_one_by_one
from tests.bolt_trips import counting_round_trips
from tests.integration.test_neo4j_round_trips import NOW, QUERIES, _fill
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

T0 = datetime(2023, 1, 2, 9, 0, tzinfo=UTC)
Statement = tuple[str, str, dict[str, Any]]
MORE = 300
"""Records added to the user between two profiles (each read of them costs at least one db hit)."""


@pytest.fixture
def user() -> str:
    return f"rr-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def memory(neo4j_server: Neo4jServer) -> Iterator[DreamMemory]:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as opened:
        yield opened


def _store(memory: DreamMemory) -> Neo4jRecordStore:
    assert isinstance(memory.store, Neo4jRecordStore)
    return memory.store


def _grow(memory: DreamMemory, user: str, count: int) -> None:
    """``count`` more turns of the user in sessions of their own, long before the fixture's."""
    memory.add_many(
        [
            {
                "content": f"note {n}: the {['red', 'green', 'blue'][n % 3]} kettle stood on shelf {n}",
                "user_id": user,
                "session_id": f"old-{n // 20}",
                "event_time": T0 + timedelta(minutes=n),
            }
            for n in range(count)
        ]
    )


@contextmanager
def _statements(client: Neo4jClient, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Statement]]:
    """Every statement the client runs inside the block: ``(action, cypher, params)``."""
    seen: list[Statement] = []
    run = client.run

    def recording(name: str, cypher: str, /, **params: Any) -> Any:
        seen.append((name, cypher, params))
        return run(name, cypher, **params)

    with monkeypatch.context() as patch:
        patch.setattr(client, "run", recording)
        yield seen


def _profiles(
    client: Neo4jClient, action: str, work: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> list[dict[str, Any]]:
    """The profiled plans of the statements named ``action`` that ``work()`` runs, run again on the server."""
    with _statements(client, monkeypatch) as seen:
        work()
    mine = [(cypher, params) for name, cypher, params in seen if name == action]
    assert mine, f"{action} did not run"
    plans = []
    with client.driver.session(database=client.database) as session:
        for cypher, params in mine:
            summary = session.run(f"PROFILE {cypher}", params).consume()
            assert summary.profile is not None
            plans.append(summary.profile)
    return plans


def _hits(plan: dict[str, Any]) -> int:
    return int(plan.get("dbHits", 0)) + sum(_hits(child) for child in plan.get("children", []))


def _scans(plan: dict[str, Any]) -> list[str]:
    """The operators of ``plan`` that read a whole label or index (``NodeIndexScan``...)."""
    own = [str(plan["operatorType"])] if "Scan" in str(plan["operatorType"]) else []
    return own + [scan for child in plan.get("children", []) for scan in _scans(child)]


def _db_hits(
    client: Neo4jClient, action: str, work: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> int:
    """Database hits of the statements named ``action`` that ``work()`` runs, profiled on the server."""
    return sum(_hits(plan) for plan in _profiles(client, action, work, monkeypatch))


def test_the_gathered_read_does_not_read_the_users_other_records(
    memory: DreamMemory, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(memory, user)
    store = _store(memory)
    records = store.find(user, statuses=None)
    rowids = sorted(store.rowids(user, [r.id for r in records]).values())
    asked, seeds = [*rowids[::3], *rowids[-3:]], rowids[1::4]  # last three: tea, coffee, correction

    def gather() -> Any:
        return store.surroundings(user, asked, seeds, pinned=True)

    plans = _profiles(store.client, "surroundings", gather, monkeypatch)
    first = gather()
    _grow(memory, user, MORE)
    plans += _profiles(store.client, "surroundings", gather, monkeypatch)
    before, after = (_hits(plan) for plan in plans)
    # Reading every record of the user (main before issue 37's index work) costs >= 4 hits each.
    assert after - before < MORE // 4, (before, after)
    # Every lookup seeks, whatever statistics the plan was made with: on a young database a plain
    # USING INDEX hint was met by scanning the index (every user's records), and that cached plan,
    # reused after the growth, read the new records too (db hits 3,110 -> 15,710).
    assert not [scan for plan in plans for scan in _scans(plan)]
    assert gather() == first == read_one_by_one(store, user, asked, seeds, pinned=True)
    assert first.replaced and first.neighbours


def test_ranking_a_subset_of_vectors_does_not_read_the_users_other_vectors(
    memory: DreamMemory, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(memory, user)
    store = _store(memory)
    embedder = HashingEmbedder()
    index = RecordVectorIndex(store.client, embedder.dim)
    records = store.find(user)
    rowids = store.rowids(user, [r.id for r in records])
    subset = sorted(rowids.values())[::2]
    query = np.asarray(embedder.embed_query("painting a lake at sunrise"), dtype=np.float32)

    def ranked() -> list[tuple[int, float]]:
        return index.search_subset(user, query, [*subset, subset[0]], 5)  # a repeated id counts once

    before = _db_hits(store.client, "vector_exact", ranked, monkeypatch)
    first = ranked()
    _grow(memory, user, MORE)
    after = _db_hits(store.client, "vector_exact", ranked, monkeypatch)
    assert after - before < MORE // 4, (before, after)
    assert ranked() == first
    # The exact ranking: cosine over the subset's stored vectors, ties to the lower row id.
    by_rowid = {rowids[r.id]: r for r in records}
    vectors = store.vectors_of(user, embedder.name, [by_rowid[r].id for r in subset])
    unit = query / np.linalg.norm(query)
    cosines = {
        r: float(np.dot(vectors[by_rowid[r].id], unit) / np.linalg.norm(vectors[by_rowid[r].id]))
        for r in subset
    }
    expected = sorted(subset, key=lambda r: (-round(cosines[r], 5), r))[:5]
    assert [r for r, _ in first] == expected
    assert all(abs(score - cosines[r]) < 1e-4 for r, score in first)


# A default recall's Bolt round trips for each of QUERIES on the fixture, counted when this test was
# written (the same on main before it; issue 37: the count is to fall, never to grow). Accesses are
# held back (``gated``), so only the recall's own trips count. On a server holding other users'
# vectors too, the over-fetch search may keep fewer than k of the user's and rank the user's vectors
# exactly (one trip more, ``vector_exact_many``): such a trip is not counted against these.
DEFAULT_RECALL_TRIPS = [8, 8, 7, 6, 7, 7]


def _pool_holds(client: Neo4jClient, connections: int) -> None:
    """Open ``connections`` pooled connections at once (opening one is not a recall's trip)."""
    sessions = [client.driver.session(database=client.database) for _ in range(connections)]
    try:
        for tx in [session.begin_transaction() for session in sessions]:
            tx.close()
    finally:
        for session in sessions:
            session.close()


def test_a_default_recall_takes_no_more_round_trips_than_before(
    memory: DreamMemory, user: str, gated: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(memory, user)
    memory.recall(QUERIES[0], user_id=user, k=5, now=NOW)  # warm: schema, index, keyword statistics
    _pool_holds(_store(memory).client, 4)  # a recall's vector search overlaps its keyword search
    counts = []
    with counting_round_trips(monkeypatch) as trips, _statements(_store(memory).client, monkeypatch) as seen:
        for query in QUERIES:
            trips.reset()
            seen.clear()
            result = memory.recall(query, user_id=user, k=5, now=NOW)
            fallbacks = sum(name == "vector_exact_many" for name, _, _ in seen)
            counts.append(trips.count - fallbacks)
            assert not result.degraded
    gated.set()
    assert all(n <= most for n, most in zip(counts, DEFAULT_RECALL_TRIPS, strict=True)), counts
