"""What the dream's LLM is asked to adjudicate: similar older memories, and the write path's unsure pairs.

Candidates for "does this new memory replace that older one?" come from vector
similarity (the user's nearest active memories), not from shared words: "call me
instead of emailing" and "for updates I prefer email" share no content word. The
write path's unsure decisions (an older record marked ``possibly_outdated_by`` a
newer one) are put to the LLM too; what it confirms is superseded, what it does not
loses the mark. Without an LLM nothing here runs and the marks stay for recall.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from dreammem.dream.plan import WritePlan
from dreammem.stores.base import RecordStore, VectorIndex
from dreammem.types import MemoryRecord
from dreammem.write.relations import DECISION_KEY, possibly_outdated_by, unmark_possibly_outdated

__all__ = ["Similar", "llm_decided", "similar_records", "unmarked", "unsure_pairs", "with_decision"]

Similar = Callable[[Sequence[MemoryRecord]], list[list[tuple[MemoryRecord, float]]]]
"""``records -> for each, the user's most similar active records with their cosine``."""

_K = 8


def similar_records(
    store: RecordStore,
    index: VectorIndex,
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
) -> Similar:
    """A :data:`Similar` over one store's vector index (records of the asking user only)."""

    def similar(records: Sequence[MemoryRecord]) -> list[list[tuple[MemoryRecord, float]]]:
        if not records:
            return []
        vectors = embed([r.content for r in records])
        out: list[list[tuple[MemoryRecord, float]]] = []
        for record, vector in zip(records, vectors, strict=True):
            hits = index.search(record.user_id, vector, _K)
            found = store.get_by_rowids(record.user_id, [rowid for rowid, _ in hits])
            out.append([(found[rowid], score) for rowid, score in hits if rowid in found])
        return out

    return similar


def unsure_pairs(
    store: RecordStore, user_id: str, plan: WritePlan, pool: Sequence[MemoryRecord]
) -> list[tuple[MemoryRecord, MemoryRecord, str]]:
    """``(newer, older, marked id)`` for each active older record marked possibly outdated.

    A newer turn this dream archives into a summary or a semantic record is followed to
    that record (``system["archived"]["by"]``), which now says what it said.
    """
    pairs: list[tuple[MemoryRecord, MemoryRecord, str]] = []
    for old in pool:
        ids = possibly_outdated_by(plan.current(old))
        for newer in store.get(user_id, list(ids)) if ids else []:
            carrier = _follow(store, user_id, plan, newer)
            if carrier is not None and carrier.id != old.id:
                pairs.append((carrier, old, newer.id))
    return pairs


def _follow(store: RecordStore, user_id: str, plan: WritePlan, record: MemoryRecord) -> MemoryRecord | None:
    """The active record that carries what ``record`` said (itself while active)."""
    inserted = {r.id: r for r in plan.inserts}
    current = plan.current(record)
    for _ in range(3):
        if current.is_active:
            return current
        note: object = current.system.get("archived")
        by = note.get("by") if isinstance(note, dict) else None
        if not isinstance(by, str):
            return None
        found = inserted.get(by) or next(iter(store.get(user_id, [by])), None)
        if found is None:
            return None
        current = plan.current(found)
    return current if current.is_active else None


def llm_decided(old: MemoryRecord, new: MemoryRecord) -> dict[str, str]:
    """The ``update_decision`` note of a supersede the dream's LLM decided."""
    return {
        "action": "supersede",
        "by": new.id,
        "rule": "llm",
        "reason": "the dream's LLM judged that the newer memory replaces this one",
        "at": (new.event_time if new.event_time > old.event_time else old.event_time).isoformat(),
    }


def unmarked(plan: WritePlan, pairs: Sequence[tuple[MemoryRecord, MemoryRecord, str]]) -> None:
    """Plan the marks of the unsure pairs the LLM did not confirm to be removed."""
    for _, old, marked in pairs:
        current = plan.current(old)
        if current.is_active and marked in possibly_outdated_by(current):
            plan.change(unmark_possibly_outdated(current, [marked]), before=old)


def with_decision(record: MemoryRecord, note: dict[str, str]) -> MemoryRecord:
    """``record`` with its ``update_decision`` note."""
    return dataclasses.replace(record, system={**record.system, DECISION_KEY: note})
