"""The graph outbox (GraphSync) and the embedded graph's invariants, without any server.

The outbox path runs against a real embedded graph in a *separate* SQLite file that
declares itself non-transactional, as an external graph does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.base import GraphEntity, GraphItem, GraphRelation
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.graph_sync import GraphSync
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import MemoryRecord, Status


class SeparateFileGraph(EmbeddedGraphStore):
    """The embedded graph in its own database: it cannot join the records' transaction."""

    capabilities = frozenset({"relations"})


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SQLiteRecordStore, SeparateFileGraph]]:
    records = SQLiteRecordStore(tmp_path / "records.db")
    graph_db = SQLiteRecordStore(tmp_path / "graph.db")
    yield records, SeparateFileGraph(graph_db)
    records.close()
    graph_db.close()


def record(user: str, text: str) -> MemoryRecord:
    return MemoryRecord(user_id=user, content=text, event_time=datetime(2024, 1, 1, tzinfo=UTC))


def write(records: SQLiteRecordStore, sync: GraphSync, batch: list[MemoryRecord]) -> None:
    with records.transaction():
        records.insert(batch, [r.content for r in batch])
        sync.stage(batch)


def test_outbox_is_filled_in_the_records_transaction_and_replayed(stores) -> None:  # type: ignore[no-untyped-def]
    records, graph = stores
    sync = GraphSync(records, graph)
    assert not sync.transactional
    batch = [record("u1", "Caroline adopted Rex."), record("u1", "Rex loves Cannon Beach.")]
    write(records, sync, batch)
    assert sync.pending() == 2 and graph.stats("u1").empty
    assert sync.flush() == 2
    assert sync.pending() == 0 and graph.stats("u1").memories == 2
    assert sync.flush() == 0


def test_a_rolled_back_write_leaves_no_outbox_entry(stores) -> None:  # type: ignore[no-untyped-def]
    records, graph = stores
    sync = GraphSync(records, graph)
    with pytest.raises(RuntimeError), records.transaction():
        batch = [record("u1", "Caroline adopted Rex.")]
        records.insert(batch, ["x"])
        sync.stage(batch)
        raise RuntimeError("failed before commit")
    assert sync.pending() == 0


def test_replay_uses_the_current_state_of_each_record(stores) -> None:  # type: ignore[no-untyped-def]
    records, graph = stores
    sync = GraphSync(records, graph)
    keep, drop = record("u1", "Caroline adopted Rex."), record("u1", "Melanie paints in Portland.")
    write(records, sync, [keep, drop])
    sync.flush()
    forgotten = dataclasses.replace(drop, status=Status.DELETED)
    with records.transaction():
        records.update([forgotten])
        sync.stage([forgotten])
    sync.stage([record("u1", "never stored")])  # no such record: replay removes it
    assert sync.flush() == 2
    assert set(graph.entities_of("u1", [keep.id, drop.id])) == {keep.id}
    assert graph.entity_keys("u1", ["portland", "caroline"]) == {"caroline"}


def test_an_entry_staged_again_during_replay_stays_queued(stores) -> None:  # type: ignore[no-untyped-def]
    records, graph = stores
    sync = GraphSync(records, graph)
    first = record("u1", "Caroline adopted Rex.")
    write(records, sync, [first])
    batch = sync._pending_batch()  # noqa: SLF001 - white-box: the batch a replay started from
    sync.stage([first])  # a newer version arrives while the old one is being replayed
    sync._replay(batch)  # noqa: SLF001 - white-box: a replay racing a newer staged version
    assert sync.pending() == 1
    assert sync.flush() == 1 and sync.pending() == 0


class RecordingGraph(SeparateFileGraph):
    """An outbox graph that keeps the items it was given."""

    def __init__(self, db: SQLiteRecordStore) -> None:
        super().__init__(db)
        self.upserted: list[GraphItem] = []

    def upsert(self, user_id: str, items: Sequence[GraphItem]) -> None:
        self.upserted.extend(items)
        super().upsert(user_id, items)


