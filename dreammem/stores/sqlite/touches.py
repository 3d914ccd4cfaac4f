"""Accesses recall could not write yet: held until the write lock is free.

Recall records each hit's access (time and count) in the store. Writing it needs SQLite's
write lock; while another process or thread holds that lock (a long ``add_many``, a
dream), waiting for it would make the recall wait too, up to the busy timeout. The store
writes the accesses only when the lock is free at once, and holds them here otherwise;
the next access that gets the lock, or closing the store, writes them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime

__all__ = ["MAX_PENDING", "PendingTouches", "TouchRow"]

log = logging.getLogger(__name__)

MAX_PENDING = 100_000
"""Records whose accesses are held at most; past it the oldest are dropped (with a warning)."""

TouchRow = tuple[str, int, str, str]
"""``(last accessed at, times accessed, user id, record id)``: one record's held accesses."""


class PendingTouches:
    """The accesses of records waiting to be written, by user and record (thread-safe).

    Each record keeps the time of its latest access given and how many accesses it had.
    """

    def __init__(self, limit: int = MAX_PENDING) -> None:
        self.limit = limit
        self._held: dict[tuple[str, str], tuple[str, int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._held)

    def add(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """One access of each of these records of this user, at ``at``."""
        when = at.isoformat()
        with self._lock:
            for record_id in dict.fromkeys(ids):
                key = (user_id, record_id)
                count = self._held.pop(key, ("", 0))[1]
                self._held[key] = (when, count + 1)  # re-inserted: the newest access last
            self._bound()

    def take(self) -> list[TouchRow]:
        """Every held access, removed from here (to be written)."""
        with self._lock:
            held, self._held = self._held, {}
        return [(when, count, user, record) for (user, record), (when, count) in held.items()]

    def put_back(self, rows: Sequence[TouchRow]) -> None:
        """Accesses taken but not written: held again, before any added since (they are older)."""
        with self._lock:
            merged = {(user, record): (when, count) for when, count, user, record in rows}
            for key, (when, count) in self._held.items():
                merged[key] = (when, merged.pop(key, ("", 0))[1] + count)
            self._held = merged
            self._bound()

    def _bound(self) -> None:
        """Drop the oldest held accesses past the limit (call with the lock held)."""
        excess = len(self._held) - self.limit
        if excess <= 0:
            return
        for key in list(self._held)[:excess]:
            del self._held[key]
        log.warning("dropped the accesses of %d records that waited too long for the write lock", excess)
