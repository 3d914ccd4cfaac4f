"""Write-time update resolution against the store, one batch at a time.

:func:`dreammem.write.resolve.resolve_updates` decides; this module feeds it the
stored neighbours of a write's statements (:func:`stored_neighbours`) and writes its
decisions back (:func:`apply_outcomes`). Both read each touched record once per
write instead of once per statement: the per-record look-ups were most of the write
path's time beside the encoder (session 14, ``docs/BENCHMARKS.md``). The results are
those of deciding one statement at a time: the decisions are applied in order, each on
the record as the earlier ones left it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from dreammem.engine.unit import UnitOfWork
from dreammem.stores.base import RecordQuery, RecordStore, VectorIndex
from dreammem.types import Kind, MemoryRecord
from dreammem.write.echoes import echo_outcomes
from dreammem.write.relations import note_possibly_outdates
from dreammem.write.resolve import Candidate, Outcome, applied
from dreammem.write.updates import Decision

__all__ = ["apply_outcomes", "mark_echoes", "stored_neighbours"]


def stored_neighbours(
    store: RecordStore,
    index: VectorIndex,
    records: Sequence[MemoryRecord],
    vectors: npt.NDArray[np.float32],
    k: int,
    *,
    written: range = range(0),
) -> list[list[Candidate]]:
    """For each record, its user's ``k`` most similar stored records with their cosines, best first.

    One vector search per user for all its records, then one read of every hit per user
    (a hit whose row is gone, or belongs to another user, is left out, as a per-record
    read leaves it). ``written``: the row ids of the write in progress, never among the
    hits (:meth:`~dreammem.stores.base.VectorIndex.search_stored`).
    """
    rows_of: dict[str, list[int]] = {}
    for n, record in enumerate(records):
        rows_of.setdefault(record.user_id, []).append(n)
    hits: list[list[tuple[int, float]]] = [[] for _ in records]
    for user, rows in rows_of.items():
        for n, found in zip(rows, index.search_stored(user, vectors[rows], k, written=written), strict=True):
            hits[n] = found
    wanted: dict[str, set[int]] = {}
    for record, found in zip(records, hits, strict=True):
        wanted.setdefault(record.user_id, set()).update(rowid for rowid, _ in found)
    stored = {user: store.get_by_rowids(user, sorted(ids)) for user, ids in wanted.items()}
    return [
        [Candidate(stored[r.user_id][rowid], score) for rowid, score in found if rowid in stored[r.user_id]]
        for r, found in zip(records, hits, strict=True)
    ]


def apply_outcomes(unit: UnitOfWork, outcomes: Sequence[Outcome], *, now: datetime) -> list[MemoryRecord]:
    """Inside a unit of work: apply update decisions in order; returns every version written.

    Each decision applies to its older record and that record's twins, where still active
    (an earlier decision of the same write may have superseded them); a newer record then
    notes the older ones it marked possibly outdated. The touched records are read once,
    locked for update, and written once, as the last decision left them.
    """
    if not outcomes:
        return []
    return _apply(unit, [*outcomes, *_echoes(unit.store, outcomes)], now=now)


def _apply(unit: UnitOfWork, outcomes: Sequence[Outcome], *, now: datetime) -> list[MemoryRecord]:
    """:func:`apply_outcomes` without looking for echoes: these decisions, and no others."""
    if not outcomes:
        return []
    store = unit.store
    twins = store.twins_many(list({o.old.id: o.old for o in outcomes}.values()))
    targets = [[o.old, *twins[o.old.id]] for o in outcomes]
    wanted: dict[str, dict[str, None]] = {}
    for outcome, group in zip(outcomes, targets, strict=True):
        for target in group:
            wanted.setdefault(target.user_id, {})[target.id] = None
        if not outcome.decision.replaces:
            wanted.setdefault(outcome.new.user_id, {})[outcome.new.id] = None
    read = {r.id: r for user, ids in wanted.items() for r in store.get(user, list(ids), for_update=True)}
    state = dict(read)
    written: dict[str, None] = {}
    changed: list[MemoryRecord] = []
    marked: dict[str, list[str]] = {}  # newer id -> the older ids it marked
    for outcome, group in zip(outcomes, targets, strict=True):
        for target in group:
            current = state.get(target.id)
            if current is None or not current.is_active:
                continue
            state[target.id] = updated = applied(outcome, current, now=now)
            written[target.id] = None
            changed.append(updated)
            if not outcome.decision.replaces:
                marked.setdefault(outcome.new.id, []).append(target.id)
    # The newer record notes what it marked, for a later dream to find the older one (dream.linked).
    for newer_id, older in marked.items():
        if (newer := state.get(newer_id)) is not None:
            state[newer_id] = noted = note_possibly_outdates(newer, older)
            written[newer_id] = None
            changed.append(noted)
    unit.update([state[i] for i in written], read=[read[i] for i in written])
    return changed


def mark_echoes(
    unit: UnitOfWork,
    replaced: Sequence[MemoryRecord],
    newer: MemoryRecord,
    decision: Decision,
    *,
    now: datetime,
) -> list[MemoryRecord]:
    """Mark the assistant's echoes of records a slot change replaced as possibly outdated by ``newer``.

    The slot path supersedes without :func:`apply_outcomes`; its echoes are found and marked
    the same way (:func:`~dreammem.write.echoes.echo_outcomes`). Returns the records changed.
    """
    return _apply(unit, _echoes(unit.store, [Outcome(old, newer, decision) for old in replaced]), now=now)


_REPLIES = 3
"""Turns read after a replaced statement to find the assistant's echo of it."""


def _echoes(store: RecordStore, outcomes: Sequence[Outcome]) -> list[Outcome]:
    """The assistant's echoes of the older statements these decisions replace or mark (one read for all)."""
    asking = [o for o in outcomes if o.old.session_id is not None]
    after = store.find_many(
        [
            RecordQuery(
                o.old.user_id,
                kinds=[Kind.TURN],
                session_id=o.old.session_id,
                since=o.old.event_time,
                newest_first=False,
                limit=_REPLIES + 1,
            )
            for o in asking
        ]
    )
    out: list[Outcome] = []
    for outcome, turns in zip(asking, after, strict=True):
        out += echo_outcomes(outcome, turns)
    return out