class NoRowidReads(SQLiteRecordStore):
    """A record store that fails any separate row-id read."""

    def rowids(self, user_id: str, ids: Sequence[str]) -> dict[str, int]:
        raise AssertionError("the replay read row ids in a query of its own")


def test_a_replay_gets_the_row_ids_with_the_outbox_entries(tmp_path: Path) -> None:
    records, graph_db = NoRowidReads(tmp_path / "records.db"), SQLiteRecordStore(tmp_path / "graph.db")
    graph = RecordingGraph(graph_db)
    sync = GraphSync(records, graph)
    batch = [
        record("u1", "Caroline adopted Rex."),
        record("u2", "Tom Becker approves."),
        record("u1", "Rex runs."),
    ]
    with records.transaction():
        rowids = records.insert(batch, [r.content for r in batch])
        sync.stage(batch)
    assert sync.flush() == 3
    assert sorted((i.memory_id, i.rowid) for i in graph.upserted) == sorted(
        (r.id, n) for r, n in zip(batch, rowids, strict=True)
    )
    records.close()
    graph_db.close()


def test_rebuild_marks_then_replays_every_active_record(stores) -> None:  # type: ignore[no-untyped-def]
    records, graph = stores
    sync = GraphSync(records, graph)
    write(records, sync, [record("u1", "Caroline adopted Rex."), record("u2", "Tom Becker approves.")])
    sync.flush()
    graph.clear()
    assert sync.rebuild(["u1", "u2"]) == 2
    assert graph.stats("u1").memories == 1 and graph.stats("u2").memories == 1
    assert sync.pending() == 0


def test_the_facade_keeps_an_outbox_graph_in_step(tmp_path: Path) -> None:
    graph_db = SQLiteRecordStore(tmp_path / "graph.db")
    graph = SeparateFileGraph(graph_db)
    with DreamMemory(tmp_path / "store", embedder=HashingEmbedder(), graph=graph) as memory:
        ids = [r.id for r in memory.add_many([{"content": "Caroline adopted Rex.", "user_id": "u1"}])]
        assert memory.stats()["graph_outbox"] == 0 and graph.stats("u1").memories == 1
        memory.forget(ids[0], user_id="u1")
        assert graph.stats("u1").empty
        assert memory.replay_graph() == 0


# -- invariants of the embedded graph under random writes -------------------------------

NAMES = st.sampled_from(["ann", "bo", "cy", "dee", "mia"])
ITEMS = st.builds(
    lambda mid, names, rel: GraphItem(
        f"m{mid}",
        tuple(GraphEntity(n, n.title()) for n in names),
        (GraphRelation(names[0], "knows", names[-1]),) if rel and names else (),
    ),
    st.integers(0, 6),
    st.lists(NAMES, max_size=3, unique=True),
    st.booleans(),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.lists(ITEMS, max_size=4)),
        st.tuples(st.just("remove"), st.lists(st.integers(0, 6).map(lambda i: f"m{i}"), max_size=3)),
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_counts_and_edges_stay_consistent(ops: list[tuple[str, list]]) -> None:  # type: ignore[type-arg]
    records = SQLiteRecordStore(":memory:")
    graph = EmbeddedGraphStore(records)
    model: dict[str, set[str]] = {}
    for op, payload in ops:
        if op == "upsert":
            graph.upsert("u", payload)
            for it in payload:
                model[it.memory_id] = set(it.mentions())
        else:
            graph.remove("u", payload)
            for mid in payload:
                model.pop(mid, None)
    keys = {k for ks in model.values() for k in ks}
    total, df = graph.entity_stats("u", sorted(keys | {"zz"}))
    assert total == len(model) == graph.stats("u").memories
    assert df == {k: sum(k in ks for ks in model.values()) for k in keys}
    assert {m: {e.key for e in es} for m, es in graph.entities_of("u", list(model)).items()} == {
        m: ks for m, ks in model.items() if ks
    }
    assert graph.stats("u").entities == len(keys)  # no orphans
    records.close()
