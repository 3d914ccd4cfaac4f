"""What the facade's dream methods do: locking, retry, triggers, phase ends.

:class:`~dreammem.memory.DreamMemory` keeps its dream methods one line long; the
logic lives here so that it can be read (and tested) in one place.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime
from typing import TYPE_CHECKING

from dreammem.dream.context import DreamContext
from dreammem.dream.report import DreamReport
from dreammem.dream.runner import run_dream
from dreammem.dream.second_level import run_second_level
from dreammem.dream.triggers import check_second_level, check_triggers, trigger_state
from dreammem.errors import BackendError, ValidationError
from dreammem.types import SOURCE_CONFIDENCE, Kind, Layer, MemoryRecord, Priority, Source, utcnow
from dreammem.validation import check_content, check_event_time, check_id, check_user_id

if TYPE_CHECKING:
    from dreammem.engine import Engine

__all__ = ["dream", "end_phase", "maybe_dream"]

log = logging.getLogger(__name__)

_ATTEMPTS = 3


def dream(
    engine: Engine,
    user_id: str,
    *,
    dry_run: bool = False,
    level: int = 1,
    context: DreamContext | None = None,
    now: datetime | None = None,
    trigger: str = "on_demand",
) -> DreamReport:
    """Run one dream for the user now, one at a time per user, retrying if raced.

    Raises:
        ScopeError: bad user id.
        ValidationError: bad level or time.
        BackendError: the store failed (or kept changing under the dream).
    """
    user = check_user_id(user_id)
    if level not in (1, 2):
        raise ValidationError(f"level must be 1 or 2, got {level!r}")
    reference = check_event_time(now, default=utcnow()) if now is not None else None
    with engine.dream_locks.hold(user):
        return _dream_unlocked(engine, user, dry_run, level, context, reference, trigger)


def _dream_unlocked(
    engine: Engine,
    user: str,
    dry_run: bool,
    level: int,
    context: DreamContext | None,
    now: datetime | None,
    trigger: str,
) -> DreamReport:
    for attempt in range(1, _ATTEMPTS + 1):
        # A busy writer could starve a dream that keeps finding its records changed: the
        # last try of a dream without an LLM (fast) holds the write lock, so it commits.
        exclusive = attempt == _ATTEMPTS and engine.llm is None
        try:
            with engine.lock if exclusive else contextlib.nullcontext():
                if level == 2:
                    return run_second_level(engine, user, dry_run=dry_run, now=now, trigger=trigger)
                return run_dream(engine, user, dry_run=dry_run, context=context, trigger=trigger, now=now)
        except BackendError as exc:
            if not exc.is_retryable or attempt == _ATTEMPTS:
                raise
            log.info("dream raced with another writer (%s); retrying", exc)
    raise AssertionError("unreachable")  # pragma: no cover


def maybe_dream(
    engine: Engine,
    user_id: str,
    *,
    phase_ended: bool = False,
    now: datetime | None = None,
    blocking: bool = True,
) -> list[DreamReport]:
    """Run the dreams that are due for the user (first level, then second level).

    With ``blocking=False`` a user whose dream is already running is skipped.
    """
    user = check_user_id(user_id)
    reference = check_event_time(now, default=utcnow())
    config = engine.config.dream
    reports: list[DreamReport] = []
    with engine.dream_locks.hold(user, blocking=blocking) as held:
        if not held:
            return reports
        decision = check_triggers(
            trigger_state(engine.store, user, phase_ended=phase_ended), config, reference
        )
        if decision.due:
            reports.append(_dream_unlocked(engine, user, False, 1, None, reference, decision.reason))
        if check_second_level(engine.store, user, config, reference):
            reports.append(_dream_unlocked(engine, user, False, 2, None, reference, "second_level_interval"))
    return reports


def end_phase(
    engine: Engine,
    user_id: str,
    *,
    session_id: str | None,
    outcome: str | None = None,
    success: bool | None = None,
    kind: str = "task",
    now: datetime | None = None,
) -> list[DreamReport]:
    """A task or session ended: store the task's outcome, then dream if due.

    Args:
        engine: The engine beneath the facade.
        user_id: The scope.
        session_id: The session the phase ran in.
        outcome: For a task: what happened (the successful path or the lesson of a
            failure); stored at once as a procedural record.
        success: Whether the task succeeded (kept in the record's metadata).
        kind: ``task`` or ``session``.
        now: The time of the phase end.
    """
    user = check_user_id(user_id)
    session = check_id(session_id, "session_id")
    reference = check_event_time(now, default=utcnow())
    if outcome is not None:
        text = check_content(outcome, max_chars=engine.config.write.max_content_chars)
        goal = engine.store.get_task_state(user, session).get("goal") if session else None
        record = MemoryRecord(
            user_id=user,
            content=text,
            layer=Layer.PROCEDURAL,
            kind=Kind.TASK_TRACE,
            source=Source.ASSISTANT,
            session_id=session,
            confidence=SOURCE_CONFIDENCE[Source.ASSISTANT],
            importance=4,
            priority=Priority.HIGH,
            created_at=reference,
            event_time=reference,
            metadata={"success": success, "goal": goal, "phase": kind},
        )
        engine.persist([record], [text], enqueue=[])
    return maybe_dream(engine, user, phase_ended=True, now=reference)
