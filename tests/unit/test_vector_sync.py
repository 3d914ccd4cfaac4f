"""VectorSync's edges: a pruned change log, a FAISS file ahead of its database, files that fail.

Two ``VectorSync`` objects on two connections to one SQLite file are two processes'
views of the store; records and embeddings are written through the record store
contract, as the engine does, and the change log by the database's own triggers.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from dreammem.errors import BackendError
from dreammem.stores import vector_log
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.vector_sync import VectorSync
from dreammem.types import MemoryRecord

MODEL, DIM = "test-model", 8


def _write(store: SQLiteRecordStore, user: str, n: int, *, seed: int = 0) -> list[int]:
    """``n`` records of ``user`` with an embedding each; returns their row ids."""
    records = [MemoryRecord(user_id=user, content=f"{user} note {seed}-{i}") for i in range(n)]
    with store.transaction():
        rowids = store.insert(records, [r.content for r in records])
        vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
        store.put_vectors(rowids, MODEL, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return rowids


def _sync(store: SQLiteRecordStore, path: Path | None, *, keep: int = 1000) -> VectorSync:
    return VectorSync(store, FaissVectorIndex(DIM, path), MODEL, keep_changes=keep)


def test_a_reader_older_than_the_pruned_log_rebuilds_and_ends_up_whole(tmp_path: Path) -> None:
    writer_store, reader_store = SQLiteRecordStore(tmp_path / "s.db"), SQLiteRecordStore(tmp_path / "s.db")
    _write(writer_store, "u1", 3)
    writer = _sync(writer_store, None, keep=2)
    reader = _sync(reader_store, None)
    writer.load()
    reader.load()
    assert reader.index.count() == 3
    _write(writer_store, "u1", 5, seed=1)
    _write(writer_store, "u2", 2, seed=2)
    writer.flush()  # prunes the log down to its newest 2 changes
    assert vector_log.pruned_to(writer_store) == vector_log.last_sequence(writer_store) - 2
    looked_at = reader.refresh()
    assert looked_at == vector_log.last_sequence(reader_store)  # a rebuild, not the last two changes
    assert reader.index.counts() == {"u1": 8, "u2": 2}
    assert reader.refresh() == 0  # nothing new since


def test_pruning_keeps_the_newest_changes_and_never_prunes_twice(tmp_path: Path) -> None:
    store = SQLiteRecordStore(tmp_path / "s.db")
    _write(store, "u1", 6)
    last = vector_log.last_sequence(store)
    assert vector_log.prune(store, keep=4) == last - 4
    assert vector_log.prune(store, keep=4) == 0
    assert vector_log.prune(store, keep=100) == 0  # keeping more than is left deletes nothing
    assert vector_log.changed_rowids(store, 0, last) == vector_log.changed_rowids(store, last - 4, last)


def test_a_faiss_file_ahead_of_its_database_is_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ahead = SQLiteRecordStore(tmp_path / "a" / "s.db")
    _write(ahead, "u1", 6)
    sync = _sync(ahead, tmp_path / "a" / "v.faiss")
    sync.load()
    sync.flush()
    behind = SQLiteRecordStore(tmp_path / "b" / "s.db")  # a restored older database
    _write(behind, "u1", 2)
    shutil.copy(tmp_path / "a" / "v.faiss", tmp_path / "b" / "v.faiss")
    restored = _sync(behind, tmp_path / "b" / "v.faiss")
    with caplog.at_level(logging.WARNING, logger="dreammem.stores.vector_sync"):
        assert restored.load() is False
    assert "ahead of its database" in caplog.text
    assert restored.index.counts() == {"u1": 2}
    assert restored.index.sequence == vector_log.last_sequence(behind)


def test_a_file_whose_rebuild_cannot_be_written_still_serves_from_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SQLiteRecordStore(tmp_path / "s.db")
    rowids = _write(store, "u1", 4)
    target = tmp_path / "gone" / "v.faiss"  # its folder does not exist: every write fails
    sync = _sync(store, target)
    with caplog.at_level(logging.WARNING, logger="dreammem.stores.vector_sync"):
        assert sync.load() is False
    assert "could not write the rebuilt FAISS file" in caplog.text
    assert sync.index.count("u1") == 4
    query = store.vectors_of("u1", MODEL, [r.id for r in store.find("u1")])
    first = next(iter(query.values()))
    assert sync.index.search("u1", first, 1)[0][0] in rowids
    with pytest.raises(BackendError, match="cannot write"):
        sync.flush()  # an explicit flush reports it


def test_a_failed_prune_is_housekeeping_not_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SQLiteRecordStore(tmp_path / "s.db")
    _write(store, "u1", 3)
    sync = _sync(store, tmp_path / "v.faiss", keep=1)
    sync.load()
    store.close()  # the log cannot be pruned any more; the file can still be written
    with caplog.at_level(logging.INFO, logger="dreammem.stores.vector_sync"):
        sync.flush()
    assert "pruning the vector change log skipped" in caplog.text
    assert (tmp_path / "v.faiss").is_file()


def test_a_file_with_no_sequence_is_not_trusted(tmp_path: Path) -> None:
    store = SQLiteRecordStore(tmp_path / "s.db")
    rowids = _write(store, "u1", 3)
    unknown = FaissVectorIndex(DIM, tmp_path / "v.faiss")  # written with no change-log position
    unknown.add("u1", rowids[:1], np.ones((1, DIM), dtype=np.float32) / np.sqrt(DIM))
    unknown.flush()
    sync = _sync(store, tmp_path / "v.faiss")
    assert sync.load() is False
    assert sync.index.counts() == {"u1": 3}
    assert sync.index.sequence == vector_log.last_sequence(store)
