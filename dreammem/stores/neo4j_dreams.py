"""The dream's data on Neo4j: the queue, task state, the dream log, meta values.

* the queue is a mark on the record node (``queued_at``), so a queued record that
  is deleted leaves the queue with it;
* ``(:DMTaskState {key, user_id, session_id, state, updated_at})`` one per session;
* ``(:DMDream {id, user_id, seq, level, trigger, started_at, finished_at, status,
  report, undo, undone_at})`` the dream log, ``seq`` ordering it like SQLite's rowid;
* ``(:DMIndexRow {user_id, facet, key, record_id})`` rows of the removed memory index, which
  older versions wrote: nothing reads them any more, erasure still deletes them;
* ``(:DMMeta {key, value})`` the store's key/value metadata.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dreammem.stores.base import DreamLogRow
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_records import RECORD_FIELDS, from_props
from dreammem.types import MemoryRecord

__all__ = ["DreamNodes"]

_QUEUED = (
    "MATCH (r:DMRecord {user_id: $user_id}) USING INDEX r:DMRecord(user_id, queued_at) "
    "WHERE r.queued_at IS NOT NULL "
)
"""The user's queued records, sought on the ``(user_id, queued_at)`` index (the user's other
records are not read: the planner scanned them, on a young database even with the index there)."""

_DREAM = "d.id, d.user_id, d.level, d.trigger, d.started_at, d.finished_at, d.status, d.report, d.undo"


def _dream(row: Any) -> DreamLogRow:
    return DreamLogRow(*(row[k] for k in range(9)))


def _session_key(user_id: str, session_id: str) -> str:
    return hashlib.sha256(json.dumps([user_id, session_id]).encode("utf-8", "surrogatepass")).hexdigest()


class DreamNodes:
    """Queue, task state, dream log and meta nodes (see the module docstring)."""

    def __init__(self, client: Neo4jClient) -> None:
        self.client = client

    # -- meta

    def get_meta(self, key: str) -> str | None:
        """A value of the store's key/value metadata."""
        value = self.client.scalar("get_meta", "MATCH (m:DMMeta {key: $key}) RETURN m.value", key=key)
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
        self.client.run("set_meta", "MERGE (m:DMMeta {key: $key}) SET m.value = $value", key=key, value=value)

    # -- queue

    def enqueue(self, records: Sequence[MemoryRecord]) -> None:
        """Queue records for the user's next dream (a record queued already keeps its place)."""
        if records:
            self.client.run(
                "enqueue",
                "UNWIND $rows AS row MATCH (r:DMRecord {id: row.id}) WHERE r.user_id = row.user_id "
                "SET r.queued_at = coalesce(r.queued_at, row.at)",
                rows=[{"id": r.id, "user_id": r.user_id, "at": r.created_at.isoformat()} for r in records],
            )

    def queued(self, user_id: str, limit: int | None = None) -> list[MemoryRecord]:
        """Queued records of this user, oldest first."""
        rows = self.client.run(
            "queued",
            _QUEUED
            + f"RETURN {RECORD_FIELDS} AS r ORDER BY r.queued_at, r.rowid"
            + ("" if limit is None else " LIMIT $limit"),
            user_id=user_id,
            limit=limit,
        )
        return [from_props(row["r"]) for row in rows]

    def queue_size(self, user_id: str) -> int:
        """How many records wait for this user's next dream."""
        value = self.client.scalar(
            "queue_size",
            _QUEUED + "RETURN count(r)",
            user_id=user_id,
        )
        return int(value or 0)

    def dequeue(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove records from the user's queue."""
        if ids:
            self.client.run(
                "dequeue",
                "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) WHERE r.user_id = $user_id REMOVE r.queued_at",
                ids=list(ids),
                user_id=user_id,
            )

    def queue_entries(self, user_id: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """``(record_id, enqueued_at)`` of these queued records."""
        rows = self.client.run(
            "queue_entries",
            "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) WHERE r.user_id = $user_id "
            "AND r.queued_at IS NOT NULL RETURN r.id AS id, r.queued_at AS at",
            ids=list(dict.fromkeys(ids)),
            user_id=user_id,
        )
        return [(str(r["id"]), str(r["at"])) for r in rows]

    def requeue(self, user_id: str, entries: Sequence[tuple[str, str]]) -> int:
        """Queue entries again (for records that still exist); returns how many."""
        value = self.client.scalar(
            "requeue",
            "UNWIND $rows AS row MATCH (r:DMRecord {id: row.id}) WHERE r.user_id = $user_id "
            "AND r.queued_at IS NULL SET r.queued_at = row.at RETURN count(r)",
            rows=[{"id": i, "at": at} for i, at in entries],
            user_id=user_id,
        )
        return int(value or 0)

    def oldest_queued_at(self, user_id: str) -> datetime | None:
        """When the user's oldest queue entry was made."""
        value = self.client.scalar(
            "oldest_queued_at",
            _QUEUED + "RETURN min(r.queued_at)",
            user_id=user_id,
        )
        return None if value is None else datetime.fromisoformat(str(value))

    def dream_users(self) -> list[str]:
        """Users with a queue entry or a logged dream."""
        rows = self.client.run(
            "dream_users",
            "CALL () { MATCH (r:DMRecord) WHERE r.queued_at IS NOT NULL RETURN DISTINCT r.user_id AS u "
            "UNION MATCH (d:DMDream) RETURN DISTINCT d.user_id AS u } RETURN u ORDER BY u",
        )
        return [str(r["u"]) for r in rows]

    # -- task state

    def get_task_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The saved task state of a session ({} when none)."""
        value = self.client.scalar(
            "get_task_state",
            "MATCH (t:DMTaskState {key: $key}) WHERE t.user_id = $user_id RETURN t.state",
            key=_session_key(user_id, session_id),
            user_id=user_id,
        )
        return {} if value is None else dict(json.loads(value))

    def set_task_state(self, user_id: str, session_id: str, state: dict[str, Any], at: datetime) -> None:
        """Replace the task state of a session."""
        self.client.run(
            "set_task_state",
            "MERGE (t:DMTaskState {key: $key}) SET t.user_id = $user_id, t.session_id = $session_id, "
            "t.state = $state, t.updated_at = $at",
            key=_session_key(user_id, session_id),
            user_id=user_id,
            session_id=session_id,
            state=json.dumps(state, ensure_ascii=False),
            at=at.isoformat(),
        )

    def task_states(self, user_id: str) -> dict[str, dict[str, Any]]:
        """Every saved task state of this user, by session id."""
        rows = self.client.run(
            "task_states",
            "MATCH (t:DMTaskState {user_id: $user_id}) RETURN t.session_id AS s, t.state AS state",
            user_id=user_id,
        )
        return {str(r["s"]): dict(json.loads(r["state"])) for r in rows}

    def latest_task_state(self, user_id: str) -> dict[str, Any]:
        """The task state this user saved last ({} when none)."""
        value = self.client.scalar(
            "latest_task_state",
            "MATCH (t:DMTaskState {user_id: $user_id}) RETURN t.state ORDER BY t.updated_at DESC LIMIT 1",
            user_id=user_id,
        )
        return {} if value is None else dict(json.loads(value))

    # -- dream log

    def add_dream(self, row: DreamLogRow) -> None:
        """Log a dream (inside the dream's transaction)."""
        self.client.run(
            "add_dream",
            "CREATE (d:DMDream {id: $id, user_id: $user_id, seq: $seq, level: $level, trigger: $trigger, "
            "started_at: $started_at, finished_at: $finished_at, status: $status, report: $report, "
            "undo: $undo})",
            id=row.dream_id,
            user_id=row.user_id,
            seq=self.client.next_ids("dream", 1),
            level=row.level,
            trigger=row.trigger,
            started_at=row.started_at,
            finished_at=row.finished_at,
            status=row.status,
            report=row.report,
            undo=row.undo,
        )

    def get_dream(self, dream_id: str) -> DreamLogRow | None:
        """One logged dream, or None."""
        rows = self.client.run("get_dream", f"MATCH (d:DMDream {{id: $id}}) RETURN {_DREAM}", id=dream_id)
        return _dream(rows[0]) if rows else None

    def dream_ids_with_prefix(self, prefix: str, limit: int = 5) -> list[tuple[str, str]]:
        """Up to ``limit`` ``(dream id, user id)`` pairs whose id starts with ``prefix``."""
        rows = self.client.run(
            "dream_ids_with_prefix",
            "MATCH (d:DMDream) WHERE d.id STARTS WITH $prefix RETURN d.id AS id, d.user_id AS u "
            "ORDER BY id LIMIT $limit",
            prefix=prefix,
            limit=limit,
        )
        return [(str(r["id"]), str(r["u"])) for r in rows]

    def list_dreams(self, user_id: str, limit: int) -> list[DreamLogRow]:
        """The logged dreams of this user, newest first."""
        rows = self.client.run(
            "list_dreams",
            f"MATCH (d:DMDream {{user_id: $user_id}}) RETURN {_DREAM} ORDER BY d.seq DESC LIMIT $limit",
            user_id=user_id,
            limit=limit,
        )
        return [_dream(r) for r in rows]

    def dreams_after(self, dream_id: str, user_id: str, status: str) -> list[str]:
        """Ids of this user's dreams of this status logged after ``dream_id``, oldest first."""
        rows = self.client.run(
            "dreams_after",
            "MATCH (x:DMDream {id: $id}) MATCH (d:DMDream {user_id: $user_id}) "
            "WHERE d.status = $status AND d.seq > x.seq RETURN d.id AS id ORDER BY d.seq",
            id=dream_id,
            user_id=user_id,
            status=status,
        )
        return [str(r["id"]) for r in rows]

    def set_dream_status(self, dream_id: str, status: str, at: datetime) -> None:
        """Mark a logged dream (undone, at this time)."""
        self.client.run(
            "set_dream_status",
            "MATCH (d:DMDream {id: $id}) SET d.status = $status, d.undone_at = $at",
            id=dream_id,
            status=status,
            at=at.isoformat(),
        )

    def dream_times(self, user_id: str, level: int) -> tuple[datetime | None, datetime | None]:
        """When the user's first dream of this level started and the last one finished."""
        rows = self.client.run(
            "dream_times",
            "MATCH (d:DMDream {user_id: $user_id}) WHERE d.level = $level WITH d ORDER BY d.seq "
            "RETURN min(d.started_at) AS first, last(collect(d.finished_at)) AS last",
            user_id=user_id,
            level=level,
        )
        first, last = (rows[0]["first"], rows[0]["last"]) if rows else (None, None)
        return (
            datetime.fromisoformat(first) if first else None,
            datetime.fromisoformat(last) if last else None,
        )
