"""Update resolution a write at a time gives what resolving one statement at a time gave.

:mod:`dreammem.engine.resolution` reads the stored neighbours of a whole write at once and
applies its decisions with one read and one write per touched record; the references
here are the per-record code it replaced.
"""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.engine.resolution import apply_outcomes, stored_neighbours
from dreammem.engine.unit import UnitOfWork
from dreammem.stores.base import RecordStore
from dreammem.text.tokenize import tokenize
from dreammem.types import Kind, Layer, MemoryRecord, Role, Source, Status
from dreammem.write.relations import note_possibly_outdates
from dreammem.write.resolve import Candidate, Outcome, applied
from dreammem.write.updates import Action, Decision

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
SUPERSEDE = Decision(Action.SUPERSEDE, "changed_value", "a newer value", 2)
UNSURE = Decision(Action.UNSURE, "maybe", "perhaps a newer value", 1)


def _turn(user: str, text: str, minutes: int) -> MemoryRecord:
    when = T0 + timedelta(minutes=minutes)
    return MemoryRecord(user_id=user, content=text, role=Role.USER, created_at=when, event_time=when)


def _semantic_twin(turn: MemoryRecord) -> MemoryRecord:
    return dataclasses.replace(
        _turn(turn.user_id, turn.content, 0),
        layer=Layer.SEMANTIC,
        kind=Kind.PREFERENCE,
        source=Source.USER_EXPLICIT,
        event_time=turn.event_time,
        provenance=(turn.id,),
        system={"from_turn": turn.id},
    )


def _insert(memory: DreamMemory, records: list[MemoryRecord]) -> None:
    embedder = memory.embedder
    with memory.engine.unit() as unit:
        unit.insert(
            records,
            embedder.embed_documents([r.content for r in records]),
            terms=[" ".join(tokenize(r.content)) for r in records],
            model=embedder.name,
        )


def _one_at_a_time(unit: UnitOfWork, outcomes: list[Outcome], now: datetime) -> list[MemoryRecord]:
    """The per-record application the batched one replaced (session 13's write path)."""
    changed: list[MemoryRecord] = []
    marked: dict[tuple[str, str], list[str]] = {}
    for outcome in outcomes:
        for target in [outcome.old, *unit.store.twins(outcome.old)]:
            current = unit.store.get(target.user_id, [target.id], for_update=True)
            if current and current[0].is_active:
                updated = applied(outcome, current[0], now=now)
                unit.update([updated], read=current)
                changed.append(updated)
                if not outcome.decision.replaces:
                    marked.setdefault((outcome.new.user_id, outcome.new.id), []).append(target.id)
    for (user, newer_id), older in marked.items():
        newer = unit.store.get(user, [newer_id])
        noted = [note_possibly_outdates(r, older) for r in newer]
        unit.update(noted, read=newer)
        changed.extend(noted)
    return changed


def _records() -> tuple[list[MemoryRecord], list[Outcome]]:
    coffee = _turn("u1", "I take my coffee with regular milk.", 0)
    coffee_twin = _semantic_twin(coffee)
    desk = _turn("u1", "My desk is by the window.", 1)
    oat = _turn("u1", "I switched to oat milk.", 10)
    oat_twin = _semantic_twin(oat)
    soy = _turn("u1", "Now it is soy milk.", 20)
    chair = _turn("u1", "I moved my desk to the hall.", 30)
    other = _turn("u2", "I take my coffee with regular milk.", 0)
    other_new = _turn("u2", "Black coffee for me now.", 40)
    records = [coffee, coffee_twin, desk, oat, oat_twin, soy, chair, other, other_new]
    outcomes = [
        Outcome(coffee, oat_twin, UNSURE),  # marked first ...
        Outcome(coffee, soy, SUPERSEDE),  # ... then superseded, with its twin
        Outcome(coffee_twin, chair, UNSURE),  # already superseded: left alone
        Outcome(oat, soy, UNSURE),  # a newer record of this write is an older one of a later
        Outcome(oat_twin, chair, UNSURE),
        Outcome(desk, chair, UNSURE),
        Outcome(desk, soy, UNSURE),
        Outcome(desk, chair, SUPERSEDE),
        Outcome(other, other_new, SUPERSEDE),  # another user's pair, in the same write
    ]
    return records, outcomes


