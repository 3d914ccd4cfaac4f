"""Several processes (or instances) on one embedded store: visibility, files, migrations."""

from __future__ import annotations

import dataclasses
import errno
import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dreammem import BackendError, DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores import files, vector_log
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite import SQLiteRecordStore

SPAWN = multiprocessing.get_context("spawn")


def _open(path: Path) -> DreamMemory:
    return DreamMemory(path, embedder=HashingEmbedder())


def _vector_ids(memory: DreamMemory, query: str, user: str = "u1") -> list[str]:
    return memory.recall(query, user_id=user, k=10, paths=["vector"]).ids


# -- a write by one is seen by the other's next recall ---------------------------------------


def test_a_long_lived_reader_sees_another_writers_vectors_at_its_next_recall(tmp_path: Path) -> None:
    reader = _open(tmp_path)
    reader.add("warm up the reader", user_id="u1")
    assert reader.recall("warm", user_id="u1").ids
    with _open(tmp_path) as writer:
        written = [writer.add(f"canoe trip number {n} to Lofoten", user_id="u1") for n in range(20)]
        batch = writer.add_many([{"content": "glacier hike in Iceland", "user_id": "u2"}])
    assert {r.id for r in written[-10:]} <= set(_vector_ids(reader, "canoe trip Lofoten"))
    assert _vector_ids(reader, "glacier hike Iceland", user="u2") == [batch[0].id]
    assert reader.stats(user_id="u1")["vectors"] == 21
    reader.close()


def test_a_record_forgotten_elsewhere_leaves_this_processs_vector_index(tmp_path: Path) -> None:
    reader = _open(tmp_path)
    kept = reader.add("sailing in Croatia", user_id="u1")
    doomed = reader.add("sailing in Greece", user_id="u1")
    with _open(tmp_path) as other:
        other.forget(doomed.id, user_id="u1")
    assert reader.stats(user_id="u1")["vectors"] == 1
    assert _vector_ids(reader, "sailing Greece") == [kept.id]
    reader.close()


def test_a_record_edited_elsewhere_is_found_by_its_new_words(tmp_path: Path) -> None:
    reader = _open(tmp_path)
    record = reader.add("weekly standup on Monday", user_id="u1")
    reader.add("quarterly review in March", user_id="u1")
    with _open(tmp_path) as writer:  # re-embedded in place: same row id, new vector
        writer.engine.update([dataclasses.replace(record, content="weekly standup moved to Thursday")])
    assert _vector_ids(reader, "moved to Thursday")[0] == record.id
    reader.close()


