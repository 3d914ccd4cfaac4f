"""The engine's contract: one unit of work keeps SQLite, FAISS, BM25 and the graph in step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.engine import Engine
from dreammem.types import Status


def _vector_ids(memory: DreamMemory, user_id: str) -> set[int]:
    query = memory.embedder.embed_query("anything")
    return {rowid for rowid, _ in memory.vector_index.search(user_id, query, 1000)}


def _rowid(memory: DreamMemory, user_id: str, record_id: str) -> int:
    return memory.store.rowids(user_id, [record_id])[record_id]


def test_the_facade_writes_through_its_engine(memory: DreamMemory) -> None:
    record = memory.add("I moved to Lisbon last spring", user_id="u1", session_id="s1")
    assert isinstance(memory.engine, Engine)
    assert memory.engine.store is memory.store
    assert _rowid(memory, "u1", record.id) in _vector_ids(memory, "u1")
    assert memory.engine.vector_count("u1") == memory.vector_index.count("u1")


def test_a_status_change_leaves_faiss_and_the_graph(memory: DreamMemory) -> None:
    kept = memory.add("My sister Ana plays the cello", user_id="u1")
    gone = memory.add("My cousin Rui collects stamps", user_id="u1")
    gone_rowid = _rowid(memory, "u1", gone.id)
    memory.engine.update([dataclasses.replace(gone, status=Status.ARCHIVED)])
    ids = _vector_ids(memory, "u1")
    assert gone_rowid not in ids and _rowid(memory, "u1", kept.id) in ids
    assert all(h.record.id != gone.id for h in memory.recall("Rui stamps", user_id="u1", k=5))
    assert memory.graph.entities_of("u1", [kept.id])[kept.id]
    assert not memory.graph.entities_of("u1", [gone.id]).get(gone.id)


def test_an_update_of_content_reindexes_keywords_and_vectors(memory: DreamMemory) -> None:
    record = memory.add("The parking code is 4471", user_id="u1")
    memory.engine.update([dataclasses.replace(record, content="The gym locker number is 882")])
    rowid = _rowid(memory, "u1", record.id)
    by_keyword = memory.recall("locker", user_id="u1", k=3, paths=["keyword"])
    assert [h.record.id for h in by_keyword] == [record.id]
    assert memory.recall("parking", user_id="u1", k=3, paths=["keyword"]).hits == ()
    fresh = memory.embedder.embed_query("The gym locker number is 882")
    assert memory.vector_index.search("u1", fresh, 1)[0][0] == rowid
    stored = memory.store.get("u1", [record.id])[0]
    assert stored.content == "The gym locker number is 882"


def test_a_failed_unit_of_work_changes_nothing(memory: DreamMemory) -> None:
    record = memory.add("Breakfast is at eight", user_id="u1")
    before = memory.vector_index.count("u1")
    with pytest.raises(RuntimeError), memory.engine.unit() as unit:
        unit.update([dataclasses.replace(record, status=Status.ARCHIVED)])
        raise RuntimeError("boom")
    assert memory.get(record.id, user_id="u1").status is Status.ACTIVE
    assert memory.vector_index.count("u1") == before


def test_reopening_after_an_update_trusts_or_rebuilds_the_index(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as first:
        a = first.add("Tea with lemon every morning", user_id="u1")
        first.add("Coffee after lunch", user_id="u1")
        first.forget(a.id, user_id="u1")
        count = first.vector_index.count("u1")
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as again:
        assert again.vector_index.count("u1") == count == 1
        assert again.stats(user_id="u1")["vectors"] == 1
