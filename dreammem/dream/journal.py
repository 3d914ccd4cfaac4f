"""The dream log: one row per dream with its report and what undo needs.

Rows live in the ``dreams`` table (migration 4). They are written inside the dream's
own transaction, so a dream is logged exactly when its changes commit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreammem.dream.report import DreamReport
from dreammem.errors import NotFoundError
from dreammem.stores.base import DreamLogRow, RecordStore
from dreammem.system_meta import NOTES_VERSION, moved_out

__all__ = [
    "UndoData",
    "dream_ids_with_prefix",
    "last_dream_at",
    "later_dreams",
    "list_reports",
    "load_entry",
    "mark_undone",
    "queue_entries",
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
    """

    inserted: list[str] = field(default_factory=list)
    before: list[dict[str, Any]] = field(default_factory=list)
    after_status: dict[str, str] = field(default_factory=dict)
    queue: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> str:
        """Serialise."""
        return json.dumps(
            {
                "inserted": self.inserted,
                "before": self.before,
                "after_status": self.after_status,
                "queue": self.queue,
                "notes": NOTES_VERSION,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> UndoData:
        """Read back :meth:`to_json` (a log written before the notes moved: notes moved out).

        A log without ``notes`` was written at notes version 2 (its records have ``system``)
        or 1 (they have none): :func:`~dreammem.system_meta.moved_out` tells them apart.
        """
        data = json.loads(text)
        written = int(data.get("notes", 2))
        return cls(
            inserted=list(data["inserted"]),
            before=[moved_out(b, written if "system" in b else 1) for b in data["before"]],
            after_status=dict(data["after_status"]),
            queue=[(q[0], q[1]) for q in data["queue"]],
        )


def queue_entries(store: RecordStore, user_id: str, ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(record_id, enqueued_at)`` of these queued records (for undo)."""
    return store.queue_entries(user_id, ids)


def write_entry(store: RecordStore, report: DreamReport, undo: UndoData) -> None:
    """Log a dream (call inside the dream's transaction)."""
    store.add_dream(
        DreamLogRow(
            dream_id=report.dream_id,
            user_id=report.user_id,
            level=report.level,
            trigger=report.trigger,
            started_at=report.started_at,
            finished_at=report.finished_at,
            status=DONE,
            report=json.dumps(report.to_dict(), ensure_ascii=False),
            undo=undo.to_json(),
        )
    )


def load_entry(store: RecordStore, dream_id: str, user_id: str) -> tuple[DreamReport, UndoData, str]:
    """The report, undo data and status (``done``/``undone``) of one of this user's dreams.

    Raises:
        NotFoundError: no such dream for this user.
    """
    row = store.get_dream(dream_id)
    if row is None or row.user_id != user_id:
        raise NotFoundError(f"no dream {dream_id!r} for this user")
    return DreamReport.from_dict(json.loads(row.report)), UndoData.from_json(row.undo), row.status


def list_reports(store: RecordStore, user_id: str, limit: int = 20) -> list[tuple[DreamReport, str]]:
    """The dreams of this user, newest first, with their status."""
    return [
        (DreamReport.from_dict(json.loads(r.report)), r.status) for r in store.list_dreams(user_id, limit)
    ]


def later_dreams(store: RecordStore, dream_id: str, user_id: str) -> list[str]:
    """Ids of this user's dreams logged after ``dream_id`` and not undone."""
    return store.dreams_after(dream_id, user_id, DONE)


def mark_undone(store: RecordStore, dream_id: str, at: datetime) -> None:
    """Mark a dream undone (inside the undo transaction)."""
    store.set_dream_status(dream_id, UNDONE, at)


def last_dream_at(store: RecordStore, user_id: str, level: int = 1) -> datetime | None:
    """When this user's last dream of this level finished (undone ones count too)."""
    return store.dream_times(user_id, level)[1]


def dream_ids_with_prefix(store: RecordStore, prefix: str, limit: int = 5) -> list[tuple[str, str]]:
    """Up to ``limit`` ``(dream id, user id)`` pairs whose id starts with ``prefix`` (admin CLI)."""
    return store.dream_ids_with_prefix(prefix, limit)
