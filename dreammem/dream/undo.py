"""Undo a dream: put a user's memory back as it was before it.

In one transaction: the records the dream wrote are deleted (with their full-text
rows, vectors and index entries), the records it changed get their earlier state
back, the queue entries it consumed are queued again, a second-level dream's memory
index is restored, and the dream is marked ``undone``. FAISS is rebuilt after.

Dreams are undone newest first. A record changed again after the dream (say,
forgotten by the user) is left as it is and listed in ``skipped``; a restored value
that a later write has replaced stays superseded by it (with the turn it was written
from), so later writes keep winning; and what was written after the dream against a
record it wrote (an ``update``'s earlier text, a value for an earlier time) is resolved
too, never left pointing at a deleted record.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dreammem.dream import journal
from dreammem.engine.writes import supersede_with_turns
from dreammem.erasure import edit_target
from dreammem.errors import ValidationError
from dreammem.types import Kind, Layer, MemoryRecord, Status, utcnow
from dreammem.write.supersede import later_value

if TYPE_CHECKING:
    from dreammem.engine import Engine, UnitOfWork
    from dreammem.stores.base import RecordStore

__all__ = ["UndoResult", "undo_dream"]


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What an undo did.

    Attributes:
        dream_id: The dream undone.
        deleted: Records the dream had written, now deleted.
        restored: Records put back in their state before the dream.
        requeued: Queue entries restored.
        skipped: Records changed since the dream, left as they are.
    """

    dream_id: str
    deleted: tuple[str, ...]
    restored: tuple[str, ...]
    requeued: int
    skipped: tuple[str, ...]


def undo_dream(engine: Engine, dream_id: str, user_id: str, *, now: datetime | None = None) -> UndoResult:
    """Undo one of the user's dreams (see the module docstring).

    Raises:
        NotFoundError: no such dream for this user.
        ValidationError: the dream is already undone, or later dreams must be undone first.
    """
    store = engine.store
    engine.embedder  # noqa: B018 - opens the vector index, rebuilt after the transaction
    with engine.unit() as unit:
        _, undo, status = journal.load_entry(store, dream_id, user_id)
        if status == journal.UNDONE:
            raise ValidationError(f"dream {dream_id} is already undone")
        later = journal.later_dreams(store, dream_id, user_id)
        if later:
            raise ValidationError(f"undo the later dreams first (newest first): {later}")
        unit.rebuild_vectors()
        versions, replaced = _written_since(store, user_id, undo)
        deleted = unit.delete(user_id, [*undo.inserted, *versions])
        unit.update(replaced)
        restored, skipped = _restore(unit, user_id, undo, replaced)
        requeued = store.requeue(user_id, undo.queue)
        journal.mark_undone(store, dream_id, now or utcnow())
    return UndoResult(dream_id, tuple(deleted), tuple(r.id for r in restored), requeued, tuple(skipped))


def _written_since(
    store: RecordStore, user_id: str, undo: journal.UndoData
) -> tuple[list[str], list[MemoryRecord]]:
    """Records written after the dream that a record it wrote supersedes.

    The earlier texts ``update`` kept of a record the dream wrote hold the dream's words:
    they go with it. A value written later for an earlier time was superseded at once by
    the dream's newer value: with that gone it is current again (unless another value of
    its slot wins, decided with the restored records). Neither may be left superseded by
    a record that no longer exists.
    """
    inserted = set(undo.inserted)
    known = inserted | {str(d["id"]) for d in undo.before}
    found = [r.id for r in store.superseded_by_any(user_id, undo.inserted) if r.id not in known]
    pointing = store.get(user_id, found, for_update=True)  # no other writer changes them before the commit
    versions = [r.id for r in pointing if edit_target(r) in inserted]
    replaced = [
        dataclasses.replace(r, status=Status.ACTIVE, superseded_by=None, valid_to=None)
        for r in pointing
        if edit_target(r) not in inserted
    ]
    return versions, replaced


def _restore(
    unit: UnitOfWork, user_id: str, undo: journal.UndoData, replaced: list[MemoryRecord]
) -> tuple[list[MemoryRecord], list[str]]:
    store = unit.store
    befores = [MemoryRecord.from_dict(d) for d in undo.before]
    current = {r.id: r for r in store.get(user_id, [b.id for b in befores], for_update=True)}
    restored: list[MemoryRecord] = []
    skipped: list[str] = []
    for before in befores:
        now_stored = current.get(before.id)
        if now_stored is None or now_stored.status.value != undo.after_status.get(before.id):
            skipped.append(before.id)
            continue
        record = dataclasses.replace(
            before, last_accessed_at=now_stored.last_accessed_at, access_count=now_stored.access_count
        )
        unit.update([record], read=[now_stored])
        restored.append(record)
    restored += replaced
    # A value restored here may have been replaced by a write after the dream: that write
    # wins, over the value and over the turn it was written from (a restored turn left
    # active would recall the old value as current).
    final = {r.id: r for r in restored}
    for record in restored:
        winner = _later_write(store, user_id, final[record.id])
        if winner is not None:
            final.update(
                (r.id, r) for r in supersede_with_turns(unit, final[record.id], winner) if r.id in final
            )
    return list(final.values()), skipped


def _later_write(store: RecordStore, user_id: str, record: MemoryRecord) -> MemoryRecord | None:
    """The newer value of a slot that replaced this restored record (or its semantic twin), if any."""
    if not record.is_active:
        return None
    if record.layer is Layer.SEMANTIC and record.slot is not None:
        slot_of = record
    elif record.kind is Kind.TURN:
        twins = [r for r in store.derived_from(user_id, [record.id]) if r.slot is not None]
        replaced = [r for r in twins if r.status is Status.SUPERSEDED and r.layer is Layer.SEMANTIC]
        if not replaced:
            return None
        slot_of = replaced[0]
    else:
        return None
    assert slot_of.slot is not None
    return later_value(slot_of, store.find(user_id, slot=slot_of.slot, layers=[Layer.SEMANTIC]))
