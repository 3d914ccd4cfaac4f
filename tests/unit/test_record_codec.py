"""MemoryRecord.to_dict / from_dict: the one record codec (journal, SQLite rows, export)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import Kind, Layer, MemoryRecord, Priority, Role, Source, Status

T0 = datetime(2025, 7, 14, 8, 30, 15, 123456, tzinfo=UTC)


def full_record() -> MemoryRecord:
    """A record with every field away from its default (and non-ASCII text)."""
    return MemoryRecord(
        user_id="u-7",
        content="Mia's flight to 東京 leaves at 06:40 — gate B12",
        layer=Layer.SEMANTIC,
        kind=Kind.EVENT,
        source=Source.USER_EXPLICIT,
        role=Role.ASSISTANT,
        agent_id="travel-agent",
        session_id="s-42",
        confidence=0.95,
        importance=5,
        priority=Priority.HIGH,
        pinned=True,
        created_at=T0,
        event_time=T0 - timedelta(days=3),
        last_accessed_at=T0 + timedelta(hours=2),
        access_count=4,
        status=Status.SUPERSEDED,
        superseded_by="rec-next",
        valid_to=T0 + timedelta(days=1),
        provenance=("turn-1", "turn-2"),
        entities=("Mia", "東京", "06:40"),
        slot="mia/flight",
        metadata={"gate": "B12", "nested": {"seats": [1, 2]}, "keyed": False},
    )


def test_every_field_survives_a_json_round_trip() -> None:
    record = full_record()
    wire = json.loads(json.dumps(record.to_dict(), ensure_ascii=False))
    assert MemoryRecord.from_dict(wire) == record


def test_a_minimal_record_round_trips_with_its_empty_fields() -> None:
    record = MemoryRecord(user_id="u1", content="hi")
    back = MemoryRecord.from_dict(record.to_dict())
    assert back == record
    assert (back.role, back.last_accessed_at, back.valid_to, back.slot) == (None, None, None, None)
    assert (back.provenance, back.entities, dict(back.metadata)) == ((), (), {})


def test_priority_decodes_from_its_name_or_its_number() -> None:
    data = full_record().to_dict()
    assert data["priority"] == "high"
    for encoded in ("high", "HIGH", 3):
        assert MemoryRecord.from_dict({**data, "priority": encoded}).priority is Priority.HIGH


def test_unknown_keys_are_ignored_and_missing_times_are_an_error() -> None:
    record = full_record()
    data = record.to_dict()
    assert MemoryRecord.from_dict({**data, "from_a_newer_version": 1}) == record
    for name in ("created_at", "event_time"):
        with pytest.raises(ValueError):
            MemoryRecord.from_dict({k: v for k, v in data.items() if k != name})


def test_a_time_in_another_zone_keeps_its_instant() -> None:
    lisbon_summer = timezone(timedelta(hours=1))
    record = dataclasses.replace(full_record(), event_time=datetime(2025, 7, 1, 9, 0, tzinfo=lisbon_summer))
    back = MemoryRecord.from_dict(record.to_dict())
    assert back.event_time == datetime(2025, 7, 1, 8, 0, tzinfo=UTC)


def test_the_sqlite_row_codec_agrees_with_to_dict() -> None:
    store = SQLiteRecordStore(":memory:")
    try:
        record = full_record()
        store.insert([record], ["mia flight"])
        (stored,) = store.get(record.user_id, [record.id])
        assert stored == record
        assert stored.to_dict() == record.to_dict()
    finally:
        store.close()
