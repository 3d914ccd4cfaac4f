"""Ingest on the Neo4j backend: a batch's reads gathered into few statements, the same results.

A write's look-ups (each new turn's session context, the neighbours of each new statement,
the twins and echoes of what it replaces) are asked for the whole batch at once
(``find_many``, ``search_many``, ``twins_many``). These tests check that the answers are
those of asking one at a time and of the embedded store, and bound the Bolt round trips
of an ``add_many`` (counted on the driver's sockets, :mod:`tests.bolt_trips`), on both
servers: 5.26 (over-fetch) and the newer one (the search filtered inside the index).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.base import RecordLookups, RecordQuery, RecordStore, VectorIndex
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.stores.neo4j_vectors import RecordVectorIndex
from dreammem.types import Kind, Layer, MemoryRecord, Status
from dreammem.write.relations import possibly_outdated_by
from dreammem_bench.latency import synthetic_turns
from tests.bolt_trips import counting_round_trips
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
CHANGES = [  # (session, role, text): statements, the assistant's echoes, and later corrections
    ("c1", "user", "Email me when the build breaks."),
    ("c1", "assistant", "Got it, email it is."),
    ("c1", "user", "I live in Boston."),
    ("c1", "user", "I prefer Excel reports over PDF, please."),
    ("c1", "assistant", "Noted: Excel reports, and a 50,000 USD cap for Q3."),
    ("c1", "user", "I prefer tea in the morning."),
    ("c2", "user", "Actually, message me on Slack instead."),
    ("c2", "user", "I moved to Denver last month."),
    ("c2", "user", "Actually, my favorite report format is now CSV, Excel is too slow."),
    ("c2", "assistant", "Understood, CSV from now on."),
    ("c2", "user", "Actually, I prefer coffee now."),
]


def _turns(user: str, count: int) -> list[dict[str, Any]]:
    """``count`` synthetic turns of ``user`` with the statements and corrections woven in."""
    turns = [{**t, "user_id": user} for t in synthetic_turns(count, 1)]
    for n, (session, role, text) in enumerate(CHANGES):
        at = count * n // len(CHANGES)
        turns.insert(
            at + n,
            {
                "content": text,
                "user_id": user,
                "role": role,
                "session_id": session,
                "event_time": turns[min(at, len(turns) - 1)]["event_time"] + timedelta(seconds=n),
            },
        )
    return turns


def _write(memory: DreamMemory, turns: list[dict[str, Any]], batch: int) -> None:
    for start in range(0, len(turns), batch):
        memory.add_many(turns[start : start + batch])


def _outcome(store: RecordStore, user: str) -> list[tuple[Any, ...]]:
    """Every record of the user as what it says and what became of it (ids differ between stores)."""
    records = store.find(user, statuses=None, newest_first=False)
    text = {r.id: r.content for r in records}
    return [
        (
            r.content,
            r.role.value,
            r.layer.value,
            r.kind.value,
            r.session_id,
            r.status.value,
            text.get(r.superseded_by or ""),
            sorted(text.get(i, i) for i in possibly_outdated_by(r)),
        )
        for r in records
    ]


@pytest.fixture(params=["neo4j_server", "newer_neo4j_server"])
def server(request: pytest.FixtureRequest) -> Neo4jServer:
    """Each server: 5.26 searches by over-fetch, 2026.08.1 filters inside the index (both batched)."""
    found: Neo4jServer = request.getfixturevalue(request.param)
    return found


@pytest.fixture
def user() -> str:
    return f"ingest-{uuid.uuid4().hex[:8]}"


def test_neo4j_ingest_keeps_the_embedded_stores_records_statuses_and_supersedes(
    server: Neo4jServer, user: str, tmp_path: Path
) -> None:
    # One add_many: its searches find none of the user's records (the write's own are left out, as
    # FAISS has not learnt them), so the approximate index cannot miss an older statement the embedded
    # store finds (across batches it can on 5.26; test_the_gathered_reads_... covers batches).
    turns = _turns(user, 240)
    with DreamMemory(tmp_path / "embedded", embedder=HashingEmbedder()) as embedded:
        _write(embedded, turns, len(turns))
        expected = _outcome(embedded.store, user)
    with DreamMemory(server.uri, embedder=HashingEmbedder()) as on_neo4j:
        _write(on_neo4j, turns, len(turns))
        assert _outcome(on_neo4j.store, user) == expected
    statuses = {row[5] for row in expected}
    assert Status.SUPERSEDED.value in statuses  # the corrections replaced something
    assert any(row[7] for row in expected if row[1] == "assistant")  # and an echo was marked


def test_the_gathered_reads_of_a_write_are_the_one_by_one_reads(server: Neo4jServer, user: str) -> None:
    with DreamMemory(server.uri, embedder=HashingEmbedder()) as memory:
        _write(memory, _turns(user, 120), 60)
        store = memory.store
        assert isinstance(store, Neo4jRecordStore)
        records = store.find(user, statuses=None, newest_first=False)
        queries = (
            [
                RecordQuery(
                    user,
                    kinds=[Kind.TURN],
                    session_id=r.session_id,
                    since=r.event_time,
                    newest_first=False,
                    limit=4,
                )
                for r in records[::7]
            ]
            + [
                RecordQuery(
                    user,
                    statuses=None,
                    kinds=[Kind.TURN],
                    session_id=r.session_id,
                    until=r.event_time,
                    limit=3,
                )
                for r in records[::11]
            ]
            + [
                RecordQuery(user, statuses=[Status.SUPERSEDED]),
                RecordQuery(user, session_id="nowhere", limit=2),
            ]
        )
        gathered = store.find_many(queries)
        assert gathered == RecordLookups.find_many(store, queries)  # the default: one find each
        assert sum(map(len, gathered)) > len(queries)
        assert store.twins_many(records) == {r.id: store.twins(r) for r in records}
        assert any(store.twins_many(records).values())
        index = RecordVectorIndex(store.client, 384)
        queries_vectors = HashingEmbedder().embed_documents([r.content for r in records[::5]])
        rows = np.asarray(queries_vectors, dtype=np.float32)
        for k in (8, 16, 300):
            assert index.search_many(user, rows, k) == VectorIndex.search_many(index, user, rows, k)
        # Inside a write's transaction its searches leave its own rows out: they give what they gave
        # before it (the exact ranking, k 300, sees the transaction's nodes; the 5.26 index does not).
        before = {k: index.search_many(user, rows, k) for k in (8, 300)}
        fresh = [MemoryRecord(user_id=user, content=r.content) for r in records[::5]]
        with pytest.raises(_RolledBack), store.transaction():
            rowids = store.insert(fresh, [""] * len(fresh))
            store.put_vectors(rowids, "hashing-384", rows)
            written = range(rowids[0], rowids[-1] + 1)
            for k, found in before.items():
                assert index.search_stored(user, rows, k, written=written) == found
            raise _RolledBack


class _RolledBack(Exception):
    """Ends a transaction of a test without keeping what it wrote."""


def test_an_add_many_takes_round_trips_that_do_not_grow_with_its_turns(
    server: Neo4jServer, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = _turns(user, 400)
    searches: list[str] = []
    run = Neo4jClient.run

    def counted_run(client: Neo4jClient, action: str, cypher: str, /, **params: Any) -> Any:
        if action.startswith("vector_"):
            searches.append(action)
        return run(client, action, cypher, **params)

    monkeypatch.setattr(Neo4jClient, "run", counted_run)
    counted = []
    with (
        DreamMemory(server.uri, embedder=HashingEmbedder()) as memory,
        counting_round_trips(monkeypatch) as trips,
    ):
        # Another user's records fill the index: a new user's searches find few of its own there.
        _write(memory, _turns(f"{user}-other", 150), 150)
        # The new user's first writes (older records for the later ones to update), then 20 and 180.
        for start, size in ((0, 100), (100, 100), (200, 20), (220, 180)):
            slots_before = _slot_values(memory.store, user)
            trips.reset()
            searches.clear()
            memory.add_many(turns[start : start + size])
            slots = _slot_values(memory.store, user) - slots_before
            counted.append((trips.count, len(slots), list(searches)))
    # A write is a fixed set of statements (records, vectors, keyword statistics, times, queue, context,
    # twins, echoes, updates, with the transaction's and the row-id counter's trips: ~20), one round of
    # neighbour searches (the search, the exact ranks, with the size of the user's scope first when more
    # than one query goes exact, the hits' records: 4 trips; neo4j_exact.py), and up to 7 per new
    # value of a slot (its slot's values, the replaced records and their echoes: not batched).
    # The searches leave the write's own records out (search_stored): when the exact ranking counted
    # them, they crowded out the older ones and the write asked again, twice as many each round up to
    # 8 + the batch's records (20 and 38 trips here for 20 and 180 turns). Before session 26 a write
    # made one trip per statement searched, per echo and per twin: 50-54 and 223-236.
    for trips_taken, slot_values, vector_statements in counted:
        search, exact = ["vector_search_many"], ["vector_exact_many"]
        assert vector_statements in ([], search, search + exact, [*search, "vector_exact_size", *exact])
        assert trips_taken <= 24 + 4 + 7 * slot_values, counted


def _slot_values(store: RecordStore, user: str) -> set[str]:
    """The ids of the user's semantic records that hold a slot's value (any status)."""
    return {r.id for r in store.find(user, statuses=None, layers=[Layer.SEMANTIC]) if r.slot is not None}
