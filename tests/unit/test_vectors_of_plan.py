"""The stored vectors of some records, read by their ids, not by scanning the user's records."""

from __future__ import annotations

import numpy as np

from dreammem.testing.records import put, rec
from dreammem.testing.sql_plans import RecordingSQLiteStore


def _filled() -> tuple[RecordingSQLiteStore, list[str], list[str]]:
    store = RecordingSQLiteStore()
    mine = [rec("u1", f"turn number {n}", n) for n in range(40)]
    theirs = [rec("u2", f"turn number {n}", n) for n in range(5)]
    rowids = put(store, [*mine, *theirs])
    vectors = np.eye(len(rowids), 8, dtype=np.float32)
    store.put_vectors(rowids, "m", vectors)
    return store, [r.id for r in mine], [r.id for r in theirs]


def test_vectors_of_returns_this_users_vectors_of_the_asked_ids_only() -> None:
    store, mine, theirs = _filled()
    found = store.vectors_of("u1", "m", [mine[3], mine[7], theirs[0], "missing"])
    assert sorted(found) == sorted([mine[3], mine[7]])
    assert int(np.argmax(found[mine[7]])) == 7
    assert store.vectors_of("u1", "other model", [mine[3]]) == {}


def test_vectors_of_searches_the_id_index_not_every_record_of_the_user() -> None:
    # With "r.user_id = ?" beside "r.id IN (...)", SQLite read the user's rows through a
    # user index and tested each id: a recall read all of a user's records.
    store, mine, _ = _filled()
    store.statements.clear()
    store.vectors_of("u1", "m", mine[:3])
    plan = store.plan_of("FROM vectors")
    assert "sqlite_autoindex_records_1 (id=?)" in plan, plan
