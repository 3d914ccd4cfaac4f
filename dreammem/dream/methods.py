"""The facade's dream methods: :class:`DreamMethods`, mixed into :class:`~dreammem.DreamMemory`.

Each is one line over :mod:`dreammem.dream.service` (locking, retry, triggers, phase
ends) or :mod:`dreammem.dream.undo`, run on the facade's engine.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from dreammem.dream import service as dream_service
from dreammem.dream.context import DreamContext
from dreammem.dream.journal import list_reports
from dreammem.dream.report import DreamReport
from dreammem.dream.undo import UndoResult, undo_dream
from dreammem.twins import async_twin
from dreammem.validation import check_k, check_user_id, require_id

if TYPE_CHECKING:
    from dreammem.engine import Engine

__all__ = ["DreamMethods"]


class DreamMethods:
    """Dream, undo, trigger checks, phase ends and the dream log of the facade."""

    engine: Engine
    """The engine beneath the facade (provided by it)."""

    def dream(
        self,
        *,
        user_id: str,
        dry_run: bool = False,
        level: int = 1,
        context: DreamContext | None = None,
        now: datetime | None = None,
    ) -> DreamReport:
        """Consolidate the user's short-term queue now (level 2: long-term housekeeping).

        Atomic: the queue is emptied exactly when the long-term writes commit. With
        ``dry_run`` nothing is written and the report says what would happen.
        """
        return dream_service.dream(
            self.engine, user_id, dry_run=dry_run, level=level, context=context, now=now
        )

    def undo_dream(self, dream_id: str, *, user_id: str) -> UndoResult:
        """Restore the user's memory as it was before a dream (newest dreams first)."""
        return undo_dream(self.engine, require_id(dream_id, "dream_id"), check_user_id(user_id))

    def maybe_dream(
        self, user_id: str, *, now: datetime | None = None, blocking: bool = True
    ) -> list[DreamReport]:
        """Run the dreams the triggers say are due (queue size, time, second-level period)."""
        return dream_service.maybe_dream(self.engine, user_id, now=now, blocking=blocking)

    def end_task(
        self,
        *,
        user_id: str,
        session_id: str | None = None,
        outcome: str | None = None,
        success: bool | None = None,
        now: datetime | None = None,
    ) -> list[DreamReport]:
        """A task phase ended: store its outcome as a procedural record, dream if due."""
        return dream_service.end_phase(
            self.engine,
            user_id,
            session_id=session_id,
            outcome=outcome,
            success=success,
            kind="task",
            now=now,
        )

    def end_session(self, *, user_id: str, session_id: str, now: datetime | None = None) -> list[DreamReport]:
        """A session ended: dream if due."""
        return dream_service.end_phase(self.engine, user_id, session_id=session_id, kind="session", now=now)

    def dreams(self, *, user_id: str, limit: int = 20) -> list[DreamReport]:
        """The user's dream log, newest first."""
        return [
            report for report, _ in list_reports(self.engine.store, check_user_id(user_id), check_k(limit))
        ]

    adream = async_twin(dream)
    aundo_dream = async_twin(undo_dream)
    amaybe_dream = async_twin(maybe_dream)
    aend_task = async_twin(end_task)
    aend_session = async_twin(end_session)
    adreams = async_twin(dreams)
