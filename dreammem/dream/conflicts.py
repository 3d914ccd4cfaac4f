"""Conflicts: a newer value for the same subject supersedes the older one.

A distilled record with a slot (``subject/attribute``) supersedes the active semantic
records of that slot that are not newer than it: they get status ``superseded``,
``superseded_by`` and ``valid_to`` and stay in history. A distilled record that is
older than an active record of its slot is written as already superseded by it, so
the newest value always wins, whatever order dreams run in.
"""

from __future__ import annotations

from dreammem.dream.forget import superseded
from dreammem.dream.plan import WritePlan
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import Kind, Layer, MemoryRecord

__all__ = ["resolve_slot_conflicts", "supersede"]


def supersede(plan: WritePlan, old: MemoryRecord, newer: MemoryRecord) -> None:
    """Plan ``old`` (as stored) to be superseded by ``newer``."""
    plan.change(superseded(plan.current(old), newer), before=old)


def resolve_slot_conflicts(plan: WritePlan, store: SQLiteRecordStore, user_id: str) -> list[tuple[str, str]]:
    """Resolve every planned new semantic record with a slot against the store and each other.

    Returns:
        ``(superseded id, superseding id)`` pairs, in the order decided.
    """
    pairs: list[tuple[str, str]] = []
    slotted = sorted(
        (r for r in plan.inserts if r.slot is not None and r.layer is Layer.SEMANTIC),
        key=lambda r: (r.event_time, r.created_at),
    )
    for candidate in slotted:
        new = plan.current(candidate)
        if not new.is_active:
            continue
        stored = store.find(user_id, slot=new.slot, layers=[Layer.SEMANTIC])
        rivals = [r for r in stored if r.id != new.id and plan.current(r).is_active]
        rivals += [
            r for r in plan.inserts if r.slot == new.slot and r.id != new.id and plan.current(r).is_active
        ]
        newer = [r for r in rivals if r.event_time > new.event_time]
        if newer:
            winner = max(newer, key=lambda r: (r.event_time, r.created_at))
            plan.change(superseded(new, winner))
            pairs.append((new.id, winner.id))
            continue
        for old in rivals:
            supersede(plan, old, new)
            pairs.append((old.id, new.id))
            # The turns the old value was written from say the same outdated thing.
            for turn in store.get(user_id, list(old.provenance)):
                if turn.kind is Kind.TURN and plan.current(turn).is_active:
                    supersede(plan, turn, new)
                    pairs.append((turn.id, new.id))
    return pairs
