"""A store written at any older schema version opens on today's code with nothing lost.

Each case builds a file with only the first ``v`` migrations, writes rows the way that
version's code did (raw SQL: today's code cannot write an old schema), then opens it
through the facade and uses it.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import dreammem.stores.sqlite.connection as connection
from dreammem import DreamMemory, Kind, Layer, MemoryRecord, Status
from dreammem.agent_api import ChatTurn, ingest_turns
from dreammem.embed import HashingEmbedder
from dreammem.keyed import get_keyed
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.codec import COLUMNS, to_row
from dreammem.stores.sqlite.user_stats import count_rows, register
from dreammem.stores.sqlite.writers import register as register_client_version
from dreammem.system_meta import LATER_KEYS
from dreammem.text.tokenize import tokenize

LATEST = MIGRATIONS[-1].version
SPEAKER_VERSION = next(m.version for m in MIGRATIONS if m.name == "speaker_column")
KEYWORD_USERS_VERSION = next(m.version for m in MIGRATIONS if m.name == "keyword_users")
SYSTEM_VERSION = next(m.version for m in MIGRATIONS if m.name == "system_column")
LATER_VERSION = next(m.version for m in MIGRATIONS if m.name == "message_key_and_keyed_in_system")
OLD_COLUMNS = [c for c in COLUMNS if c not in ("speaker", "system")]
"""The columns of ``records`` before the speaker column came."""
OLDER = [m.version for m in MIGRATIONS[:-1]]
T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def _records() -> list[MemoryRecord]:
    turn = MemoryRecord(
        user_id="u1",
        content="Oolong is my favourite tea, brewed at 85 °C",
        session_id="s1",
        created_at=T0,
        event_time=T0,
    )
    city = MemoryRecord(
        user_id="u1",
        content="I live in Porto",
        layer=Layer.SEMANTIC,
        kind=Kind.FACT,
        slot="home/city",
        created_at=T0 + timedelta(minutes=1),
        event_time=T0 + timedelta(minutes=1),
    )
    other = MemoryRecord(
        user_id="u2",
        content="Oolong grows on the hills of my family's farm",
        created_at=T0 + timedelta(minutes=2),
        event_time=T0 + timedelta(minutes=2),
    )
    return [turn, city, other]


def _old_store(
    path: Path, version: int, monkeypatch: pytest.MonkeyPatch, records: list[MemoryRecord] | None = None
) -> list[MemoryRecord]:
    """A store file at ``version`` holding three records (or these), written as that version wrote them."""
    monkeypatch.setattr(connection, "MIGRATIONS", MIGRATIONS[:version])
    store = SQLiteRecordStore(path)
    assert store.schema_version == version
    store.close()
    monkeypatch.undo()
    records = _records() if records is None else records
    columns = COLUMNS if version >= SYSTEM_VERSION else [c for c in COLUMNS if c != "system"]
    columns = columns if version >= SPEAKER_VERSION else OLD_COLUMNS
    conn = sqlite3.connect(path)
    register_client_version(conn)  # rows written as a client of this version would (the guard's triggers)
    with conn:
        for rowid, record in enumerate(records, start=1):
            row = to_row(record)
            if version < LATER_VERSION:  # the library's notes (before 17), or two of them, in the metadata
                later = {k: v for k, v in record.system.items() if k in LATER_KEYS}
                moved = record.system if version < SYSTEM_VERSION else later
                row["metadata"] = json.dumps({**record.metadata, **moved})
                row["system"] = json.dumps({k: v for k, v in record.system.items() if k not in later})
            marks = ", ".join("?" * len(columns))
            conn.execute(
                f"INSERT INTO records (rowid, {', '.join(columns)}) VALUES (?, {marks})",
                (rowid, *(row[c] for c in columns)),
            )
            terms = " ".join(tokenize(record.content))
            if version >= 7:  # the context column came with migration 7
                conn.execute(
                    "INSERT INTO records_fts (rowid, terms, context) VALUES (?, ?, '')", (rowid, terms)
                )
            else:
                conn.execute("INSERT INTO records_fts (rowid, terms) VALUES (?, ?)", (rowid, terms))
        if version >= KEYWORD_USERS_VERSION:  # that version's writes counted each user's keyword rows
            register(conn)
            count_rows(conn, list(range(1, len(records) + 1)), 1)
        conn.execute(
            "INSERT INTO queue (record_id, user_id, enqueued_at) VALUES (?, ?, ?)",
            (records[0].id, "u1", T0.isoformat()),
        )
    conn.close()
    return records


def _schema(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    finally:
        conn.close()
    return sorted((kind, name, " ".join(sql.replace('"', "").split())) for kind, name, sql in rows)


def test_the_migrations_are_numbered_one_by_one_with_unique_names() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert len({m.name for m in MIGRATIONS}) == len(MIGRATIONS)
    assert all(m.sql.strip() for m in MIGRATIONS)


@pytest.mark.parametrize("version", OLDER)
def test_an_older_store_upgrades_to_the_schema_a_new_store_has(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_store(tmp_path / "old.db", version, monkeypatch)
    upgraded = SQLiteRecordStore(tmp_path / "old.db")
    assert upgraded.schema_version == LATEST
    versions = [int(r[0]) for r in upgraded.fetchall("SELECT version FROM schema_version ORDER BY version")]
    assert versions == list(range(1, LATEST + 1))
    upgraded.close()
    SQLiteRecordStore(tmp_path / "new.db").close()
    assert _schema(tmp_path / "old.db") == _schema(tmp_path / "new.db")


@pytest.mark.parametrize("version", OLDER)
def test_an_older_store_keeps_its_records_and_works_after_the_upgrade(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    turn, city, other = _old_store(path, version, monkeypatch)
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        assert {r.id: r.content for r in memory.get_all(user_id="u1")} == {
            turn.id: turn.content,
            city.id: city.content,
        }
        assert memory.get(turn.id, user_id="u1") == turn
        report = memory.reindex()  # the old rows had no embeddings
        assert report["embedded"] == 3 and report["vectors"] == 3
        for path_name in ("keyword", "vector"):
            hits = memory.recall("favourite oolong tea", user_id="u1", k=3, paths=[path_name]).ids
            assert hits and hits[0] == turn.id and other.id not in hits, (path_name, hits)
        assert memory.recall("oolong farm hills", user_id="u2", k=3).ids == [other.id]
        new = memory.remember("I live in Lisbon", user_id="u1", slot="home/city")
        assert memory.get(city.id, user_id="u1").status is Status.SUPERSEDED
        assert [r.id for r in memory.history(new.id, user_id="u1")] == [city.id, new.id]
        dream = memory.dream(user_id="u1")  # the queue entry written at the old version
        assert dream.queued == 1 and memory.store.queue_size("u1") == 0
        memory.undo_dream(dream.dream_id, user_id="u1")
        assert [r.id for r in memory.store.queued("u1")] == [turn.id]


def test_an_older_store_gets_the_speakers_its_metadata_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def line(content: str, minutes: int, metadata: dict[str, object]) -> MemoryRecord:
        when = T0 + timedelta(minutes=minutes)
        return MemoryRecord(
            user_id="u1", content=content, created_at=when, event_time=when, metadata=metadata
        )

    records = [
        line("Gina: We danced at the studio.", 0, {"dia_id": "D1:1", "speaker": "Gina"}),
        line("Jon: The floor is new.", 1, {"speaker": " Jon "}),
        line("Gina: no speaker in the metadata", 2, {}),
        line("an empty speaker", 3, {"speaker": ""}),
        line("a speaker that is not a name", 4, {"speaker": 7}),
    ]
    path = tmp_path / "old.db"
    _old_store(path, SPEAKER_VERSION - 1, monkeypatch, records)
    store = SQLiteRecordStore(path)
    try:
        assert store.schema_version == LATEST
        found = store.get("u1", [r.id for r in records])
    finally:
        store.close()
    assert [r.speaker for r in found] == ["Gina", "Jon", None, None, None]
    assert [r.metadata for r in found] == [r.metadata for r in records]


def _old_metadata(
    path: Path, version: int, monkeypatch: pytest.MonkeyPatch, records: list[MemoryRecord]
) -> list[dict[str, object]]:
    """A store at ``version`` holding these records; each row's metadata as that version stored it."""
    _old_store(path, version, monkeypatch, records)
    raw = sqlite3.connect(path)
    stored = [json.loads(m) for (m,) in raw.execute("SELECT metadata FROM records ORDER BY rowid")]
    raw.close()
    return stored