def test_the_refresh_reads_only_the_changes_never_every_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = _open(tmp_path)
    reader.add_many([{"content": f"old note {n}", "user_id": "u1"} for n in range(50)])
    writer = _open(tmp_path)

    def no_full_rebuild(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the refresh rebuilt the whole index")

    monkeypatch.setattr(SQLiteRecordStore, "iter_active_vectors", no_full_rebuild)
    new = writer.add("brand new bouldering gym", user_id="u1")
    assert _vector_ids(reader, "bouldering gym")[0] == new.id
    writer.close()
    reader.close()


def test_own_writes_and_recalls_skip_the_refresh_when_nobody_else_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _open(tmp_path)
    memory.add("first", user_id="u1")
    memory.recall("first", user_id="u1")
    calls: list[int] = []
    original = SQLiteRecordStore.fetchall

    def counting(self: SQLiteRecordStore, sql: str, params: Any = ()) -> Any:
        if "vector_changes" in sql:
            calls.append(1)
        return original(self, sql, params)

    monkeypatch.setattr(SQLiteRecordStore, "fetchall", counting)
    for n in range(5):
        memory.add(f"own write {n}", user_id="u1")
        memory.recall("own write", user_id="u1")
    assert calls == []
    memory.close()


def test_a_writer_that_never_recalled_leaves_a_file_the_next_process_uses_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _open(tmp_path) as writer:
        added = writer.add_many([{"content": f"note {n} about kayaks", "user_id": "u1"} for n in range(30)])
        writer.forget(added[0].id, user_id="u1")
    replayed: list[int] = []
    original = vector_log.changed_rowids

    def counting(store: SQLiteRecordStore, after: int, upto: int) -> list[int]:
        rows = original(store, after, upto)
        replayed.extend(rows)
        return rows

    monkeypatch.setattr(vector_log, "changed_rowids", counting)
    with _open(tmp_path) as reader:
        assert len(_vector_ids(reader, "note about kayaks")) == 10
        assert added[0].id not in _vector_ids(reader, "note 0 about kayaks")
    assert replayed == []


def test_a_file_written_after_another_process_wrote_is_still_brought_forward(tmp_path: Path) -> None:
    with _open(tmp_path) as first:
        first.add("first note", user_id="u1")
        second = _open(tmp_path)
        late = second.add("a late bouldering note", user_id="u1")
        first.add("own note after it", user_id="u1")
    second.forget(late.id, user_id="u1")  # the log moves on; this file must not claim it
    second.close()
    with _open(tmp_path) as reader:
        assert late.id not in _vector_ids(reader, "bouldering note")


def test_a_vector_index_that_cannot_be_brought_up_to_date_is_reported_degraded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = _open(tmp_path)
    old = reader.add("kayak trip in May", user_id="u1")
    with _open(tmp_path) as writer:
        writer.add("kayak lessons in June", user_id="u1")

    def unreadable(*args: Any) -> list[int]:
        raise BackendError("SQLite failed: disk I/O error")

    monkeypatch.setattr(vector_log, "changed_rowids", unreadable)
    result = reader.recall("kayak", user_id="u1")
    assert "stale" in result.degraded["vector"] and "disk I/O error" in result.degraded["vector"]
    assert old.id in result.ids  # recall still answers from what it has
    monkeypatch.undo()
    assert "vector" not in reader.recall("kayak", user_id="u1").degraded
    assert reader.stats(user_id="u1")["vectors"] == 2
    reader.close()


# -- derived files are rebuilt, never trusted ------------------------------------------------


def _store_with_one(path: Path) -> str:
    with _open(path) as memory:
        return memory.add("kayak trip in May", user_id="u1").id


def _drop_one_vector(faiss_file: Path) -> None:
    """Same sequence number, one vector fewer: only the count check can tell."""
    index = FaissVectorIndex(HashingEmbedder().dim, faiss_file)
    assert index.load_file() and index.count() == 1
    sequence = index.sequence
    index.reset()
    index.sequence = sequence
    index.flush()


DAMAGES = {
    "empty": lambda p: p.write_bytes(b""),
    "cut_short": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "garbage": lambda p: p.write_bytes(b"\x00" * 4096),
    "count_mismatch": _drop_one_vector,
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_or_mismatched_faiss_file_is_rebuilt(tmp_path: Path, damage: str) -> None:
    record_id = _store_with_one(tmp_path)
    DAMAGES[damage](tmp_path / "vectors.faiss")
    with _open(tmp_path) as memory:
        assert _vector_ids(memory, "kayak trip") == [record_id]
        assert memory.stats()["vectors"] == 1
    assert FaissVectorIndex(HashingEmbedder().dim, tmp_path / "vectors.faiss").load_file()


def test_a_faiss_file_of_another_store_is_not_trusted(tmp_path: Path) -> None:
    with _open(tmp_path / "other") as other:
        other.add_many([{"content": f"unrelated {n}", "user_id": "u1"} for n in range(30)])
    record_id = _store_with_one(tmp_path / "mine")
    (tmp_path / "mine" / "vectors.faiss").write_bytes((tmp_path / "other" / "vectors.faiss").read_bytes())
    with _open(tmp_path / "mine") as memory:
        assert _vector_ids(memory, "kayak trip") == [record_id]
        assert memory.stats()["vectors"] == 1


def test_an_older_faiss_file_is_brought_forward_through_the_change_log(tmp_path: Path) -> None:
    first = _store_with_one(tmp_path)
    old = (tmp_path / "vectors.faiss").read_bytes()
    with _open(tmp_path) as memory:
        second = memory.add("kayak lessons in June", user_id="u1")
        memory.forget(first, user_id="u1")
    (tmp_path / "vectors.faiss").write_bytes(old)
    with _open(tmp_path) as memory:
        assert _vector_ids(memory, "kayak") == [second.id]


# -- file writes: unique temp names, typed errors ------------------------------------------------


def _open_write_close(path: str, barrier: Any, n: int, results: Any) -> None:
    try:
        memory = DreamMemory(path, embedder=HashingEmbedder())
        memory.add(f"process {n} was here", user_id=f"p{n}")
        barrier.wait(timeout=60)
        memory.close()
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(f"{type(exc).__name__}: {exc}")
        return
    results.put("ok")


def _in_processes(target: Any, path: Path, count: int) -> list[str]:
    barrier, results = SPAWN.Barrier(count), SPAWN.Queue()
    workers = [SPAWN.Process(target=target, args=(str(path), barrier, n, results)) for n in range(count)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    return sorted(outcomes)


@pytest.mark.slow
def test_processes_closing_at_once_all_write_the_faiss_file(tmp_path: Path) -> None:
    _open(tmp_path).close()
    assert _in_processes(_open_write_close, tmp_path, 4) == ["ok"] * 4
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    with _open(tmp_path) as memory:
        assert memory.stats()["vectors"] == 4


def _first_open(path: str, barrier: Any, n: int, results: Any) -> None:
    try:
        barrier.wait(timeout=60)
        with DreamMemory(path, embedder=HashingEmbedder()) as memory:
            memory.add(f"process {n}", user_id="u1")
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(f"{type(exc).__name__}: {exc}")
        return
    results.put("ok")


def _first_open_store(path: str, barrier: Any, n: int, results: Any) -> None:
    try:
        barrier.wait(timeout=60)
        SQLiteRecordStore(Path(path) / "dreammem.db").close()
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(f"{type(exc).__name__}: {exc}")
        return
    results.put("ok")


@pytest.mark.slow
def test_processes_migrating_a_new_database_at_once_all_succeed(tmp_path: Path) -> None:
    (tmp_path / "new").mkdir()
    assert _in_processes(_first_open_store, tmp_path / "new", 6) == ["ok"] * 6
    with sqlite3.connect(tmp_path / "new" / "dreammem.db") as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == [m.version for m in MIGRATIONS]


@pytest.mark.slow
def test_processes_creating_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    assert _in_processes(_first_open, tmp_path / "new", 6) == ["ok"] * 6
    with sqlite3.connect(tmp_path / "new" / "dreammem.db") as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == [m.version for m in MIGRATIONS]
    with _open(tmp_path / "new") as memory:
        assert memory.stats()["records"]["active"] == 6


@pytest.mark.parametrize(
    ("failure", "retryable"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), True),
        (PermissionError(13, "Permission denied"), False),
    ],
    ids=["disk_full", "permission"],
)
def test_close_raises_a_typed_error_when_the_faiss_file_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: OSError, retryable: bool
) -> None:
    record_id = _store_with_one(tmp_path)
    before = (tmp_path / "vectors.faiss").read_bytes()
    memory = _open(tmp_path)
    memory.add("a second kayak trip", user_id="u1")

    def fail(*args: Any) -> None:
        raise failure

    monkeypatch.setattr(files.os, "fsync", fail)
    with pytest.raises(BackendError) as caught:
        memory.close()
    assert caught.value.is_retryable is retryable
    assert isinstance(caught.value.__cause__, OSError)
    monkeypatch.undo()
    assert (tmp_path / "vectors.faiss").read_bytes() == before  # the old file is untouched
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    with _open(tmp_path) as reopened:  # and the file is brought forward from SQLite
        assert set(_vector_ids(reopened, "kayak trip")) == {record_id, reopened.get_all(user_id="u1")[0].id}


def test_a_folder_that_cannot_take_the_temp_file_is_a_backend_error(tmp_path: Path) -> None:
    target = tmp_path / "gone" / "vectors.faiss"
    with pytest.raises(BackendError, match="cannot write"):
        files.write_atomic(target, lambda handle: handle.write(b"x"))
    assert not os.path.exists(target)
