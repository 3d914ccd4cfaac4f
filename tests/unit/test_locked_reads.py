"""Reads for update: a read-modify-write never overwrites another writer's change."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.errors import ValidationError
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing import check_read_for_update_holds_off_writers
from dreammem.types import Role, Status


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


def test_a_revert_checks_the_record_as_it_is_now_not_as_the_caller_read_it(tmp_path: Path) -> None:
    with (
        DreamMemory(tmp_path, embedder=HashingEmbedder()) as mine,
        DreamMemory(tmp_path, embedder=HashingEmbedder()) as other,
    ):
        start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        mine.add("I take my coffee with regular milk.", user_id="alice", event_time=start)
        later = start + timedelta(days=7)
        mine.add("I switched to oat milk in my coffee.", user_id="alice", event_time=later)
        records = mine.get_all(user_id="alice", status=None, limit=100)
        (old,) = [r for r in records if "regular" in r.content and r.role is Role.USER]
        assert old.status is Status.SUPERSEDED
        stale = mine.get(old.id, user_id="alice")
        other.forget(old.id, user_id="alice")
        with pytest.raises(ValidationError):
            mine.engine.revert_update(stale)
        assert mine.get(old.id, user_id="alice").status is Status.DELETED
        assert old.id not in other.recall("regular milk coffee", user_id="alice").ids
