"""The SQLite record store passes the record store conformance suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dreammem.stores.base import RecordStore
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing import RecordStoreSuite


class TestSQLiteRecordStore(RecordStoreSuite):
    @pytest.fixture
    def record_store(self, tmp_path: Path) -> Iterator[RecordStore]:
        store = SQLiteRecordStore(tmp_path / "records.db")
        yield store
        store.close()


class TestSQLiteRecordStoreInMemory(RecordStoreSuite):
    """``DreamMemory(None)``'s store: one in-memory database, shared by every thread."""

    @pytest.fixture
    def record_store(self) -> Iterator[RecordStore]:
        store = SQLiteRecordStore(":memory:")
        yield store
        store.close()
