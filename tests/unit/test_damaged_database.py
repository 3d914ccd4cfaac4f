"""A damaged SQLite file is a typed, non-retryable error that names the file, and is left as it was."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from dreammem import BackendError, DreamMemory
from dreammem.embed import HashingEmbedder


def _real_store(path: Path) -> None:
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [{"content": f"note {n} about the harbour " * 40, "user_id": "u1"} for n in range(60)]
        )


DAMAGES: dict[str, Callable[[Path], None]] = {
    "zeros": lambda db: db.write_bytes(b"\x00" * 8192),
    "text": lambda db: db.write_bytes(b"these are not the bytes of a database\n" * 300),
    "cut_short": lambda db: db.write_bytes(db.read_bytes()[: db.stat().st_size // 3]),
    "header_smashed": lambda db: db.write_bytes(b"SQLite format 2\x00" + db.read_bytes()[16:]),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_file_is_a_backend_error_that_leaves_the_bytes_alone(tmp_path: Path, damage: str) -> None:
    store = tmp_path / "store"
    _real_store(store)
    db = store / "dreammem.db"
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    DAMAGES[damage](db)
    damaged = db.read_bytes()
    with pytest.raises(BackendError) as info, DreamMemory(store, embedder=HashingEmbedder()) as memory:
        memory.recall("harbour", user_id="u1")
        memory.add("one more", user_id="u1")
    error = info.value
    assert str(db) in str(error)
    assert not error.is_retryable  # waiting will not repair a file
    assert isinstance(error.__cause__, sqlite3.DatabaseError)
    assert db.read_bytes() == damaged  # nothing written over what may still be rescued


def test_an_empty_file_is_a_new_store(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    db.write_bytes(b"")
    with DreamMemory(db, embedder=HashingEmbedder()) as memory:
        record = memory.add("the first memory", user_id="u1")
        assert memory.recall("first memory", user_id="u1").ids == [record.id]
