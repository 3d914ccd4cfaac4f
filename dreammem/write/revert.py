"""Reverting a write-time update decision: the superseded statement is current again.

The write path supersedes an older statement with its decision in the record's system
notes (``update_decision``); :func:`reverted` gives the record back its active state and
keeps the decision, under ``update_reverted``, for the audit trail.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Final

from dreammem.errors import ValidationError
from dreammem.types import MemoryRecord, Status
from dreammem.write.relations import DECISION_KEY

__all__ = ["REVERTED_KEY", "reverted"]

REVERTED_KEY: Final = "update_reverted"
"""System key: the decision that was reverted, with when."""


def reverted(record: MemoryRecord, *, now: datetime) -> MemoryRecord:
    """``record`` active again, its update decision kept under ``update_reverted``.

    A record its slot superseded (a newer value of the same ``subject/attribute``) is not
    reverted: both would be active in one slot. ``update`` the newer value instead.

    Raises:
        ValidationError: the record was not superseded by a write-time update decision, or
            was superseded by its slot.
    """
    note: object = record.system.get(DECISION_KEY)
    if record.status is not Status.SUPERSEDED or not isinstance(note, dict):
        raise ValidationError("only a record superseded by an update decision can be reverted")
    if note.get("rule") == "slot":
        raise ValidationError("a newer value of the same slot replaced it: update that value instead")
    system = record.system.copy()
    system.pop(DECISION_KEY, None)
    system[REVERTED_KEY] = {**note, "reverted_at": now.isoformat()}
    return dataclasses.replace(record, status=Status.ACTIVE, superseded_by=None, valid_to=None, system=system)
