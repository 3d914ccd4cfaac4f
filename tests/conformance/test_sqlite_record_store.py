"""The SQLite record store passes each role's conformance suite, on a file and in memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dreammem import testing as suites
from dreammem.stores.base import RecordStore
from dreammem.stores.sqlite import SQLiteRecordStore


class SQLiteStore:
    """The store under test: a file, and ``DreamMemory(None)``'s in-memory database shared by every thread."""

    @pytest.fixture(params=["file", "memory"])
    def record_store(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RecordStore]:
        store = SQLiteRecordStore(tmp_path / "records.db" if request.param == "file" else ":memory:")
        yield store
        store.close()


class TestSQLiteLifecycle(SQLiteStore, suites.StoreLifecycleSuite):
    pass


class TestSQLiteRecords(SQLiteStore, suites.RecordsSuite):
    pass


class TestSQLiteHistory(SQLiteStore, suites.RecordHistorySuite):
    pass


class TestSQLiteKeyword(SQLiteStore, suites.KeywordIndexSuite):
    pass


class TestSQLiteTimes(SQLiteStore, suites.TimeIndexSuite):
    pass


class TestSQLiteEmbeddings(SQLiteStore, suites.StoredEmbeddingsSuite):
    pass


class TestSQLiteDreamQueue(SQLiteStore, suites.DreamQueueSuite):
    pass


class TestSQLiteTaskStates(SQLiteStore, suites.TaskStatesSuite):
    pass


class TestSQLiteDreamLog(SQLiteStore, suites.DreamLogSuite):
    pass


class TestSQLiteErasure(SQLiteStore, suites.ErasureSuite):
    pass


class TestSQLiteAcrossRoles(SQLiteStore, suites.AcrossRolesSuite):
    pass


def test_every_role_suite_runs_here() -> None:
    assert suites.suites_not_run(globals()) == []
