"""Forget by archiving: out of recall, kept for audit, never destroyed.

An archived record keeps its content; its system notes say why, when and by which
dream, and which record (if any) now carries what it said.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from dreammem.types import MemoryRecord, Status

__all__ = ["archived", "expired"]


def archived(
    record: MemoryRecord, *, reason: str, dream_id: str, now: datetime, by: str | None = None
) -> MemoryRecord:
    """The record archived: status ``archived``, with why, when and by what in its system notes."""
    note: dict[str, str] = {"reason": reason, "dream_id": dream_id, "at": now.isoformat()}
    if by is not None:
        note["by"] = by
    return dataclasses.replace(record, status=Status.ARCHIVED, system={**record.system, "archived": note})


def expired(records: Iterable[MemoryRecord], now: datetime) -> list[MemoryRecord]:
    """Active records whose ``metadata["expires_at"]`` (ISO time) has passed."""
    out: list[MemoryRecord] = []
    for record in records:
        value = record.metadata.get("expires_at")
        if not record.is_active or not isinstance(value, str):
            continue
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=now.tzinfo)
        if when <= now:
            out.append(record)
    return out
