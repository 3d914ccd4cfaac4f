"""A record's twins (same text, linked by provenance) on the SQLite store, found by the text's head."""

from __future__ import annotations

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing.records import put, rec
from dreammem.testing.sql_plans import RecordingSQLiteStore
from dreammem.types import Kind, Layer

LONG = "For project updates I prefer a short email on Thursday mornings, never a call"


def test_twins_are_the_linked_records_with_the_whole_same_text() -> None:
    store = SQLiteRecordStore()
    turn = rec("u1", LONG)
    twin = rec("u1", LONG, 1, layer=Layer.SEMANTIC, kind=Kind.FACT, provenance=(turn.id,))
    same_head = rec(
        "u1", LONG[:40] + " and a call on Fridays", 2, layer=Layer.SEMANTIC, provenance=(turn.id,)
    )
    unlinked = rec("u1", LONG, 3)
    other_user = rec("u2", LONG, 4, layer=Layer.SEMANTIC, provenance=(turn.id,))
    short = rec("u1", "I live in Leeds")
    short_twin = rec("u1", "I live in Leeds", 5, layer=Layer.SEMANTIC, provenance=(short.id,))
    put(store, [turn, twin, same_head, unlinked, other_user, short, short_twin])
    assert [r.id for r in store.twins(turn)] == [twin.id]
    assert [r.id for r in store.twins(twin)] == [turn.id]
    assert store.twins(same_head) == [] and store.twins(unlinked) == []
    assert [r.id for r in store.twins(short)] == [short_twin.id]
    everyone = [turn, twin, same_head, unlinked, other_user, short, short_twin]
    assert store.twins_many(everyone) == {r.id: store.twins(r) for r in everyone}


def test_the_text_head_index_exists_on_a_new_store() -> None:
    store = SQLiteRecordStore()
    rows = store.fetchall("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records'")
    assert "records_user_content_head" in {r["name"] for r in rows}


def test_a_text_said_many_times_still_finds_only_the_linked_twin() -> None:
    store = SQLiteRecordStore()
    said = [rec("u1", LONG, n) for n in range(30)]
    twin = rec("u1", LONG, 31, layer=Layer.SEMANTIC, kind=Kind.FACT, provenance=(said[7].id,))
    put(store, [*said, twin])
    assert [r.id for r in store.twins(said[7])] == [twin.id]
    assert [r.id for r in store.twins(twin)] == [said[7].id]
    assert all(store.twins(r) == [] for r in said if r is not said[7])
    assert store.twins_many([*said, twin]) == {r.id: store.twins(r) for r in [*said, twin]}


def test_the_twins_of_many_records_are_each_ones_twins_in_order() -> None:
    # Twins of twins, across users and texts, more texts than one statement takes (400).
    store = SQLiteRecordStore()
    turns = [rec(f"u{n % 3}", f"{LONG} number {n % 450}", n) for n in range(900)]
    twins = [
        rec(t.user_id, t.content, 1000 + n, layer=Layer.SEMANTIC, kind=Kind.FACT, provenance=(t.id,))
        for n, t in enumerate(turns)
        if n % 4 != 0
    ]
    again = [rec(t.user_id, t.content, 3000 + n, provenance=(t.id,)) for n, t in enumerate(twins[::5])]
    put(store, [*turns, *twins, *again])
    asked = [*turns[::3], *twins[::2], *again]
    many = store.twins_many(asked)
    assert many == {r.id: store.twins(r) for r in asked}
    assert sum(len(found) for found in many.values()) > len(asked) // 2


def test_the_twins_lookup_searches_the_text_head_index_by_user_and_head() -> None:
    # With a bare "content = ?" beside it, SQLite folded the text into the head expression
    # and searched the index by user alone: every row of the user was read.
    store = RecordingSQLiteStore()
    turn = rec("u1", LONG)
    put(store, [turn, *(rec("u1", f"{n} other words", n + 1) for n in range(5))])
    store.twins(turn)
    plan = store.plan_of("substr(content")
    assert "records_user_content_head (user_id=? AND <expr>=?)" in plan
