"""The ``grounded_times`` table: the window each record's relative dates point at."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from dreammem.stores.base import TimeSpan
from dreammem.stores.sqlite.codec import chunks, time_filter
from dreammem.stores.sqlite.connection import SQLiteConnection

__all__ = ["TimeRows"]


def _text(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class TimeRows(SQLiteConnection):
    """Grounded windows of the SQLite store's records (migration 14)."""

    def grounded_times(self, user_id: str, rowids: Sequence[int]) -> dict[int, TimeSpan | None]:
        """The stored windows of these rows of this user; rows not grounded yet are left out."""
        found: dict[int, TimeSpan | None] = {}
        for chunk in chunks(list(rowids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                # "+user_id": the rows by rowid, the user checked on each.
                "SELECT t.rowid, t.start_at, t.end_at FROM grounded_times t JOIN records r "
                f"ON r.rowid = t.rowid WHERE +r.user_id = ? AND t.rowid IN ({marks})",
                (user_id, *chunk),
            )
            for rowid, start, end in rows:
                found[int(rowid)] = None if start is None and end is None else (_time(start), _time(end))
        return found

    def pointing_times(
        self, user_id: str, *, since: datetime | None, until: datetime | None, limit: int
    ) -> tuple[dict[int, TimeSpan], list[int]]:
        """The windows that point somewhere of this user's rows said in the window, and rows not grounded yet.

        One query over the rows said in ``[since, until)`` (the ``limit`` oldest, as
        :meth:`window_rowids` takes them, ties by row id): most rows point nowhere and
        never leave SQLite.
        """
        where, params = time_filter(since, until, "")
        rows = self.fetchall(
            "SELECT p.rowid, t.rowid IS NULL, t.start_at, t.end_at FROM ("
            f"SELECT rowid, event_time FROM records WHERE user_id = ? AND status = 'active'{where} "
            "ORDER BY event_time ASC, rowid ASC LIMIT ?) p LEFT JOIN grounded_times t ON t.rowid = p.rowid "
            "WHERE t.rowid IS NULL OR t.start_at IS NOT NULL OR t.end_at IS NOT NULL "
            "ORDER BY p.event_time ASC, p.rowid ASC",
            (user_id, *params, limit),
        )
        windows: dict[int, TimeSpan] = {}
        missing: list[int] = []
        for rowid, ungrounded, start, end in rows:
            if ungrounded:
                missing.append(int(rowid))
            else:
                windows[int(rowid)] = (_time(start), _time(end))
        return windows, missing

    def put_grounded_times(self, user_id: str, times: Mapping[int, TimeSpan | None]) -> None:
        """Store the windows of rows of this user (rows of other users are skipped)."""
        if not times:
            return
        rows = [
            (rowid, *((None, None) if span is None else (_text(span[0]), _text(span[1]))), rowid, user_id)
            for rowid, span in times.items()
        ]
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO grounded_times (rowid, start_at, end_at) "
                "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM records WHERE rowid = ? AND user_id = ?)",
                rows,
            )
