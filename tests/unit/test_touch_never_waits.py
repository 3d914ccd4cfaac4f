"""Recall's access bookkeeping never waits for another writer, and loses nothing."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.touches import PendingTouches
from dreammem.testing.records import put, rec

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _store(tmp_path: Path) -> tuple[SQLiteRecordStore, list[str]]:
    store = SQLiteRecordStore(tmp_path / "m.db")
    records = [rec("u1", f"turn {n}", n) for n in range(3)]
    put(store, records)
    return store, [r.id for r in records]


def _access(store: SQLiteRecordStore, record_id: str) -> tuple[int, datetime | None]:
    (record,) = store.get("u1", [record_id])
    return record.access_count, record.last_accessed_at


def test_a_touch_while_another_process_writes_is_held_then_written(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    other = sqlite3.connect(tmp_path / "m.db", isolation_level=None)  # another process, to SQLite
    other.execute("BEGIN IMMEDIATE")
    store.touch("u1", [ids[0], ids[1]], T0)  # returns: the write lock is taken elsewhere
    store.touch("u1", [ids[0]], T0 + timedelta(hours=1))
    assert _access(store, ids[0]) == (0, None)
    other.execute("COMMIT")
    store.touch("u1", [ids[2]], T0 + timedelta(hours=2))  # the lock is free: everything is written
    assert _access(store, ids[0]) == (2, T0 + timedelta(hours=1))
    assert _access(store, ids[1]) == (1, T0)
    assert _access(store, ids[2]) == (1, T0 + timedelta(hours=2))
    other.close()
    store.close()


def test_closing_writes_the_accesses_still_held(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    other = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    store.touch("u1", [ids[1]], T0)
    other.execute("COMMIT")
    other.close()
    store.close()
    reopened = SQLiteRecordStore(tmp_path / "m.db")
    assert _access(reopened, ids[1]) == (1, T0)
    reopened.close()


def test_a_touch_while_another_thread_holds_the_store_is_held(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    inside, release = threading.Event(), threading.Event()

    def writer() -> None:
        with store.transaction():
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    inside.wait(30)
    store.touch("u1", [ids[0]], T0)  # returns: this process's other thread writes
    release.set()
    thread.join()
    assert _access(store, ids[0]) == (0, None)
    store.touch("u1", [], T0)  # nothing new: the held access is written
    assert _access(store, ids[0]) == (1, T0)
    store.close()


def test_a_touch_inside_the_callers_own_transaction_joins_it(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    with store.transaction():
        store.touch("u1", [ids[2]], T0)
        assert _access(store, ids[2]) == (1, T0)
    assert _access(store, ids[2]) == (1, T0)
    store.close()


def test_held_accesses_add_up_and_keep_the_latest_time() -> None:
    held = PendingTouches()
    held.add("u1", ["a", "b", "a"], T0)  # one access per record per recall
    held.add("u1", ["a"], T0 + timedelta(hours=1))
    held.add("u2", ["a"], T0)
    rows = held.take()
    assert sorted(rows) == sorted(
        [
            ((T0 + timedelta(hours=1)).isoformat(), 2, "u1", "a"),
            (T0.isoformat(), 1, "u1", "b"),
            (T0.isoformat(), 1, "u2", "a"),
        ]
    )
    assert len(held) == 0 and held.take() == []
    held.add("u1", ["a"], T0 + timedelta(hours=3))  # an access after the take
    held.put_back(rows)  # the taken ones are older: the newer time stays
    again = {(user, record): (when, count) for when, count, user, record in held.take()}
    assert again[("u1", "a")] == ((T0 + timedelta(hours=3)).isoformat(), 3)
    assert again[("u1", "b")] == (T0.isoformat(), 1)


def test_past_the_limit_the_oldest_held_accesses_are_dropped() -> None:
    held = PendingTouches(limit=2)
    held.add("u1", ["a"], T0)
    held.add("u1", ["b"], T0)
    held.add("u1", ["c"], T0)
    assert sorted(record for _, _, _, record in held.take()) == ["b", "c"]
