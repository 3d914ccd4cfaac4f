"""When to dream.

By default whichever comes first (docs/concepts.md, "Dreaming"):

* ``queue_limit``: the user's short-term queue holds ``queue_limit`` records (200);
* ``interval``: ``interval_hours`` (24) have passed since the user's last dream (or,
  before the first dream, since the oldest queued record) and the queue is not empty;
* ``phase_end``: a task or session ended (``end_task``/``end_session``) with records queued.

With ``time_first`` the schedule leads: only ``interval`` triggers, and the queue size
acts as a backstop at ``queue_backstop`` records; the end of a phase does not trigger.

The second-level dream is due every ``second_level_interval_days`` once the user has
had at least one first-level dream.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from dreammem.config import DreamConfig
from dreammem.dream import journal
from dreammem.stores.base import RecordStore

__all__ = ["TriggerDecision", "TriggerState", "check_second_level", "check_triggers", "trigger_state"]


@dataclass(frozen=True, slots=True)
class TriggerState:
    """What the triggers look at for one user.

    Attributes:
        queue_size: Records waiting in the short-term queue.
        last_dream_at: When the last first-level dream finished (None: never).
        oldest_queued_at: When the oldest queued record was queued (None: empty queue).
        phase_ended: A task or session just ended.
    """

    queue_size: int
    last_dream_at: datetime | None
    oldest_queued_at: datetime | None
    phase_ended: bool = False


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    """Whether a dream is due, and which trigger said so (``not_due`` / ``empty`` if none)."""

    due: bool
    reason: str


def trigger_state(store: RecordStore, user_id: str, *, phase_ended: bool = False) -> TriggerState:
    """Read the trigger state of a user from the store."""
    size = store.queue_size(user_id)
    oldest = store.oldest_queued_at(user_id)
    return TriggerState(size, journal.last_dream_at(store, user_id, 1), oldest, phase_ended)


def check_triggers(state: TriggerState, config: DreamConfig, now: datetime) -> TriggerDecision:
    """Decide whether a first-level dream is due (see the module docstring)."""
    if state.queue_size == 0:
        return TriggerDecision(False, "empty")
    since = state.last_dream_at or state.oldest_queued_at
    elapsed = since is not None and now - since >= timedelta(hours=config.interval_hours)
    if config.time_first:
        if elapsed:
            return TriggerDecision(True, "interval")
        if state.queue_size >= config.queue_backstop:
            return TriggerDecision(True, "count_backstop")
        return TriggerDecision(False, "not_due")
    if state.queue_size >= config.queue_limit:
        return TriggerDecision(True, "queue_limit")
    if elapsed:
        return TriggerDecision(True, "interval")
    if state.phase_ended:
        return TriggerDecision(True, "phase_end")
    return TriggerDecision(False, "not_due")


def check_second_level(store: RecordStore, user_id: str, config: DreamConfig, now: datetime) -> bool:
    """True when the user's second-level dream is due."""
    first = journal.last_dream_at(store, user_id, 1)
    if first is None:
        return False
    last = journal.last_dream_at(store, user_id, 2)
    if last is None:
        last = store.dream_times(user_id, 1)[0] or first
    return now - last >= timedelta(days=config.second_level_interval_days)