def _read_as_written(memory: DreamMemory, records: list[MemoryRecord]) -> None:
    """The store is at the latest schema and gives back these records of u1 as they were made."""
    assert memory.store.schema_version == LATEST
    assert memory.get_all(user_id="u1", status=None) == sorted(
        records, key=lambda r: r.event_time, reverse=True
    )


def _marked_pair() -> list[MemoryRecord]:
    """An older home city marked possibly outdated by a newer one, as the write path leaves them."""
    newer = MemoryRecord(
        user_id="u1", content="I live in Lisbon now", layer=Layer.SEMANTIC, kind=Kind.FACT,
        created_at=T0 + timedelta(days=2), event_time=T0 + timedelta(days=2),
        metadata={"topic": "home"}, system={"possibly_outdates": ["a" * 32], "from_turn": "t2"},
    )  # fmt: skip
    older = MemoryRecord(
        user_id="u1", content="I live in Porto", layer=Layer.SEMANTIC, kind=Kind.FACT, id="a" * 32,
        created_at=T0, event_time=T0, metadata={"topic": "home"},
        system={
            "possibly_outdated_by": [newer.id],
            "possibly_outdated_why": {newer.id: {"rule": "same subject", "reason": "a newer home"}},
            "suspect_instruction": False, "support": 2,
        },
    )  # fmt: skip
    return [older, newer]


