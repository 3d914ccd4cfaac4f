"""One dream per user at a time, inside a process.

Across processes, a dream's commit checks that its queue entries are still there
(:mod:`dreammem.dream.migrate`), so two processes cannot both consume one queue.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["UserLocks"]


class UserLocks:
    """A lock per user id, created on first use."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def _lock(self, user_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(user_id, threading.Lock())

    @contextmanager
    def hold(self, user_id: str, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the user's lock; yields False (without holding it) when not blocking and busy."""
        lock = self._lock(user_id)
        acquired = lock.acquire(blocking=blocking)
        try:
            yield acquired
        finally:
            if acquired:
                lock.release()

    def busy(self, user_id: str) -> bool:
        """True while a dream for this user runs."""
        return self._lock(user_id).locked()
