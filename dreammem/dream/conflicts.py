"""Conflicts: a newer value for the same subject supersedes the older one.

A distilled record with a slot (``subject/attribute``) supersedes the active semantic
records of that slot that are not newer than it: they get status ``superseded``,
``superseded_by`` and ``valid_to`` and stay in history. A distilled record that is
older than an active record of its slot is written as already superseded by it, so
the newest value always wins, whatever order dreams run in.

With an LLM, new records without a slot (patterns, kept statements) are also checked
against the most similar older active memories (by vector, see
:mod:`dreammem.dream.adjudicate`), together with the write path's unsure pairs; those
the LLM says they contradict are superseded the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from dreammem.dream.adjudicate import Similar, llm_decided, unmarked, unsure_pairs, with_decision
from dreammem.dream.context import DreamContext
from dreammem.dream.llm_calls import StructuredLLM, build_prompt
from dreammem.dream.plan import WritePlan
from dreammem.errors import LLMError
from dreammem.stores.base import RecordStore
from dreammem.types import Kind, Layer, MemoryRecord
from dreammem.write.supersede import later_value, superseded

__all__ = ["llm_conflicts", "resolve_slot_conflicts", "supersede"]


def supersede(plan: WritePlan, old: MemoryRecord, newer: MemoryRecord) -> None:
    """Plan ``old`` (as stored) to be superseded by ``newer``."""
    plan.change(superseded(plan.current(old), newer), before=old)


def resolve_slot_conflicts(plan: WritePlan, store: RecordStore, user_id: str) -> list[tuple[str, str]]:
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
        winner = later_value(new, rivals)
        if winner is not None:
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


class _Conflict(BaseModel):
    new: str
    old: str


class _ConflictAnswer(BaseModel):
    conflicts: list[_Conflict]


_INSTRUCTIONS = (
    "Each item pairs a NEW memory of this user with older memories. List the older memories "
    "that the new one contradicts or replaces (the same subject with a different value). "
    "Do not list memories that are merely related. An empty list is a fine answer."
)
_MAX_NEW = 20
_MAX_OLD = 5


def llm_conflicts(
    plan: WritePlan,
    store: RecordStore,
    user_id: str,
    new_records: Sequence[MemoryRecord],
    llm: StructuredLLM,
    context: DreamContext,
    similar: Similar | None = None,
) -> tuple[list[tuple[str, str]], list[str]]:
    """Ask the LLM which older active memories new records contradict; supersede them.

    Candidates for each new record are the user's most similar older active memories
    (semantic, or important episodic ones; at most five) by vector similarity
    (``similar``), never by shared words; the write path's unsure pairs (an older
    record marked possibly outdated by a newer one) are asked as well. One call covers
    a dream. Only older records are superseded; unknown ids are ignored; an unsure
    pair the LLM does not confirm loses its mark.

    Returns:
        ``(superseded id, superseding id)`` pairs, and notes on anything that degraded.
    """
    pool = {
        r.id: r
        for r in store.find(user_id)
        if plan.current(r).is_active
        and (r.layer is Layer.SEMANTIC or (r.layer is Layer.EPISODIC and r.importance >= 4))
    }
    fresh = list(new_records[:_MAX_NEW])
    neighbours = similar(fresh) if similar is not None else [[] for _ in fresh]
    grouped: dict[str, tuple[MemoryRecord, list[MemoryRecord]]] = {}
    for new, near in zip(fresh, neighbours, strict=True):
        olds = [
            pool[r.id]
            for r, _ in near
            if r.id in pool and r.id != new.id and r.content != new.content and r.event_time < new.event_time
        ]
        if olds:
            grouped[new.id] = (new, olds[:_MAX_OLD])
    unsure = unsure_pairs(store, user_id, plan, list(pool.values()))
    for newer, older, _ in unsure:
        group = grouped.setdefault(newer.id, (newer, []))
        if older.id not in {o.id for o in group[1]}:
            group[1].append(older)
    items = list(grouped.values())[:_MAX_NEW]
    if not items or llm.exhausted:
        return [], []
    ids: dict[str, tuple[MemoryRecord, dict[str, MemoryRecord]]] = {}
    payload: list[dict[str, object]] = []
    for n, (new, olds) in enumerate(items, 1):
        local = {f"o{n}.{k}": r for k, r in enumerate(olds, 1)}
        ids[f"n{n}"] = (new, local)
        payload.append(
            {
                "id": f"n{n}",
                "new": new.content,
                "old": [{"id": i, "text": r.content} for i, r in local.items()],
            }
        )
    prompt = build_prompt(
        "conflicts",
        _INSTRUCTIONS,
        context.render(),
        {"items": payload},
        '{"conflicts": [{"new": "n1", "old": "o1.2"}]}',
    )
    try:
        answer = llm.ask(prompt, _ConflictAnswer, label="conflicts")
    except LLMError as exc:
        return [], [f"conflicts: {exc}; only slot conflicts resolved"]
    pairs: list[tuple[str, str]] = []
    unknown = 0
    for conflict in answer.conflicts:
        entry = ids.get(conflict.new)
        old = entry[1].get(conflict.old) if entry is not None else None
        if entry is None or old is None:
            unknown += 1
            continue
        new = plan.current(entry[0])
        if new.is_active and plan.current(old).is_active:
            supersede(plan, old, new)
            plan.change(with_decision(plan.current(old), llm_decided(old, new)))
            pairs.append((old.id, new.id))
    unmarked(plan, unsure)
    notes = [f"conflicts: {unknown} unknown ids ignored"] if unknown else []
    return pairs, notes
