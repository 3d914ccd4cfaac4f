"""Conformance of the dream's roles: the queue, task state and the dream log."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

from dreammem.stores.base import DreamLogRow, RecordStore
from dreammem.testing.records import T0, put, rec
from dreammem.testing.role_suite import RoleSuite

__all__ = ["DreamLogSuite", "DreamQueueSuite", "TaskStatesSuite"]


class DreamQueueSuite(RoleSuite):
    """The ``DreamQueue`` role: oldest first, restorable."""

    def test_the_queue_is_oldest_first_and_can_be_restored(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        records = [rec(alice, f"turn {n}", n) for n in range(3)]
        put(record_store, records)
        record_store.enqueue(records)
        assert [r.id for r in record_store.queued(alice)] == [r.id for r in records]
        assert record_store.queue_size(alice) == 3
        assert record_store.oldest_queued_at(alice) == T0
        entries = record_store.queue_entries(alice, [records[0].id, records[2].id])
        assert sorted(e[0] for e in entries) == sorted([records[0].id, records[2].id])
        record_store.dequeue(alice, [r.id for r in records])
        assert record_store.queue_size(alice) == 0
        assert record_store.requeue(alice, entries) == 2
        assert alice in record_store.dream_users()


class TaskStatesSuite(RoleSuite):
    """The ``TaskStates`` role: one state per session, scoped by user."""

    def test_task_state_per_session(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        record_store.set_task_state(alice, "s1", {"goal": "book a trip"}, T0)
        record_store.set_task_state(
            alice, "s2", {"goal": "file taxes", "task_type": "admin"}, T0 + timedelta(1)
        )
        assert record_store.get_task_state(alice, "s1") == {"goal": "book a trip"}
        assert record_store.get_task_state(bob, "s1") == {}
        assert set(record_store.task_states(alice)) == {"s1", "s2"}
        assert record_store.latest_task_state(alice)["goal"] == "file taxes"


class DreamLogSuite(RoleSuite):
    """The ``DreamLog`` role: dreams by user, newest first, their status and times."""

    def test_the_dream_log(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        ids = [f"dream-{uuid.uuid4().hex}" for _ in range(2)]
        for n, dream_id in enumerate(ids):
            stamp = (T0 + timedelta(hours=n)).isoformat()
            record_store.add_dream(DreamLogRow(dream_id, alice, 1, "test", stamp, stamp, "done", "{}", "{}"))
        assert [r.dream_id for r in record_store.list_dreams(alice, 10)] == ids[::-1]
        assert record_store.list_dreams(bob, 10) == []
        assert record_store.dreams_after(ids[0], alice, "done") == [ids[1]]
        record_store.set_dream_status(ids[1], "undone", T0)
        row = record_store.get_dream(ids[1])
        assert row is not None and row.status == "undone" and json.loads(row.report) == {}
        assert record_store.dream_times(alice, 1) == (T0, T0 + timedelta(hours=1))
        assert record_store.dream_times(alice, 2) == (None, None)
        assert (ids[0], alice) in record_store.dream_ids_with_prefix(ids[0][:12])
