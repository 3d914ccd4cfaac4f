"""The write plan of a dream: everything it will change, computed before anything is written.

A dry run stops at the plan; a real dream commits it in one transaction
(:mod:`dreammem.dream.migrate`) and keeps the before-states for undo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dreammem.types import MemoryRecord

__all__ = ["WritePlan"]


@dataclass(slots=True)
class WritePlan:
    """New records, changed records (with their state before) and queue entries to drop."""

    inserts: list[MemoryRecord] = field(default_factory=list)
    updates: dict[str, tuple[MemoryRecord, MemoryRecord]] = field(default_factory=dict)
    dequeue: list[str] = field(default_factory=list)

    def current(self, record: MemoryRecord) -> MemoryRecord:
        """The record as this plan leaves it so far."""
        if record.id in self.updates:
            return self.updates[record.id][1]
        for inserted in self.inserts:
            if inserted.id == record.id:
                return inserted
        return record

    def change(self, after: MemoryRecord, before: MemoryRecord | None = None) -> None:
        """Plan ``after`` as the record's new state (an insert is edited in place)."""
        for n, inserted in enumerate(self.inserts):
            if inserted.id == after.id:
                self.inserts[n] = after
                return
        if after.id in self.updates:
            self.updates[after.id] = (self.updates[after.id][0], after)
            return
        if before is None:
            raise ValueError(f"the state before {after.id} is needed")
        self.updates[after.id] = (before, after)
