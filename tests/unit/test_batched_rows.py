"""The SQLite store writes a batch of records in few statements, with the rows one at a time would give."""

from __future__ import annotations

import dataclasses

import pytest

from dreammem.errors import BackendError
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.codec import from_row, to_row
from dreammem.testing.records import rec
from dreammem.types import Status

USERS = ("anna", "björn", "anna", "chen-🙂", "björn")


SINGLE_ROW_FTS = (
    "INSERT INTO records_fts (rowid, terms, context, scope) "
    "SELECT rowid, ?2, ?3, 'u' || hex(user_id) FROM records WHERE rowid = ?1"
)
"""The one-row keyword insert the batched one replaced: the reference it must match."""


def _fts_rows(store: SQLiteRecordStore) -> list[tuple[int, str, str, str]]:
    rows = store.fetchall("SELECT rowid, terms, context, scope FROM records_fts ORDER BY rowid")
    return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def test_a_batch_gets_the_row_ids_and_keyword_rows_of_one_insert_per_record() -> None:
    records = [rec(user, f"turn {n} of {user}", n) for n, user in enumerate(USERS)]
    terms = [f"turn {n}" for n in range(len(records))]
    contexts = [f"before {n}" if n % 2 else "" for n in range(len(records))]
    batched = SQLiteRecordStore()
    rowids = batched.insert(records, terms, contexts)
    one_by_one = SQLiteRecordStore()
    expected: list[int] = []
    for record, term, context in zip(records, terms, contexts, strict=True):
        (rowid,) = one_by_one.insert([record], ["placeholder"])
        one_by_one.execute("DELETE FROM records_fts WHERE rowid = ?", (rowid,))
        one_by_one.execute(SINGLE_ROW_FTS, (rowid, term, context))
        expected.append(rowid)
    assert rowids == expected == [batched.rowids(r.user_id, [r.id])[r.id] for r in records]
    assert _fts_rows(batched) == _fts_rows(one_by_one)
    assert {r[3] for r in _fts_rows(batched)} == {"u" + u.encode().hex().upper() for u in USERS}


def test_a_batch_larger_than_one_keyword_statement_indexes_every_record() -> None:
    store = SQLiteRecordStore()
    records = [rec("u1", f"note {n}", n) for n in range(701)]
    rowids = store.insert(records, [f"note n{n}" for n in range(701)])
    assert [r[0] for r in _fts_rows(store)] == sorted(rowids)
    assert [r[1] for r in _fts_rows(store)] == [f"note n{n}" for n in range(701)]


def test_a_batch_needs_one_match_text_and_one_context_per_record() -> None:
    store = SQLiteRecordStore()
    records = [rec("u1", "a"), rec("u1", "b")]
    with pytest.raises(ValueError, match="one match text"):
        store.insert(records, ["a"])
    with pytest.raises(ValueError, match="one match text"):
        store.insert(records, ["a", "b"], ["x"])
    assert store.count() == 0


def test_an_update_naming_a_missing_record_writes_none_of_the_batch() -> None:
    store = SQLiteRecordStore()
    first, second = rec("u1", "first"), rec("u1", "second", 1)
    store.insert([first, second], ["first", "second"])
    missing = rec("u1", "never stored", 2)
    other_user = dataclasses.replace(second, user_id="u2")
    for bad in (missing, other_user):
        changed = [dataclasses.replace(first, status=Status.SUPERSEDED), bad, second]
        with pytest.raises(BackendError, match=f"record {bad.id} not found for update"):
            store.update(changed)
        assert store.get("u1", [first.id])[0].status is Status.ACTIVE


def test_an_update_writes_each_record_of_the_batch() -> None:
    store = SQLiteRecordStore()
    records = [rec(user, f"text {n}", n) for n, user in enumerate(USERS)]
    store.insert(records, ["t"] * len(records))
    changed = [
        dataclasses.replace(r, status=Status.SUPERSEDED, metadata={"n": n}) for n, r in enumerate(records)
    ]
    store.update(changed)
    assert [store.get(r.user_id, [r.id])[0] for r in records] == changed


@pytest.mark.parametrize(
    ("provenance", "entities", "metadata"),
    [((), (), {}), (("a1", "ü2"), ("Zoë", "東京"), {"k": "ü", "n": [1]})],
)
def test_the_row_codec_keeps_empty_and_full_json_fields(
    provenance: tuple[str, ...], entities: tuple[str, ...], metadata: dict[str, object]
) -> None:
    record = rec("u1", "x", provenance=provenance, entities=entities, metadata=metadata)
    row = to_row(record)
    assert (row["provenance"], row["entities"]) == (
        '["a1", "\\u00fc2"]' if provenance else "[]",
        '["Zoë", "東京"]' if entities else "[]",
    )
    store = SQLiteRecordStore()
    store.insert([record], ["x"])
    (stored,) = store.fetchall("SELECT * FROM records")
    assert from_row(stored) == record
