"""The engine's contract: one unit of work keeps SQLite, FAISS, BM25 and the graph in step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.engine import Engine
from dreammem.engine.vectors import VectorLifecycle
from dreammem.text.tokenize import tokenize
from dreammem.types import MemoryRecord, Status


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


def _insert(memory: DreamMemory, records: list[MemoryRecord]) -> list[int]:
    """Insert records through one unit of work, embedded by the store's embedder."""
    embedder = memory.embedder
    with memory.engine.unit() as unit:
        return unit.insert(
            records,
            embedder.embed_documents([r.content for r in records]),
            terms=[" ".join(tokenize(r.content)) for r in records],
            model=embedder.name,
        )


def test_records_inserted_inactive_never_enter_faiss(memory: DreamMemory) -> None:
    active = MemoryRecord(user_id="u1", content="The boat is moored at pier 7")
    archived = MemoryRecord(user_id="u1", content="The boat was at pier 2", status=Status.ARCHIVED)
    rowids = _insert(memory, [active, archived])
    assert _vector_ids(memory, "u1") == {rowids[0]}
    assert memory.store.count_vectors(memory.embedder.name, "u1") == 1  # the stored embeddings agree


def test_an_insert_then_a_rewrite_in_one_unit_indexes_only_the_final_text(memory: DreamMemory) -> None:
    record = MemoryRecord(user_id="u1", content="The wifi password is tulip42")
    embedder = memory.embedder
    with memory.engine.unit() as unit:
        (rowid,) = unit.insert(
            [record],
            embedder.embed_documents([record.content]),
            terms=[" ".join(tokenize(record.content))],
            model=embedder.name,
        )
        unit.update([dataclasses.replace(record, content="The wifi password is orchid17")])
    assert memory.vector_index.count("u1") == 1
    found = memory.vector_index.search("u1", embedder.embed_query("The wifi password is orchid17"), 1)
    assert found[0][0] == rowid and found[0][1] == pytest.approx(1.0, abs=1e-4)
    by_keyword = memory.recall("orchid17", user_id="u1", k=3, paths=["keyword"])
    assert [h.record.id for h in by_keyword] == [record.id]
    assert memory.recall("tulip42", user_id="u1", k=3, paths=["keyword"]).hits == ()


def test_a_deleting_unit_rebuilds_faiss_without_the_rows(memory: DreamMemory) -> None:
    kept = memory.add("Ana's birthday is on 4 June", user_id="u1")
    gone = memory.add("Rui's birthday is on 9 May", user_id="u1")
    other = memory.add("Rui's birthday is on 9 May", user_id="u2")
    kept_rowid = memory.store.rowids("u1", [kept.id])[kept.id]
    with memory.engine.unit() as unit:
        assert unit.delete("u1", [gone.id, "no-such-id"]) == [gone.id]
    assert _vector_ids(memory, "u1") == {kept_rowid}
    assert memory.store.get("u1", [gone.id]) == []
    assert memory.vector_index.count("u2") == 1  # another user's twin stays
    assert memory.get(other.id, user_id="u2").content == other.content


def test_a_failed_faiss_update_after_the_commit_is_rebuilt_from_sqlite(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add("The cat is fed at seven", user_id="u1")

    def broken_add(self: VectorLifecycle, user_id: str, rowids: object, vectors: np.ndarray) -> None:
        raise RuntimeError("faiss went away")

    monkeypatch.setattr(VectorLifecycle, "add", broken_add)
    record = memory.add("The dog is walked at nine", user_id="u1")  # the write itself succeeds
    monkeypatch.undo()
    rowid = memory.store.rowids("u1", [record.id])[record.id]
    assert rowid in _vector_ids(memory, "u1")
    assert memory.vector_index.count("u1") == 2
    hits = memory.recall("When is the dog walked?", user_id="u1", k=1, paths=["vector"])
    assert [h.record.id for h in hits] == [record.id]


def test_a_crash_between_commit_and_faiss_is_repaired_on_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as first:
        first.add("Swimming on Tuesdays", user_id="u1")
        # the process dies after SQLite committed and before FAISS heard of the write
        monkeypatch.setattr("dreammem.engine.unit.UnitOfWork.apply", lambda self: None)
        late = first.add("Climbing on Thursdays", user_id="u1")
        monkeypatch.undo()
        assert first.vector_index.count("u1") == 1  # FAISS is behind SQLite now
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as again:
        assert again.vector_index.count("u1") == 2
        hits = again.recall("Climbing on Thursdays", user_id="u1", k=1, paths=["vector"])
        assert [h.record.id for h in hits] == [late.id]


def test_an_update_with_the_records_already_read_does_not_read_them_again(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    status_only = memory.add("My cousin Rui collects stamps", user_id="u1")
    rewritten = memory.add("The parking code is 4471", user_id="u1")
    unread = memory.add("My sister Ana plays the cello", user_id="u1")
    asked: list[str] = []
    get = memory.store.get

    def counting_get(user_id: str, ids: list[str]) -> list[MemoryRecord]:
        asked.extend(ids)
        return get(user_id, ids)

    with memory.engine.unit() as unit:
        read = get("u1", [status_only.id, rewritten.id])
        monkeypatch.setattr(memory.store, "get", counting_get)
        unit.update(
            [
                dataclasses.replace(status_only, status=Status.ARCHIVED),
                dataclasses.replace(rewritten, content="The gym locker number is 882"),
                dataclasses.replace(unread, content="My sister Ana plays the viola"),
            ],
            read=read,
        )
        assert asked == [unread.id]
    for record, text in [
        (rewritten, "The gym locker number is 882"),
        (unread, "My sister Ana plays the viola"),
    ]:
        fresh = memory.embedder.embed_query(text)
        assert memory.vector_index.search("u1", fresh, 1)[0][0] == _rowid(memory, "u1", record.id)
    assert _rowid(memory, "u1", status_only.id) not in _vector_ids(memory, "u1")