def test_an_older_store_moves_the_library_notes_out_of_the_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _marked_pair()
    stored = _old_metadata(tmp_path / "old.db", SYSTEM_VERSION - 1, monkeypatch, records)
    assert "possibly_outdated_by" in stored[0] and "from_turn" in stored[1]  # the old layout
    _old_store(tmp_path / "new.db", LATEST, monkeypatch, records)
    contexts = []
    for name in ("old.db", "new.db"):
        with DreamMemory(tmp_path / name, embedder=HashingEmbedder()) as memory:
            _read_as_written(memory, records)
            memory.reindex()
            result = memory.recall("where do I live?", user_id="u1", k=5)
            contexts.append(([h.id for h in result.hits], result.to_context().text))
    assert contexts[0] == contexts[1]
    ids, text = contexts[0]
    assert ids[0] == records[1].id and records[0].id in ids
    assert "possibly outdated" in text


def _adapter_records() -> list[MemoryRecord]:
    """A turn an adapter stored, a keyed entry, and a caller's look-alikes of other types."""
    when = [T0 + timedelta(minutes=n) for n in range(3)]
    turn = MemoryRecord(
        user_id="u1", content="I am allergic to peanuts", session_id="s1", created_at=when[0],
        event_time=when[0], metadata={"topic": "food"}, system={"message_key": "id:m1"},
    )  # fmt: skip
    entry = {"path": ["prefs"], "key": "milk", "value": {"text": "oat"}, "indexed": True, "created_at": None}
    keyed = MemoryRecord(
        user_id="u1", content="oat milk", layer=Layer.SEMANTIC, kind=Kind.FACT,
        slot='keyed:["prefs", "milk"]', created_at=when[1], event_time=when[1], system={"keyed": entry},
    )  # fmt: skip
    caller = MemoryRecord(
        user_id="u1", content="my own note", session_id="s1", created_at=when[2], event_time=when[2],
        metadata={"message_key": 7, "keyed": True},
    )  # fmt: skip
    return [turn, keyed, caller]


def test_an_older_store_moves_message_keys_and_keyed_entries_into_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _adapter_records()
    stored = _old_metadata(tmp_path / "old.db", LATER_VERSION - 1, monkeypatch, records)
    assert stored[0]["message_key"] == "id:m1" and stored[1]["keyed"]["key"] == "milk"  # the old layout
    with DreamMemory(tmp_path / "old.db", embedder=HashingEmbedder()) as memory:
        _read_as_written(memory, records)
        plan = memory.store.fetchall(
            "EXPLAIN QUERY PLAN SELECT json_extract(system, '$.message_key') FROM records "
            "WHERE user_id = ? AND session_id = ? AND json_extract(system, '$.message_key') IN (?)",
            ("u1", "s1", "id:m1"),
        )
        assert any("records_message_key" in str(row[-1]) for row in plan), plan
        assert memory.stored_message_keys(["id:m1", "7"], user_id="u1", session_id="s1") == {"id:m1"}
        assert ingest_turns(memory, [ChatTurn("user", "I am allergic to peanuts", "m1")], user_id="u1",
                            session_id="s1") == []  # fmt: skip
        entry = get_keyed(memory, user_id="u1", path=("prefs",), key="milk")
        assert entry is not None and entry.value == {"text": "oat"}
