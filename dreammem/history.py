"""A memory's version history: every version of the same fact, oldest first."""

from __future__ import annotations

from datetime import UTC, datetime

from dreammem.stores.base import RecordStore
from dreammem.types import MemoryRecord

__all__ = ["version_history"]


def version_history(store: RecordStore, record: MemoryRecord) -> list[MemoryRecord]:
    """The record with every version of the same fact, oldest first.

    Follows ``superseded_by`` links and records of the same slot. A record with no
    history of its own shows its twin's (the fact written from a turn), so the history
    of the turn ``add`` returned shows what the new statement replaced.
    """
    own = store.history_chain(record.user_id, record.id)
    if len(own) > 1:
        return own
    chain = {record.id: record}
    for twin in store.twins(record):
        chain.update((r.id, r) for r in store.history_chain(record.user_id, twin.id))
    end = datetime.max.replace(tzinfo=UTC)
    return sorted(chain.values(), key=lambda r: (r.created_at, r.event_time, r.valid_to or end))
