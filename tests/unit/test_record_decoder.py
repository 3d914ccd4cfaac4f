"""RecordDecoder: the record MemoryRecord.from_dict gives, from value rows of one column layout."""

from __future__ import annotations

import dataclasses
import json
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.codec import COLUMNS, from_row, to_row
from dreammem.types import Kind, Layer, MemoryRecord, Priority, RecordDecoder, Role, Source, Status
from tests.unit.test_record_codec import T0, full_record


def records() -> list[MemoryRecord]:
    """Records with every field at its default and away from it, every enum member used."""
    full = full_record()
    out = [full, MemoryRecord(user_id="u1", content="hi", created_at=T0, event_time=T0)]
    rng = random.Random(5)
    zones = [UTC, timezone(timedelta(hours=1)), timezone(timedelta(hours=-7, minutes=-30))]
    for n in range(60):
        out.append(
            dataclasses.replace(
                full,
                id=f"r{n}",
                layer=rng.choice(list(Layer)),
                kind=rng.choice(list(Kind)),
                source=rng.choice(list(Source)),
                role=rng.choice([None, *Role]),
                agent_id=rng.choice([None, "a"]),
                session_id=rng.choice([None, f"s{n}"]),
                confidence=rng.random(),
                importance=rng.randint(1, 5),
                priority=rng.choice(list(Priority)),
                pinned=rng.random() < 0.5,
                event_time=datetime(2024, 1, 1, tzinfo=rng.choice(zones)) + timedelta(minutes=n),
                last_accessed_at=rng.choice([None, T0]),
                access_count=rng.randint(0, 9),
                status=rng.choice(list(Status)),
                superseded_by=rng.choice([None, "x"]),
                valid_to=rng.choice([None, T0]),
                provenance=tuple(f"p{i}" for i in range(rng.randint(0, 2))),
                entities=tuple(f"e{i}" for i in range(rng.randint(0, 2))),
                slot=rng.choice([None, "a/b"]),
                metadata=rng.choice([{}, {"k": n}]),
            )
        )
    return out


def by_dict(values: dict[str, Any]) -> MemoryRecord:
    """The row through :meth:`MemoryRecord.from_dict` (JSON fields parsed): the reference."""
    data = dict(values)
    for name in ("provenance", "entities", "metadata"):
        data[name] = json.loads(data[name])
    return MemoryRecord.from_dict(data)


@pytest.mark.parametrize("record", records(), ids=lambda r: r.id[:8])
def test_each_row_decodes_to_from_dicts_record_in_any_column_order(record: MemoryRecord) -> None:
    values = to_row(record)
    names = ["rid", *reversed(COLUMNS), "extra"]  # extra columns and another order
    row = [7, *(values[n] for n in reversed(COLUMNS)), "ignored"]
    decoded = RecordDecoder(names, json.loads)(row)
    expected = by_dict(values)
    assert decoded == expected == record
    # repr shows every field's type and time zone: equal datetimes in other zones would compare equal.
    assert repr(decoded) == repr(expected)


def test_a_priority_stored_by_name_decodes_as_from_dict_reads_it() -> None:
    values = to_row(records()[0])
    for stored in ("high", "HIGH", 3):
        row = [{**values, "priority": stored}[n] for n in COLUMNS]
        assert RecordDecoder(COLUMNS, json.loads)(row).priority is Priority.HIGH


def test_rows_it_cannot_decode_fail_as_from_dict_fails() -> None:
    values = to_row(records()[0])
    decode = RecordDecoder(COLUMNS, json.loads)
    for name in ("created_at", "event_time"):
        with pytest.raises(ValueError, match="created_at and event_time"):
            decode([{**values, name: None}[n] for n in COLUMNS])
    for name in ("layer", "kind", "source", "status", "role"):
        bad = {**values, name: "no-such-member"}
        with pytest.raises(ValueError):
            by_dict(bad)
        with pytest.raises(ValueError):
            decode([bad[n] for n in COLUMNS])
    with pytest.raises(ValueError, match="slot"):
        RecordDecoder([n for n in COLUMNS if n != "slot"], json.loads)


def test_the_sqlite_store_decodes_every_select_list_as_from_dict() -> None:
    store = SQLiteRecordStore(":memory:")
    try:
        written = [dataclasses.replace(r, user_id="u1") for r in records()]
        store.insert(written, ["words"] * len(written))
        for sql in ("SELECT * FROM records", "SELECT rowid AS rid, * FROM records"):
            rows = store.fetchall(sql)
            assert len(rows) == len(written)
            for row in rows:
                assert repr(from_row(row)) == repr(by_dict({n: row[n] for n in COLUMNS}))
    finally:
        store.close()
