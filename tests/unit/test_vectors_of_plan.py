"""The stored vectors of some records, read by their ids, not by scanning the user's records."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing.record_store_suite import put, rec


class _Recording(SQLiteRecordStore):
    """The SQLite store, keeping the statements its reads run."""

    def __init__(self) -> None:
        super().__init__()
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        if isinstance(params, Sequence):
            self.statements.append((sql, tuple(params)))
        return super().fetchall(sql, params)


def _filled() -> tuple[_Recording, list[str], list[str]]:
    store = _Recording()
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
    (sql, params), *_ = [s for s in store.statements if "FROM vectors" in s[0]]
    plan = " ".join(str(tuple(r)) for r in store.fetchall(f"EXPLAIN QUERY PLAN {sql}", params))
    assert "sqlite_autoindex_records_1 (id=?)" in plan, plan
