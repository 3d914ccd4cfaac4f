"""The dream's tables: the queue, task state and the dream log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dreammem.stores.base import DreamLogRow
from dreammem.stores.sqlite.codec import chunks, from_rows
from dreammem.stores.sqlite.connection import SQLiteConnection
from dreammem.types import MemoryRecord

__all__ = ["DreamRows"]


class DreamRows(SQLiteConnection):
    """Queue, task state, dream log and memory-index rows of the SQLite store."""

    def enqueue(self, records: Sequence[MemoryRecord]) -> None:
        """Put records on the short-term queue that the next dream consumes."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO queue (record_id, user_id, enqueued_at) VALUES (?, ?, ?)",
                [(r.id, r.user_id, r.created_at.isoformat()) for r in records],
            )

    def queued(self, user_id: str, limit: int | None = None) -> list[MemoryRecord]:
        """Queued records of this user, oldest first."""
        sql = (
            "SELECT r.* FROM queue q JOIN records r ON r.id = q.record_id "
            "WHERE q.user_id = ? ORDER BY q.enqueued_at, r.rowid"
        )
        params: list[Any] = [user_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return from_rows(self.fetchall(sql, params))

    def queue_size(self, user_id: str) -> int:
        """How many records wait for this user's next dream."""
        return self._scalar("SELECT COUNT(*) FROM queue WHERE user_id = ?", (user_id,))

    def dequeue(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove records from the queue (inside the dream's transaction)."""
        with self.transaction() as conn:
            conn.executemany(
                "DELETE FROM queue WHERE user_id = ? AND record_id = ?", [(user_id, i) for i in ids]
            )

    # -- task state ----------------------------------------------------------------------

    def get_task_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The saved task state of a session ({} when none)."""
        row = self.fetchone(
            "SELECT state FROM task_state WHERE user_id = ? AND session_id = ?", (user_id, session_id)
        )
        return {} if row is None else dict(json.loads(row[0]))

    def set_task_state(self, user_id: str, session_id: str, state: dict[str, Any], at: datetime) -> None:
        """Replace the task state of a session."""
        self.execute(
            "INSERT OR REPLACE INTO task_state VALUES (?, ?, ?, ?)",
            (user_id, session_id, json.dumps(state, ensure_ascii=False), at.isoformat()),
        )

    def task_states(self, user_id: str) -> dict[str, dict[str, Any]]:
        """Every saved task state of this user, by session id."""
        rows = self.fetchall("SELECT session_id, state FROM task_state WHERE user_id = ?", (user_id,))
        return {str(r[0]): dict(json.loads(r[1])) for r in rows}

    def latest_task_state(self, user_id: str) -> dict[str, Any]:
        """The task state this user saved last ({} when none)."""
        row = self.fetchone(
            "SELECT state FROM task_state WHERE user_id = ? ORDER BY updated_at DESC LIMIT 1", (user_id,)
        )
        return {} if row is None else dict(json.loads(row[0]))

    # -- queue bookkeeping for dreams and undo ----------------------------------------------

    def queue_entries(self, user_id: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """``(record_id, enqueued_at)`` of these queued records."""
        out: list[tuple[str, str]] = []
        for chunk in chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT record_id, enqueued_at FROM queue WHERE user_id = ? AND record_id IN ({marks})",
                (user_id, *chunk),
            )
            out.extend((str(r[0]), str(r[1])) for r in rows)
        return out

    def requeue(self, user_id: str, entries: Sequence[tuple[str, str]]) -> int:
        """Queue ``(record_id, enqueued_at)`` entries again (records that still exist); returns how many."""
        before = self.queue_size(user_id)
        self.executemany(
            "INSERT OR IGNORE INTO queue (record_id, user_id, enqueued_at) "
            "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM records WHERE id = ? AND user_id = ?)",
            [(record_id, user_id, at, record_id, user_id) for record_id, at in entries],
        )
        return self.queue_size(user_id) - before

    def oldest_queued_at(self, user_id: str) -> datetime | None:
        """When this user's oldest queue entry was made (None: empty queue)."""
        row = self.fetchone("SELECT MIN(enqueued_at) FROM queue WHERE user_id = ?", (user_id,))
        return datetime.fromisoformat(row[0]) if row is not None and row[0] else None

    def dream_users(self) -> list[str]:
        """Users with a queue entry or a logged dream (those that may have a dream due)."""
        rows = self.fetchall("SELECT user_id FROM queue UNION SELECT user_id FROM dreams ORDER BY 1")
        return [str(r[0]) for r in rows]

    # -- dream log ---------------------------------------------------------------------------

    def add_dream(self, row: DreamLogRow) -> None:
        """Log a dream (inside the dream's transaction)."""
        self.execute(
            "INSERT INTO dreams (id, user_id, level, trigger, started_at, finished_at, status, report, undo) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.dream_id,
                row.user_id,
                row.level,
                row.trigger,
                row.started_at,
                row.finished_at,
                row.status,
                row.report,
                row.undo,
            ),
        )

    def get_dream(self, dream_id: str) -> DreamLogRow | None:
        """One logged dream, or None."""
        row = self.fetchone(
            "SELECT id, user_id, level, trigger, started_at, finished_at, status, report, undo "
            "FROM dreams WHERE id = ?",
            (dream_id,),
        )
        return None if row is None else DreamLogRow(*(row[k] for k in range(9)))

    def dream_ids_with_prefix(self, prefix: str, limit: int = 5) -> list[tuple[str, str]]:
        """Up to ``limit`` ``(dream id, user id)`` pairs whose id starts with ``prefix``."""
        rows = self.fetchall(
            "SELECT id, user_id FROM dreams WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def list_dreams(self, user_id: str, limit: int) -> list[DreamLogRow]:
        """The logged dreams of this user, newest first."""
        rows = self.fetchall(
            "SELECT id, user_id, level, trigger, started_at, finished_at, status, report, undo "
            "FROM dreams WHERE user_id = ? ORDER BY rowid DESC LIMIT ?",
            (user_id, limit),
        )
        return [DreamLogRow(*(r[k] for k in range(9))) for r in rows]

    def dreams_after(self, dream_id: str, user_id: str, status: str) -> list[str]:
        """Ids of this user's dreams of this status logged after ``dream_id``, oldest first."""
        rows = self.fetchall(
            "SELECT id FROM dreams WHERE user_id = ? AND status = ? AND rowid > "
            "(SELECT rowid FROM dreams WHERE id = ?) ORDER BY rowid",
            (user_id, status, dream_id),
        )
        return [str(r[0]) for r in rows]

    def set_dream_status(self, dream_id: str, status: str, at: datetime) -> None:
        """Mark a logged dream (e.g. undone, at this time)."""
        self.execute(
            "UPDATE dreams SET status = ?, undone_at = ? WHERE id = ?", (status, at.isoformat(), dream_id)
        )

    def dream_times(self, user_id: str, level: int) -> tuple[datetime | None, datetime | None]:
        """When this user's first dream of this level started and the last one finished."""
        first = self.fetchone(
            "SELECT MIN(started_at) FROM dreams WHERE user_id = ? AND level = ?", (user_id, level)
        )
        last = self.fetchone(
            "SELECT finished_at FROM dreams WHERE user_id = ? AND level = ? ORDER BY rowid DESC LIMIT 1",
            (user_id, level),
        )
        started = datetime.fromisoformat(first[0]) if first is not None and first[0] else None
        return started, (datetime.fromisoformat(last[0]) if last is not None else None)
