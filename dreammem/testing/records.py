"""Records the conformance suites and the store tests build: a fixed clock and keyword terms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dreammem.stores.base import RecordStore
from dreammem.text.tokenize import tokenize
from dreammem.types import MemoryRecord

__all__ = ["T0", "put", "rec"]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
"""The suites' clock: ``rec(..., minutes)`` is said this many minutes after it."""


def rec(user_id: str, content: str, minutes: int = 0, **fields: object) -> MemoryRecord:
    """A record at ``T0 + minutes``."""
    when = T0 + timedelta(minutes=minutes)
    return MemoryRecord(user_id=user_id, content=content, created_at=when, event_time=when, **fields)  # type: ignore[arg-type]


def put(store: RecordStore, records: list[MemoryRecord]) -> list[int]:
    """Insert records with their own words as keyword terms."""
    return store.insert(records, [" ".join(tokenize(r.content)) for r in records])
