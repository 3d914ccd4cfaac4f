"""What an erasure takes with it, and what it gives back.

Purging a memory erases what carries its words: the memory, its twin (a turn and the
fact written from it at once), its other versions (earlier texts kept by ``update``,
older and newer values of the same slot) and every memory derived from any of them
(a dream's summary or pattern lists its sources in ``provenance``).

A dream archives or supersedes the sources a summary or pattern stands for. When
that summary is erased because one source is, the other sources would be left with
nothing active to stand for them: they are restored, as undoing the dream would. So is
an older statement that an erased one had replaced at write time ("I switched to oat
milk" erased: "I take regular milk" is current again), instead of staying superseded
by a record that no longer exists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Final

from dreammem.stores.base import RecordStore
from dreammem.types import MemoryRecord, Status

__all__ = ["EDITED", "edit_target", "erasure_set", "restorable", "restored_by_erasure"]

EDITED: Final = "edited"
"""System key of an earlier text kept by ``update``: ``{"into": id, "at": iso time}``."""


def edit_target(record: MemoryRecord) -> str | None:
    """The id of the memory this record is an earlier text of (None: not one)."""
    note: object = record.system.get(EDITED)
    target = note.get("into") if isinstance(note, dict) else None
    return target if isinstance(target, str) else None


def erasure_set(store: RecordStore, record: MemoryRecord) -> list[MemoryRecord]:
    """The record and everything that carries its words (see the module docstring)."""
    found = {record.id: record}
    frontier = [record]
    while frontier:
        reached: list[MemoryRecord] = []
        for current in frontier:
            reached.extend(store.twins(current))
            reached.extend(
                r
                for r in store.history_chain(current.user_id, current.id)
                if (current.slot is not None and r.slot == current.slot)
                or edit_target(r) == current.id
                or edit_target(current) == r.id
            )
        reached.extend(store.derived_from(record.user_id, [r.id for r in frontier]))
        frontier = list({r.id: r for r in reached if r.id not in found}.values())
        found.update((r.id, r) for r in frontier)
    return list(found.values())


def restorable(sources: Collection[MemoryRecord], purged: Collection[str]) -> list[MemoryRecord]:
    """Sources a purged record had archived or superseded, made active again."""
    out: list[MemoryRecord] = []
    for record in sources:
        if record.id in purged:
            continue
        note: object = record.system.get("archived")
        by = note.get("by") if isinstance(note, dict) else None
        if record.status is Status.ARCHIVED and by in purged:
            system = record.system.copy()
            system.pop("archived", None)
            out.append(dataclasses.replace(record, status=Status.ACTIVE, system=system))
        elif record.status is Status.SUPERSEDED and record.superseded_by in purged:
            out.append(dataclasses.replace(record, status=Status.ACTIVE, superseded_by=None, valid_to=None))
    return out


def restored_by_erasure(
    store: RecordStore, user_id: str, doomed: Collection[MemoryRecord]
) -> list[MemoryRecord]:
    """What erasing ``doomed`` makes active again: the sources and older statements it replaced."""
    ids = [r.id for r in doomed]
    sources = store.get(user_id, sorted({p for r in doomed for p in r.provenance}))
    replaced = store.superseded_by_any(user_id, ids)
    return restorable({r.id: r for r in [*sources, *replaced]}.values(), set(ids))
