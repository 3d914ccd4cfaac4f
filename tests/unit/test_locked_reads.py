"""Reads for update: a read-modify-write never overwrites another writer's change."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing import check_read_for_update_holds_off_writers
from dreammem.types import Status


def test_two_sqlite_stores_on_one_file_hold_off_each_other(tmp_path: Path) -> None:
    first, second = SQLiteRecordStore(tmp_path / "m.db"), SQLiteRecordStore(tmp_path / "m.db")
    try:
        check_read_for_update_holds_off_writers(first, second, "alice")
    finally:
        first.close()
        second.close()


def test_a_forget_keeps_what_another_writer_changed_since_the_callers_read(tmp_path: Path) -> None:
    with (
        DreamMemory(tmp_path, embedder=HashingEmbedder()) as mine,
        DreamMemory(tmp_path, embedder=HashingEmbedder()) as other,
    ):
        (added,) = mine.add_many([{"content": "The kayak trip is on Saturday", "user_id": "alice"}])
        stale = mine.get(added.id, user_id="alice")
        other.engine.update([dataclasses.replace(stale, importance=5)])
        forgotten = mine.engine.soft_delete(stale, twins=False)
        assert (forgotten.status, forgotten.importance) == (Status.DELETED, 5)
        assert mine.get(added.id, user_id="alice").importance == 5
        assert other.recall("kayak trip", user_id="alice").ids == []