def test_applying_a_writes_decisions_at_once_equals_one_at_a_time(tmp_path: Path) -> None:
    records, outcomes = _records()
    results = []
    for name, apply in (("batched", None), ("one", _one_at_a_time)):
        with DreamMemory(tmp_path / name, embedder=HashingEmbedder()) as memory:
            _insert(memory, records)
            with memory.engine.unit() as unit:
                if apply is None:
                    changed = apply_outcomes(unit, outcomes, now=NOW)
                else:
                    changed = apply(unit, outcomes, NOW)
            stored = {
                user: {r.id: r for r in memory.store.find(user, statuses=None)} for user in ("u1", "u2")
            }
            results.append(({r.id: r for r in changed}, stored, [r.id for r in changed]))
    (batched, batched_stored, batched_order), (one, one_stored, one_order) = results
    assert batched_stored == one_stored
    assert batched == one and batched_order == one_order
    assert set(batched) == {r.id for r in records} - {records[-1].id}  # all but the newest of u2
    everything = batched_stored["u1"] | batched_stored["u2"]
    coffee, coffee_twin, desk, oat, oat_twin, soy, chair, other, _ = (everything[r.id] for r in records)
    assert (
        coffee.superseded_by == coffee_twin.superseded_by == soy.id == desk.system["possibly_outdated_by"][1]
    )
    assert desk.superseded_by == chair.id and other.superseded_by == records[-1].id
    assert oat.is_active and oat_twin.system["possibly_outdated_by"] == [soy.id, chair.id]
    assert soy.system["possibly_outdates"] == [oat.id, oat_twin.id, desk.id]


def test_no_decision_writes_nothing(memory: DreamMemory) -> None:
    with memory.engine.unit() as unit:
        assert apply_outcomes(unit, [], now=NOW) == []


def _per_record(
    memory: DreamMemory, record: MemoryRecord, vector: npt.NDArray[np.float32], k: int
) -> list[Candidate]:
    hits = memory.vector_index.search(record.user_id, vector, k)
    found = memory.store.get_by_rowids(record.user_id, [rowid for rowid, _ in hits])
    return [Candidate(found[rowid], score) for rowid, score in hits if rowid in found]


def test_stored_neighbours_of_a_write_equal_each_records_own(memory: DreamMemory) -> None:
    texts = [f"I like {thing} in {place}." for thing in ("tea", "jazz", "rain") for place in ("Oslo", "Lima")]
    for n, text in enumerate(texts):
        memory.add(text, user_id="u1" if n % 3 else "u2", event_time=T0 + timedelta(minutes=n))
    memory.add("Forget jazz.", user_id="u1", event_time=T0 + timedelta(hours=1))
    asking = [_turn(user, text, 99) for user in ("u1", "u2", "u3") for text in texts[:4]]
    vectors = memory.embedder.embed_documents([r.content for r in asking])
    batched = stored_neighbours(memory.store, memory.vector_index, asking, vectors, 3)
    assert batched == [_per_record(memory, r, vectors[n], 3) for n, r in enumerate(asking)]
    assert all(len(found) == 3 for found in batched[:8]) and batched[8:] == [[]] * 4
    assert stored_neighbours(memory.store, memory.vector_index, [], vectors[:0], 3) == []


class _ReadingEveryTime:
    """The slot rule's look-up before a write kept its slot values: a fresh read per record."""

    def __init__(self, store: RecordStore) -> None:
        self.store = store

    def others(self, record: MemoryRecord) -> list[MemoryRecord]:
        assert record.slot is not None
        found = self.store.find(record.user_id, slot=record.slot, layers=[Layer.SEMANTIC])
        return [r for r in found if r.id != record.id]

    def forget_inactive(self, changed: list[MemoryRecord]) -> None:
        pass


def _timeless(value: object) -> object:
    """Metadata without the times decisions were taken at (two runs take them at other times)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "at"}
    return value


def _stored_after(
    path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, object]]
) -> list[tuple[object, ...]]:
    counter = itertools.count()
    monkeypatch.setattr("dreammem.types.uuid.uuid4", lambda: uuid.UUID(int=next(counter)))
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.add_many(turns[:2])
        memory.add_many(turns[2:])
        return [
            (r.id, r.content, r.status, r.superseded_by, r.event_time, r.metadata, _timeless(r.system))
            for r in memory.store.find("u1", statuses=None)
        ]


def test_a_write_of_many_values_of_one_slot_supersedes_as_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    amounts = [1200, 900, 1500, 700, 2000, 1100, 1300]
    minutes = [0, 5, 3, 10, 8, 2, 12]  # some written late for an earlier time
    turns: list[dict[str, object]] = [
        {
            "content": f"My budget for the trip is {a} EUR.",
            "user_id": "u1",
            "event_time": T0 + timedelta(minutes=m),
        }
        for a, m in zip(amounts, minutes, strict=True)
    ]
    # An older value that says something else too is marked, not superseded.
    turns.insert(
        1,
        {
            "content": "My budget for the trip is 800 EUR. I live in Leeds.",
            "user_id": "u1",
            "event_time": T0 + timedelta(minutes=1),
        },
    )
    kept = _stored_after(tmp_path / "kept", monkeypatch, turns)
    with monkeypatch.context() as patch:
        patch.setattr("dreammem.engine.writes._SlotValues", _ReadingEveryTime)
        read = _stored_after(tmp_path / "read", monkeypatch, turns)
    assert kept == read
    active = [row for row in kept if row[2] is Status.ACTIVE and "budget" in str(row[1])]
    assert len(kept) > len(turns) and any(row[2] is Status.SUPERSEDED for row in kept) and active
    assert any("possibly_outdated_by" in row[6] for row in kept if "Leeds" in str(row[1]))
