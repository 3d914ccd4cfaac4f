"""Fixtures shared by the integration tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import datetime

import pytest

from dreammem.stores.neo4j_store import Neo4jRecordStore


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Neo4j accesses are written only once the event is set (counting then sees the recall's trips)."""
    release = threading.Event()
    touch = Neo4jRecordStore.touch

    def held(self: Neo4jRecordStore, user_id: str, ids: Sequence[str], at: datetime) -> None:
        release.wait(30)
        touch(self, user_id, ids, at)

    monkeypatch.setattr(Neo4jRecordStore, "touch", held)
    yield release
    release.set()
