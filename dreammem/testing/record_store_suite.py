"""The record store conformance suite: every :class:`~dreammem.stores.base.RecordStore` must pass it.

:class:`RecordStoreSuite` is every suite of :data:`ROLE_SUITES` together: run it, or
run the role suites one by one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping

from dreammem.stores.base import DreamLogRow, RecordStore
from dreammem.testing.dreams_suite import DreamLogSuite, DreamQueueSuite, TaskStatesSuite
from dreammem.testing.index_suite import KeywordIndexSuite, StoredEmbeddingsSuite, TimeIndexSuite
from dreammem.testing.records import T0, put, rec
from dreammem.testing.records_suite import RecordHistorySuite, RecordsSuite, StoreLifecycleSuite
from dreammem.testing.role_suite import DIM, MODEL, RoleSuite
from dreammem.testing.vector_index_suite import unit_rows

__all__ = ["ROLE_SUITES", "AcrossRolesSuite", "ErasureSuite", "RecordStoreSuite", "suites_not_run"]


class ErasureSuite(RoleSuite):
    """The ``Erasure`` role: erased records and users leave no row, vector or quote behind."""

    def test_erasure_leaves_no_row_behind(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        doomed, kept = rec(alice, "my passport number is X123"), rec(alice, "likes tea", 1)
        rowids = put(record_store, [doomed, kept])
        record_store.put_vectors(rowids, MODEL, unit_rows(2, DIM, 9))
        record_store.enqueue([doomed, kept])
        report = json.dumps({"summary": f"noted: {doomed.content}", "sources": [doomed.id]})
        stamp = T0.isoformat()
        dream_id = f"dream-{uuid.uuid4().hex}"
        record_store.add_dream(DreamLogRow(dream_id, alice, 1, "test", stamp, stamp, "done", report, "{}"))
        erased, rewritten = record_store.erase_records(alice, [doomed.id, "no-such-id"], [doomed.content])
        assert (erased, rewritten) == ([doomed.id], 1)
        assert [r.id for r in record_store.find(alice, statuses=None)] == [kept.id]
        assert record_store.keyword_search(alice, ["passport"], 5) == []
        assert record_store.count_vectors(MODEL, alice) == 1
        assert [r.id for r in record_store.queued(alice)] == [kept.id]
        row = record_store.get_dream(dream_id)
        assert row is not None and doomed.content not in row.report and doomed.id not in row.report
        record_store.set_task_state(alice, "s1", {"goal": "renew passport"}, T0)
        put(record_store, [rec(bob, "bob stays")])
        assert record_store.erase_user(alice) == 1
        assert record_store.find(alice, statuses=None) == [] and record_store.task_states(alice) == {}
        assert record_store.count(bob) == 1
        assert isinstance(record_store.compact(), bool)


class AcrossRolesSuite(RoleSuite):
    """What holds across the roles: deleting a user's records leaves every role empty for them."""

    def test_empty_again(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        records = [rec(alice, f"memory about lanterns {n}", n) for n in range(4)]
        rowids = put(record_store, records)
        record_store.put_vectors(rowids, MODEL, unit_rows(4, DIM, 8))
        record_store.enqueue(records)
        record_store.dequeue(alice, [r.id for r in records])
        assert sorted(record_store.delete(alice, [r.id for r in records])) == sorted(r.id for r in records)
        assert record_store.count(alice) == 0
        assert record_store.find(alice, statuses=None) == []
        assert record_store.keyword_search(alice, ["lanterns"], 5) == []
        assert record_store.count_vectors(MODEL, alice) == 0
        assert record_store.queue_size(alice) == 0
        assert alice not in record_store.users()
        put(record_store, [rec(alice, "lanterns again")])  # usable again
        assert record_store.count(alice) == 1


class RecordStoreSuite(
    StoreLifecycleSuite,
    RecordsSuite,
    RecordHistorySuite,
    KeywordIndexSuite,
    TimeIndexSuite,
    StoredEmbeddingsSuite,
    DreamQueueSuite,
    TaskStatesSuite,
    DreamLogSuite,
    ErasureSuite,
    AcrossRolesSuite,
):
    """Abstract conformance tests of every role; override :meth:`record_store` (a store, empty or shared)."""


ROLE_SUITES: tuple[type[RoleSuite], ...] = tuple(
    base for base in RecordStoreSuite.__bases__ if issubclass(base, RoleSuite)
)
"""One suite per role of :mod:`dreammem.stores.roles`, in the order ``RecordStore`` lists them, then
the checks across roles: a backend that runs each of these has run :class:`RecordStoreSuite`."""


def suites_not_run(namespace: Mapping[str, object]) -> list[str]:
    """The role suites no class in ``namespace`` (a test module's ``globals()``) runs.

    A backend's test module that subclasses the role suites one by one asserts this is
    empty, so a role added later is not left out silently.
    """
    ran = {base for value in namespace.values() if isinstance(value, type) for base in value.__mro__}
    return [suite.__name__ for suite in ROLE_SUITES if suite not in ran]
