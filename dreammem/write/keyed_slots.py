"""The slot namespace of keyed memories (see :mod:`dreammem.keyed`).

A keyed memory's slot is ``"keyed:"`` + the JSON list ``[*path, key]``; the second-level
dream asks :func:`is_keyed` to leave such records be.
"""

from __future__ import annotations

from dreammem.types import MemoryRecord

__all__ = ["KEYED_SLOT_PREFIX", "is_keyed"]

KEYED_SLOT_PREFIX = "keyed:"


def is_keyed(record: MemoryRecord) -> bool:
    """True for a record addressed by a path and key (housekeeping must leave it be)."""
    return record.slot is not None and record.slot.startswith(KEYED_SLOT_PREFIX)
