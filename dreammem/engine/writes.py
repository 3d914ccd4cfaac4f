"""The write path's unit: new records, their embeddings, queue entries and slot supersedes.

:func:`write_new` runs inside one unit of work (:meth:`dreammem.engine.Engine.unit`): the
records and their vectors are inserted, turns are queued for the next dream, and a
new semantic value of a slot supersedes the older ones by the rule of
:mod:`dreammem.write.supersede`; beyond slots, :mod:`dreammem.write.resolve` compares
each new user statement with the user's older ones about the same subject.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from dreammem.engine.resolution import apply_outcomes, mark_echoes, stored_neighbours
from dreammem.engine.unit import UnitOfWork
from dreammem.stores.base import RecordQuery, RecordStore, VectorIndex
from dreammem.text.tokenize import tokenize
from dreammem.types import Kind, Layer, MemoryRecord, utcnow
from dreammem.write.relations import DECISION_KEY, mark_possibly_outdated
from dreammem.write.resolve import SAYS_MORE, Candidate, analyse_record, other_fact, resolve_updates
from dreammem.write.supersede import later_value, superseded
from dreammem.write.updates import Action, Decision

__all__ = ["context_texts", "supersede_with_turns", "write_new"]


def write_new(
    unit: UnitOfWork,
    records: Sequence[MemoryRecord],
    vectors: npt.NDArray[np.float32],
    contexts: Sequence[str],
    *,
    enqueue: Sequence[MemoryRecord],
    model: str,
    supersede: bool = True,
    resolve_with: VectorIndex | None = None,
) -> dict[str, MemoryRecord]:
    """Inside a unit of work: insert new records, queue turns, supersede older slot values.

    Args:
        unit: The unit of work to write through.
        records: The new records.
        vectors: Their embeddings (rows in order).
        contexts: Each record's keyword context (raw text; tokenised here).
        enqueue: The records to queue for the next dream.
        model: The embedding model's name.
        supersede: Apply the slot rule; an import passes False to keep the statuses
            it brings (history versions and forgotten records included).
        resolve_with: The vector index to find older statements a new one updates
            (:mod:`dreammem.write.resolve`); None skips that step.

    Returns:
        The records changed on the way (superseded, marked possibly outdated, or noting
        the older records they marked), by id, as they are after the write.
    """
    words: dict[str, str] = {"": ""}  # a turn and its semantic twin share their text: tokenise it once
    for text in (*(r.content for r in records), *contexts):
        if text not in words:
            words[text] = " ".join(tokenize(text))
    terms = [words[r.content] for r in records]
    context_terms = [words[c] for c in contexts]
    rowids = unit.insert(records, vectors, terms=terms, context_terms=context_terms, model=model)
    unit.store.enqueue(enqueue)
    changed: list[MemoryRecord] = []
    values = _SlotValues(unit.store)
    for record in records if supersede else ():
        if record.slot is not None and record.layer is Layer.SEMANTIC:
            done = _supersede_slot(unit, record, values.others(record))
            values.forget_inactive(done)
            changed.extend(done)
    if resolve_with is not None:
        written = _block(rowids)
        changed.extend(_resolve_statements(unit, resolve_with, records, vectors, model, written))
    return {r.id: r for r in changed}


class _SlotValues:
    """The active semantic records of each slot a write touches: read once, kept as the write supersedes.

    A write of n values of one slot used to read the slot's active records n times (n²/2
    rows). Only superseding changes which are active (a mark does not), and the slot rule
    reads their times, ids and texts, which no write changes.
    """

    def __init__(self, store: RecordStore) -> None:
        self._store = store
        self._active: dict[tuple[str, str], list[MemoryRecord]] = {}

    def others(self, record: MemoryRecord) -> list[MemoryRecord]:
        """The active records of ``record``'s slot but itself, in :meth:`RecordStore.find`'s order."""
        assert record.slot is not None
        key = (record.user_id, record.slot)
        if key not in self._active:
            self._active[key] = self._store.find(record.user_id, slot=record.slot, layers=[Layer.SEMANTIC])
        return [r for r in self._active[key] if r.id != record.id]

    def forget_inactive(self, changed: Sequence[MemoryRecord]) -> None:
        """Drop the records these changes left inactive."""
        gone = {r.id for r in changed if not r.is_active}
        if gone:
            self._active = {k: [r for r in v if r.id not in gone] for k, v in self._active.items()}


def _supersede_slot(
    unit: UnitOfWork, newer: MemoryRecord, same_slot: Sequence[MemoryRecord]
) -> list[MemoryRecord]:
    """Mark older active records of the same slot (``same_slot``) as superseded by ``newer``.

    A value written late for an earlier time (a replayed or backfilled turn) is
    itself superseded at once by the newest active value of its slot, so a slot
    never has two active values.
    """
    assert newer.slot is not None
    winner = later_value(newer, same_slot)
    if winner is not None:
        return supersede_with_turns(unit, newer, winner)
    statement = analyse_record(newer)
    changed: list[MemoryRecord] = []
    replaced: list[MemoryRecord] = []
    reason = f"a newer value of {newer.slot}"
    for old in same_slot:
        other = other_fact(statement, old.content)
        if other is None:
            why = {"action": "supersede", "by": newer.id, "rule": "slot", "at": utcnow().isoformat()}
            why["reason"] = reason
            changed.extend(supersede_with_turns(unit, old, newer, decision=why))
            replaced.append(old)
            continue
        # The older value's record says something else too ("I work at Globex. I live in Leeds."): mark it.
        note = {"rule": SAYS_MORE, "reason": f"a newer value of {newer.slot}; it also says {other!r}"}
        if current := _with_turns(unit, old):
            unit.update([mark_possibly_outdated(r, newer.id, note) for r in current], read=current)
    if replaced:  # the assistant's echoes of the replaced value are as outdated as it is
        decision = Decision(Action.SUPERSEDE, "slot", reason)
        changed.extend(mark_echoes(unit, replaced, newer, decision, now=utcnow()))
    return changed


def _resolve_statements(
    unit: UnitOfWork,
    index: VectorIndex,
    records: Sequence[MemoryRecord],
    vectors: npt.NDArray[np.float32],
    model: str,
    written: range,
) -> list[MemoryRecord]:
    """Beyond slots: supersede (or mark possibly outdated) the older statements new ones change.

    ``written``: the row ids of the new records, left out of the searches (on Neo4j the
    search runs in the write's transaction: its own records would crowd the older ones out,
    and :func:`dreammem.write.resolve.resolve_updates` would ask again for more).
    """

    def neighbours(
        asking: Sequence[MemoryRecord], rows: npt.NDArray[np.float32], k: int
    ) -> list[list[Candidate]]:
        return stored_neighbours(unit.store, index, asking, rows, k, written=written)

    return apply_outcomes(unit, resolve_updates(records, vectors, neighbours, model=model), now=utcnow())


def _block(rowids: Sequence[int]) -> range:
    """The row ids of one insert as a range (consecutive from the store's counter); empty if they are not."""
    if not rowids:
        return range(0)
    block = range(min(rowids), max(rowids) + 1)
    return block if len(block) == len(rowids) else range(0)


def _with_turns(unit: UnitOfWork, old: MemoryRecord) -> list[MemoryRecord]:
    """The stored active versions of ``old`` and of the turn it was written from (it says the same).

    One read of ``old`` and its provenance, for update: a forget elsewhere either lands first
    (and the record is left alone) or waits for this write, never overwritten by it.
    """
    found = {r.id: r for r in unit.store.get(old.user_id, [old.id, *old.provenance], for_update=True)}
    turns = [p for p in old.provenance if p in found and found[p].kind is Kind.TURN]
    return [found[i] for i in [old.id, *turns] if i in found and found[i].is_active]


def supersede_with_turns(
    unit: UnitOfWork, old: MemoryRecord, newer: MemoryRecord, *, decision: Mapping[str, str] | None = None
) -> list[MemoryRecord]:
    """Supersede ``old`` and the active turn it was written from (it says the same thing).

    ``decision``: why, kept in each record's system notes (``update_decision``) for ``history()``.

    Returns:
        The records changed, as now stored (the write path and undo report them).
    """
    current = _with_turns(unit, old)
    changed = [superseded(record, newer) for record in current]
    if decision is not None:
        changed = [replace(r, system={**r.system, DECISION_KEY: dict(decision)}) for r in changed]
    if changed:
        unit.update(changed, read=current)  # one statement for the record and its turn
    return changed


def context_texts(store: RecordStore, records: Sequence[MemoryRecord], window: int) -> list[str]:
    """Each record's keyword context: the previous ``window`` turns of its session, or "".

    Matching a turn's context too (in a second, lower-weighted column) lets a
    question find an answer that only makes sense after its question; the
    embedding stays the turn's own text (measured better on LoCoMo).
    """
    firsts: dict[tuple[str, str], MemoryRecord] = {}  # each session's first record: its earlier turns
    for record in records if window else ():
        if record.session_id is not None:
            firsts.setdefault((record.user_id, record.session_id), record)
    asks = [
        RecordQuery(
            r.user_id,
            statuses=None,
            kinds=[Kind.TURN],
            session_id=r.session_id,
            until=r.event_time,
            limit=window,
        )
        for r in firsts.values()
    ]
    previous = {
        key: [r.content for r in reversed(earlier)]
        for key, earlier in zip(firsts, store.find_many(asks), strict=True)
    }
    texts: list[str] = []
    for record in records:
        key = (record.user_id, record.session_id or "")
        context = previous[key][-window:] if window and record.session_id is not None else []
        texts.append(" ".join(context))
        if record.kind is Kind.TURN and record.session_id is not None:
            previous.setdefault(key, []).append(record.content)
    return texts
