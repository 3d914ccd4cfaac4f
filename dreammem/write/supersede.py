"""The supersede rule: the newest value of a slot wins, and it is written in one place.

A record is *later* than another when its event happened later (``event_time``);
among several later values the newest one wins, ties broken by the time it was
written (``created_at``). The write path, the dream's slot conflicts and undo all
decide with these functions, so the three agree whatever order writes arrive in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from dreammem.types import MemoryRecord, Status

__all__ = ["later_value", "newest", "superseded"]


def _order(record: MemoryRecord) -> tuple[datetime, datetime]:
    return (record.event_time, record.created_at)


def newest(records: Iterable[MemoryRecord]) -> MemoryRecord:
    """The record that wins among values of one slot: latest event, then latest write.

    Raises:
        ValueError: no records.
    """
    return max(records, key=_order)


def later_value(record: MemoryRecord, rivals: Iterable[MemoryRecord]) -> MemoryRecord | None:
    """The newest rival that is later than ``record`` by :func:`newest`'s order (it supersedes ``record``).

    Returns:
        That rival, or None when ``record`` is the newest value (an exact tie keeps ``record``).
    """
    later = [r for r in rivals if r.id != record.id and _order(r) > _order(record)]
    return newest(later) if later else None


def superseded(record: MemoryRecord, newer: MemoryRecord) -> MemoryRecord:
    """The record superseded by ``newer``: it stopped being current when ``newer`` happened."""
    return dataclasses.replace(
        record, status=Status.SUPERSEDED, superseded_by=newer.id, valid_to=newer.event_time
    )
