"""The grounded windows of record nodes: where each record's relative dates point, kept on its node.

A node grounded once carries ``grounded = true`` and, when its dates point somewhere
else than when it was said, ``grounded_start``/``grounded_end`` (ISO text; absent: open).
The write path stores them in the write's transaction
(:func:`~dreammem.dates.grounding.ground_records`); a node without them (written before
schema 6) is grounded on first use and written back
(:class:`~dreammem.dates.grounding.GroundedTimes`). An update that changes a node's text
or time drops them (:data:`DROP_CHANGED_WINDOW`), as SQLite's trigger does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from dreammem.stores.base import TimeSpan
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_versions import SCHEMA_VERSION, WRITER_GUARD

__all__ = ["DROP_CHANGED_WINDOW", "TimeNodes", "said_between", "utc_iso"]

DROP_CHANGED_WINDOW = (
    "FOREACH (_ IN CASE WHEN r.content <> row.content OR r.event_time <> row.event_time "
    "THEN [1] ELSE [] END | REMOVE r.grounded, r.grounded_start, r.grounded_end) "
)
"""The update clause (node ``r``, new fields ``row``) that drops a window its text or time no longer gives."""


def utc_iso(value: datetime | None) -> str | None:
    """A time as the ISO text in UTC that nodes keep ``event_time`` in (``None`` stays)."""
    return None if value is None else value.astimezone(UTC).isoformat()


def _text(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def said_between(since: datetime | None, until: datetime | None) -> str:
    """``MATCH ... WHERE`` of the user's active records with ``$since <= event_time < $until`` (bounds given).

    They are sought on the ``(user_id, event_time)`` index, and a statement that orders them by
    ``r.user_id, r.event_time`` (one user: the same order) reads them in the index's order, so its
    ``LIMIT`` stops the read. Only the bounds given are written: a ``($since IS NULL OR ...)``
    filter is planned for any value and read every record of the user.
    """
    bounds = ["r.event_time IS NOT NULL"]
    bounds += [] if since is None else ["r.event_time >= $since"]
    bounds += [] if until is None else ["r.event_time < $until"]
    return (
        "MATCH (r:DMRecord {user_id: $user_id}) USING INDEX r:DMRecord(user_id, event_time) "
        f"WHERE {' AND '.join(bounds)} AND r.status = 'active' "
    )


class TimeNodes:
    """The optional grounded windows of the ``TimeIndex`` role on ``(:DMRecord)`` nodes."""

    client: Neo4jClient
    client_version: int = SCHEMA_VERSION

    def grounded_times(self, user_id: str, rowids: Sequence[int]) -> dict[int, TimeSpan | None]:
        """The stored windows of these rows of this user; rows not grounded yet are left out."""
        rows = self.client.run(
            "grounded_times",
            "UNWIND $rowids AS rowid MATCH (r:DMRecord {rowid: rowid}) "
            "WHERE r.user_id = $user_id AND r.grounded "
            "RETURN r.rowid AS rowid, r.grounded_start AS start, r.grounded_end AS stop",
            rowids=list(rowids),
            user_id=user_id,
        )
        return {
            int(row["rowid"]): None
            if row["start"] is None and row["stop"] is None
            else (_time(row["start"]), _time(row["stop"]))
            for row in rows
        }

    def pointing_times(
        self, user_id: str, *, since: datetime | None, until: datetime | None, limit: int
    ) -> tuple[dict[int, TimeSpan], list[int]]:
        """The windows that point somewhere of this user's rows said in the window, and rows not grounded yet.

        One query over the ``limit`` oldest active rows said in ``[since, until)`` (as
        :meth:`window_rowids` takes them, ties by row id): rows that point nowhere stay
        on the server.
        """
        rows = self.client.run(
            "pointing_times",
            said_between(since, until)
            + "WITH r ORDER BY r.user_id ASC, r.event_time ASC, r.rowid ASC LIMIT $limit "
            "WITH r WHERE r.grounded IS NULL OR r.grounded_start IS NOT NULL OR r.grounded_end IS NOT NULL "
            "RETURN r.rowid AS rowid, r.grounded IS NULL AS ungrounded, r.grounded_start AS start, "
            "r.grounded_end AS stop ORDER BY r.event_time ASC, r.rowid ASC",
            user_id=user_id,
            since=utc_iso(since),
            until=utc_iso(until),
            limit=limit,
        )
        windows: dict[int, TimeSpan] = {}
        missing: list[int] = []
        for row in rows:
            if row["ungrounded"]:
                missing.append(int(row["rowid"]))
            else:
                windows[int(row["rowid"])] = (_time(row["start"]), _time(row["stop"]))
        return windows, missing

    def put_grounded_times(self, user_id: str, times: Mapping[int, TimeSpan | None]) -> None:
        """Store the windows of rows of this user (rows of other users are skipped).

        A database that needs a newer client to write keeps none (recall grounds them again).
        """
        if not times:
            return
        rows = [
            {
                "rowid": rowid,
                "start": None if span is None else _text(span[0]),
                "stop": None if span is None else _text(span[1]),
            }
            for rowid, span in times.items()
        ]
        self.client.run(
            "put_grounded_times",
            f"{WRITER_GUARD}UNWIND $rows AS row MATCH (r:DMRecord {{rowid: row.rowid}}) "
            "WHERE r.user_id = $user_id "
            "SET r.grounded = true, r.grounded_start = row.start, r.grounded_end = row.stop",
            rows=rows,
            user_id=user_id,
            client_version=self.client_version,
        )
