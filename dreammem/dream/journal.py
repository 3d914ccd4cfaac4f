"""The dream log: one row per dream with its report and what undo needs.

Rows live in the ``dreams`` table (migration 4). They are written inside the dream's
own transaction, so a dream is logged exactly when its changes commit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreammem.dream.report import DreamReport
from dreammem.errors import NotFoundError
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import Kind, Layer, MemoryRecord, Priority, Role, Source, Status

__all__ = [
    "UndoData",
    "dream_ids_with_prefix",
    "dream_owner",
    "last_dream_at",
    "later_dreams",
    "list_reports",
    "load_entry",
    "mark_undone",
    "queue_entries",
    "record_from_dict",
    "write_entry",
]

DONE = "done"
UNDONE = "undone"


@dataclass(slots=True)
class UndoData:
    """Everything needed to put a user's memory back as it was before a dream.

    Attributes:
        inserted: Ids of records the dream wrote.
        before: Changed records as they were before, as dicts.
        after_status: The status the dream gave each changed record.
        queue: Queue entries the dream consumed, as ``(record_id, enqueued_at)``.
        index_rows: The user's memory-index rows before (second level only).
    """

    inserted: list[str] = field(default_factory=list)
    before: list[dict[str, Any]] = field(default_factory=list)
    after_status: dict[str, str] = field(default_factory=dict)
    queue: list[tuple[str, str]] = field(default_factory=list)
    index_rows: list[tuple[str, str, str]] | None = None

    def to_json(self) -> str:
        """Serialise."""
        return json.dumps(
            {
                "inserted": self.inserted,
                "before": self.before,
                "after_status": self.after_status,
                "queue": self.queue,
                "index_rows": self.index_rows,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> UndoData:
        """Read back :meth:`to_json`."""
        data = json.loads(text)
        rows = data.get("index_rows")
        return cls(
            inserted=list(data["inserted"]),
            before=list(data["before"]),
            after_status=dict(data["after_status"]),
            queue=[(q[0], q[1]) for q in data["queue"]],
            index_rows=None if rows is None else [(r[0], r[1], r[2]) for r in rows],
        )


def record_from_dict(data: Mapping[str, Any]) -> MemoryRecord:
    """Rebuild a record from :meth:`MemoryRecord.to_dict` output."""

    def when(name: str) -> datetime | None:
        value = data.get(name)
        return datetime.fromisoformat(value) if value else None

    created, event = when("created_at"), when("event_time")
    assert created is not None and event is not None
    return MemoryRecord(
        id=data["id"],
        user_id=data["user_id"],
        content=data["content"],
        layer=Layer(data["layer"]),
        kind=Kind(data["kind"]),
        source=Source(data["source"]),
        role=Role(data["role"]) if data.get("role") else None,
        agent_id=data.get("agent_id"),
        session_id=data.get("session_id"),
        confidence=float(data["confidence"]),
        importance=int(data["importance"]),
        priority=Priority[str(data["priority"]).upper()],
        pinned=bool(data["pinned"]),
        created_at=created,
        event_time=event,
        last_accessed_at=when("last_accessed_at"),
        access_count=int(data.get("access_count", 0)),
        status=Status(data["status"]),
        superseded_by=data.get("superseded_by"),
        valid_to=when("valid_to"),
        provenance=tuple(data.get("provenance", ())),
        entities=tuple(data.get("entities", ())),
        slot=data.get("slot"),
        metadata=dict(data.get("metadata", {})),
    )


def queue_entries(store: SQLiteRecordStore, user_id: str, ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(record_id, enqueued_at)`` of these queued records (for undo)."""
    out: list[tuple[str, str]] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        rows = store.fetchall(
            f"SELECT record_id, enqueued_at FROM queue WHERE user_id = ? AND record_id IN ({marks})",
            (user_id, *chunk),
        )
        out.extend((str(r[0]), str(r[1])) for r in rows)
    return out


def write_entry(store: SQLiteRecordStore, report: DreamReport, undo: UndoData) -> None:
    """Log a dream (call inside the dream's transaction)."""
    store.execute(
        "INSERT INTO dreams (id, user_id, level, trigger, started_at, finished_at, status, report, undo) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            report.dream_id,
            report.user_id,
            report.level,
            report.trigger,
            report.started_at,
            report.finished_at,
            DONE,
            json.dumps(report.to_dict(), ensure_ascii=False),
            undo.to_json(),
        ),
    )


def load_entry(store: SQLiteRecordStore, dream_id: str, user_id: str) -> tuple[DreamReport, UndoData, str]:
    """The report, undo data and status (``done``/``undone``) of one of this user's dreams.

    Raises:
        NotFoundError: no such dream for this user.
    """
    row = store.fetchone(
        "SELECT report, undo, status FROM dreams WHERE id = ? AND user_id = ?", (dream_id, user_id)
    )
    if row is None:
        raise NotFoundError(f"no dream {dream_id!r} for this user")
    return DreamReport.from_dict(json.loads(row[0])), UndoData.from_json(row[1]), str(row[2])


def list_reports(store: SQLiteRecordStore, user_id: str, limit: int = 20) -> list[tuple[DreamReport, str]]:
    """The dreams of this user, newest first, with their status."""
    rows = store.fetchall(
        "SELECT report, status FROM dreams WHERE user_id = ? ORDER BY rowid DESC LIMIT ?", (user_id, limit)
    )
    return [(DreamReport.from_dict(json.loads(r[0])), str(r[1])) for r in rows]


def later_dreams(store: SQLiteRecordStore, dream_id: str, user_id: str) -> list[str]:
    """Ids of this user's dreams logged after ``dream_id`` and not undone."""
    rows = store.fetchall(
        "SELECT id FROM dreams WHERE user_id = ? AND status = ? AND rowid > "
        "(SELECT rowid FROM dreams WHERE id = ?) ORDER BY rowid",
        (user_id, DONE, dream_id),
    )
    return [str(r[0]) for r in rows]


def mark_undone(store: SQLiteRecordStore, dream_id: str, at: datetime) -> None:
    """Mark a dream undone (inside the undo transaction)."""
    store.execute(
        "UPDATE dreams SET status = ?, undone_at = ? WHERE id = ?", (UNDONE, at.isoformat(), dream_id)
    )


def last_dream_at(store: SQLiteRecordStore, user_id: str, level: int = 1) -> datetime | None:
    """When this user's last dream of this level finished (undone ones count too)."""
    row = store.fetchone(
        "SELECT finished_at FROM dreams WHERE user_id = ? AND level = ? ORDER BY rowid DESC LIMIT 1",
        (user_id, level),
    )
    return None if row is None else datetime.fromisoformat(row[0])


def dream_owner(store: SQLiteRecordStore, dream_id: str) -> str | None:
    """The user a dream belongs to (for the admin CLI), or None."""
    row = store.fetchone("SELECT user_id FROM dreams WHERE id = ?", (dream_id,))
    return None if row is None else str(row[0])


def dream_ids_with_prefix(store: SQLiteRecordStore, prefix: str, limit: int = 5) -> list[tuple[str, str]]:
    """Up to ``limit`` ``(dream id, user id)`` pairs whose id starts with ``prefix`` (admin CLI)."""
    rows = store.fetchall(
        "SELECT id, user_id FROM dreams WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        (prefix, prefix + "\U0010ffff", limit),
    )
    return [(str(r[0]), str(r[1])) for r in rows]
