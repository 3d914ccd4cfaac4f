"""The embedded graph and the graph recall path, through the DreamMemory facade."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import RecallQuery
from dreammem.recall.graph import GraphPath, query_entity_keys
from dreammem.stores import EmbeddedGraphStore
from dreammem.stores.base import GraphEntity, GraphItem
from dreammem.stores.sqlite import SQLiteRecordStore

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def add(memory: DreamMemory, user: str, *texts: str) -> list[str]:
    turns = [
        {"content": t, "user_id": user, "event_time": T0 + timedelta(minutes=i)} for i, t in enumerate(texts)
    ]
    return [r.id for r in memory.add_many(turns)]


def graph_hits(memory: DreamMemory, query: str, user: str) -> list[str]:
    result = memory.recall(query, user_id=user, k=10, paths=["graph"])
    assert not result.degraded
    return [h.record.content for h in result]


def test_embedded_graph_is_the_default_and_shares_the_file(memory: DreamMemory) -> None:
    assert isinstance(memory.graph, EmbeddedGraphStore)
    add(memory, "u1", "Caroline adopted a puppy named Rex.")
    assert memory.graph.stats("u1").memories == 1
    assert memory.store.schema_version >= 3
    assert "graph" in memory.pipeline.paths


def test_two_hops_find_a_memory_sharing_no_word_with_the_query(memory: DreamMemory) -> None:
    add(
        memory,
        "u1",
        "Caroline adopted a puppy named Rex.",
        "Rex loves running at Cannon Beach.",
        "Melanie painted a sunset last week.",
    )
    hits = graph_hits(memory, "Where does Caroline go on weekends?", "u1")
    assert hits == ["Caroline adopted a puppy named Rex.", "Rex loves running at Cannon Beach."]
    full = memory.recall("Where does Caroline go on weekends?", user_id="u1", k=3)
    beach = next(h for h in full if "Cannon Beach" in h.record.content)
    assert "graph" in beach.paths and "keyword" not in beach.paths


def test_lower_case_names_still_hit(memory: DreamMemory) -> None:
    add(memory, "u1", "Tom Becker signs off anything above 10k.", "The weather was nice.")
    assert graph_hits(memory, "who is tom becker?", "u1") == ["Tom Becker signs off anything above 10k."]


def test_ids_in_queries_hit(memory: DreamMemory) -> None:
    add(memory, "u1", "Order #48213 for the GPU server was placed.", "The vendor is Lambda Labs.")
    assert graph_hits(memory, "status of #48213", "u1")[0].startswith("Order #48213")


def test_chinese_names_and_places(memory: DreamMemory) -> None:
    add(memory, "zh", "张伟在北京工作。", "北京的冬天很冷，要穿羽绒服。", "我喜欢喝咖啡。")
    hits = graph_hits(memory, "张伟住在哪里？", "zh")
    assert hits == ["张伟在北京工作。", "北京的冬天很冷，要穿羽绒服。"]


def test_users_never_reach_each_other(memory: DreamMemory) -> None:
    add(memory, "alice", "Caroline adopted Rex.", "Rex loves Cannon Beach.")
    add(memory, "bob", "Caroline moved to Tokyo.", "Tokyo is expensive.")
    assert graph_hits(memory, "Caroline", "alice") == ["Caroline adopted Rex.", "Rex loves Cannon Beach."]
    assert graph_hits(memory, "Caroline", "bob") == ["Caroline moved to Tokyo.", "Tokyo is expensive."]


def test_forget_and_supersede_leave_the_graph(memory: DreamMemory) -> None:
    ids = add(memory, "u1", "Caroline adopted Rex.", "Rex loves Cannon Beach.")
    memory.forget(ids[1], user_id="u1")
    assert graph_hits(memory, "Caroline", "u1") == ["Caroline adopted Rex."]
    assert memory.graph is not None and memory.graph.entity_keys("u1", ["cannon beach"]) == set()

    memory.add("My favorite report format is Excel.", user_id="u1", event_time=T0)
    memory.add("Actually, my favorite report format is now CSV.", user_id="u1", event_time=T0 + timedelta(1))
    superseded = memory.get_all(user_id="u1", status="superseded")
    assert superseded
    assert memory.graph.entities_of("u1", [r.id for r in superseded]) == {}
    active = memory.get_all(user_id="u1", limit=1000)
    assert memory.graph.stats("u1").memories == len(active)


def test_graph_writes_roll_back_with_the_records(tmp_path: Path) -> None:
    records = SQLiteRecordStore(tmp_path / "db.sqlite")
    graph = EmbeddedGraphStore(records)
    with pytest.raises(RuntimeError), records.transaction():
        graph.upsert("u1", [GraphItem("m1", (GraphEntity("rex", "Rex"),))])
        raise RuntimeError("the record write failed")
    assert graph.stats().empty
    records.close()


def test_a_failed_write_leaves_neither_records_nor_graph(memory: DreamMemory) -> None:
    add(memory, "u1", "Caroline adopted Rex.")
    before = (memory.store.count("u1"), memory.graph.stats("u1") if memory.graph else None)
    bad = [{"content": "Rex loves Cannon Beach.", "user_id": "u1"}, {"content": "", "user_id": "u1"}]
    with pytest.raises(ValueError):
        memory.add_many(bad)
    assert (memory.store.count("u1"), memory.graph.stats("u1") if memory.graph else None) == before


def test_reindex_rebuilds_the_graph(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        add(memory, "u1", "Caroline adopted Rex.", "Rex loves Cannon Beach.")
        add(memory, "u2", "Melanie paints.")
        assert memory.graph is not None
        expected = (memory.graph.stats("u1"), memory.graph.stats("u2"))
        memory.graph.clear()
        assert memory.graph.stats().empty
        assert memory.reindex_graph() == 3
        assert (memory.graph.stats("u1"), memory.graph.stats("u2")) == expected
        memory.graph.clear()
        assert memory.reindex()["graph_records"] == 3
        memory.graph.clear()
    out = CliRunner().invoke(app, ["reindex", "--graph", "--path", str(path)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == {"graph_records": 3}
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        assert graph_hits(memory, "caroline", "u1") == ["Caroline adopted Rex.", "Rex loves Cannon Beach."]


def test_graph_survives_reopen(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as memory:
        add(memory, "u1", "Caroline adopted Rex.")
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as memory:
        assert graph_hits(memory, "Caroline", "u1") == ["Caroline adopted Rex."]
        assert memory.stats()["graph_outbox"] == 0


def test_query_entity_keys() -> None:
    keys = query_entity_keys("What did caroline's dog do at Cannon Beach on 2024-07-15?")
    assert {"caroline", "cannon beach", "2024-07-15", "dog"} <= set(keys)
    assert "what" not in keys and "did" not in keys
    assert query_entity_keys("") == []
    assert "#48213" in query_entity_keys("when does order #48213 ship")
    assert "张伟" in query_entity_keys("张伟住在哪里？")
    assert len(query_entity_keys(" ".join(f"Name{i}" for i in range(500)))) <= 256


def test_named_only_seeds_the_walk_from_the_entities_the_query_names(memory: DreamMemory) -> None:
    add(
        memory,
        "u1",
        "Caroline adopted a puppy named Rex.",
        "Rex loves running at Cannon Beach.",
        "My dog sleeps.",
    )
    named = query_entity_keys("Where does Caroline walk her dog?", named_only=True)
    assert "caroline" in named and "dog" not in named  # a span, not a name
    assert set(named) < set(query_entity_keys("Where does Caroline walk her dog?"))
    path = GraphPath(memory.graph, memory.store, named_only=True)
    query = RecallQuery("Where does Caroline walk her dog?", "u1", 10, T0 + timedelta(days=1))
    rows = memory.store.get_by_rowids("u1", [c.rowid for c in path.search(query)])
    # Caroline -> the puppy turn -> Rex -> the beach turn (two hops); "dog" seeds nothing.
    assert {r.content for r in rows.values()} == {
        "Caroline adopted a puppy named Rex.",
        "Rex loves running at Cannon Beach.",
    }
