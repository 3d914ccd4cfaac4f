"""The write path's unit: new records, their embeddings, queue entries and slot supersedes.

One call of :func:`persist` is one transaction (through :meth:`Engine.unit`): the
records and their vectors are inserted, turns are queued for the next dream, and a
new semantic value of a slot supersedes the older ones by the rule of
:mod:`dreammem.write.supersede`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dreammem.engine.unit import UnitOfWork
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.text.tokenize import tokenize
from dreammem.types import Kind, Layer, MemoryRecord
from dreammem.write.supersede import later_value, superseded

if TYPE_CHECKING:
    from dreammem.engine.core import Engine

__all__ = ["context_texts", "persist"]


def persist(
    engine: Engine,
    records: Sequence[MemoryRecord],
    contexts: Sequence[str],
    *,
    enqueue: Sequence[MemoryRecord],
    supersede: bool = True,
) -> dict[str, MemoryRecord]:
    """Write records with their embeddings, queue entries and supersedes in one unit of work.

    Args:
        engine: The engine to write through.
        records: The new records.
        contexts: Each record's keyword context (raw text; tokenised here).
        enqueue: The records to queue for the next dream.
        supersede: Apply the slot rule; an import passes False to keep the statuses
            it brings (history versions and forgotten records included).

    Returns:
        The records whose status changed on the way (superseded), by id.
    """
    with engine.lock:
        embedder = engine.ensure_embedder([r.content for r in records])
        vectors = embedder.embed_documents([r.content for r in records])
        terms = [" ".join(tokenize(r.content)) for r in records]
        context_terms = [" ".join(tokenize(c)) if c else "" for c in contexts]
        changed: list[MemoryRecord] = []
        with engine.unit() as unit:
            unit.insert(records, vectors, terms=terms, context_terms=context_terms, model=embedder.name)
            unit.store.enqueue(enqueue)
            for record in records if supersede else ():
                if record.slot is not None and record.layer is Layer.SEMANTIC:
                    changed.extend(_supersede_slot(unit, record))
    return {r.id: r for r in changed}


def _supersede_slot(unit: UnitOfWork, newer: MemoryRecord) -> list[MemoryRecord]:
    """Mark older active records of the same slot as superseded by ``newer``.

    A value written late for an earlier time (a replayed or backfilled turn) is
    itself superseded at once by the newest active value of its slot, so a slot
    never has two active values.
    """
    assert newer.slot is not None
    same_slot = [
        r
        for r in unit.store.find(newer.user_id, slot=newer.slot, layers=[Layer.SEMANTIC])
        if r.id != newer.id
    ]
    winner = later_value(newer, same_slot)
    if winner is not None:
        return _mark_superseded(unit, newer, winner)
    return [changed for old in same_slot for changed in _mark_superseded(unit, old, newer)]


def _mark_superseded(unit: UnitOfWork, old: MemoryRecord, newer: MemoryRecord) -> list[MemoryRecord]:
    """Supersede ``old`` and the active turn it was written from (it says the same thing)."""
    turns = [t for t in unit.store.get(old.user_id, list(old.provenance)) if t.kind is Kind.TURN]
    changed = []
    for record in [old, *turns]:
        current = unit.store.get(record.user_id, [record.id])
        if current and current[0].is_active:
            updated = superseded(current[0], newer)
            unit.update([updated])
            changed.append(updated)
    return changed


def context_texts(store: SQLiteRecordStore, records: Sequence[MemoryRecord], window: int) -> list[str]:
    """Each record's keyword context: the previous ``window`` turns of its session, or "".

    Matching a turn's context too (in a second, lower-weighted column) lets a
    question find an answer that only makes sense after its question; the
    embedding stays the turn's own text (measured better on LoCoMo).
    """
    previous: dict[tuple[str, str], list[str]] = {}
    texts: list[str] = []
    for record in records:
        key = (record.user_id, record.session_id or "")
        context: list[str] = []
        if window and record.session_id is not None:
            if key not in previous:
                earlier = store.find(
                    record.user_id,
                    statuses=None,
                    kinds=[Kind.TURN],
                    session_id=record.session_id,
                    until=record.event_time,
                    limit=window,
                )
                previous[key] = [r.content for r in reversed(earlier)]
            context = previous[key][-window:]
        texts.append(" ".join(context))
        if record.kind is Kind.TURN and record.session_id is not None:
            previous.setdefault(key, []).append(record.content)
    return texts
