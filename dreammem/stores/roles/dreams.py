"""The dream's roles: the queue of records waiting for a dream, task state, and the dream log."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreammem.types import MemoryRecord

__all__ = ["DreamLog", "DreamLogRow", "DreamQueue", "TaskStates"]


@dataclass(frozen=True, slots=True)
class DreamLogRow:
    """One dream in the dream log; ``report`` and ``undo`` are JSON text."""

    dream_id: str
    user_id: str
    level: int
    trigger: str
    started_at: str
    finished_at: str
    status: str
    report: str
    undo: str


class DreamQueue(ABC):
    """Records waiting for their user's next dream, oldest first."""

    @abstractmethod
    def enqueue(self, records: Sequence[MemoryRecord]) -> None:
        """Queue records for the user's next dream."""

    @abstractmethod
    def queued(self, user_id: str, limit: int | None = None) -> list[MemoryRecord]:
        """Queued records of this user, oldest first."""

    @abstractmethod
    def queue_size(self, user_id: str) -> int:
        """How many records wait for this user's next dream."""

    @abstractmethod
    def dequeue(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove records from the user's queue."""

    @abstractmethod
    def queue_entries(self, user_id: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """``(record_id, enqueued_at)`` of these queued records."""

    @abstractmethod
    def requeue(self, user_id: str, entries: Sequence[tuple[str, str]]) -> int:
        """Queue entries again (for records that still exist); returns how many."""

    @abstractmethod
    def oldest_queued_at(self, user_id: str) -> datetime | None:
        """When the user's oldest queue entry was made."""

    @abstractmethod
    def dream_users(self) -> list[str]:
        """Users with a queue entry or a logged dream."""


class TaskStates(ABC):
    """The task state each session saved (a goal, a task type), by user and session."""

    @abstractmethod
    def get_task_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The saved task state of a session ({} when none)."""

    @abstractmethod
    def set_task_state(self, user_id: str, session_id: str, state: dict[str, Any], at: datetime) -> None:
        """Replace the task state of a session."""

    @abstractmethod
    def task_states(self, user_id: str) -> dict[str, dict[str, Any]]:
        """Every saved task state of this user, by session id."""

    @abstractmethod
    def latest_task_state(self, user_id: str) -> dict[str, Any]:
        """The task state this user saved last ({} when none)."""


class DreamLog(ABC):
    """Every dream run: its report and undo data (the journal ``undo_dream`` reads)."""

    @abstractmethod
    def add_dream(self, row: DreamLogRow) -> None:
        """Log a dream (inside the dream's transaction)."""

    @abstractmethod
    def get_dream(self, dream_id: str) -> DreamLogRow | None:
        """One logged dream, or None."""

    @abstractmethod
    def dream_ids_with_prefix(self, prefix: str, limit: int = 5) -> list[tuple[str, str]]:
        """Up to ``limit`` ``(dream id, user id)`` pairs whose id starts with ``prefix``."""

    @abstractmethod
    def list_dreams(self, user_id: str, limit: int) -> list[DreamLogRow]:
        """The logged dreams of this user, newest first."""

    @abstractmethod
    def dreams_after(self, dream_id: str, user_id: str, status: str) -> list[str]:
        """Ids of this user's dreams of this status logged after ``dream_id``, oldest first."""

    @abstractmethod
    def set_dream_status(self, dream_id: str, status: str, at: datetime) -> None:
        """Mark a logged dream (undone, at this time)."""

    @abstractmethod
    def dream_times(self, user_id: str, level: int) -> tuple[datetime | None, datetime | None]:
        """When the user's first dream of this level started and the last one finished."""
