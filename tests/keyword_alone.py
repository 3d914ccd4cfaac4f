"""The reference keyword ranking of one user: FTS5's ``bm25()`` over that user's keyword rows alone.

A user's scores must not depend on other users' rows (docs/RELIABILITY.md, item 11):
the reference copies the user's rows of ``records_fts`` (same row ids, same text) into
a table of their own and lets FTS5 rank them there, so its statistics are the user's.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from dreammem.stores.fts5_terms import FTS5_TOKENIZER
from dreammem.stores.sqlite import SQLiteRecordStore

__all__ = ["ranked_alone"]


def ranked_alone(
    store: SQLiteRecordStore, user: str, match: str, since: datetime | None = None
) -> list[tuple[int, float]]:
    """Every active match of ``user`` (from ``since`` on) for an FTS5 expression, ranked alone, best first.

    Scores are rounded to 9 places; equal scores keep the lower row id first.
    """
    rows = store.fetchall(
        "SELECT f.rowid, f.terms, f.context, f.scope, r.status = 'active' AND r.event_time >= ? "
        "FROM records_fts f JOIN records r ON r.rowid = f.rowid WHERE r.user_id = ?",
        ("" if since is None else since.astimezone(UTC).isoformat(), user),
    )
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(
            f"CREATE VIRTUAL TABLE t USING fts5(terms, context, scope, tokenize = '{FTS5_TOKENIZER}')"
        )
        conn.executemany(
            "INSERT INTO t (rowid, terms, context, scope) VALUES (?, ?, ?, ?)", [r[:4] for r in rows]
        )
        found = conn.execute(
            "SELECT rowid, -bm25(t, 1.0, ?, 0.0) FROM t WHERE t MATCH ?", (store.context_weight, match)
        ).fetchall()
    finally:
        conn.close()
    kept = {int(r[0]) for r in rows if r[4]}
    return sorted(
        ((int(rowid), round(float(score), 9)) for rowid, score in found if int(rowid) in kept),
        key=lambda row: (-row[1], row[0]),
    )
