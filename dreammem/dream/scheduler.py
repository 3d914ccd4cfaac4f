"""An optional background scheduler that dreams when triggers say so.

A daemon thread wakes every ``poll_seconds``, and for every user with queued records
(or a dream log) runs :meth:`~dreammem.DreamMemory.maybe_dream` without blocking: a
user whose dream is already running (on demand, or from another scheduler on the same
memory) is skipped this round, so one user never has two dreams at once. A dream
that fails is logged and retried next round; it never stops the scheduler.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Self

from dreammem.dream.report import DreamReport
from dreammem.errors import ValidationError
from dreammem.types import utcnow

if TYPE_CHECKING:
    from dreammem.memory import DreamMemory

__all__ = ["DreamScheduler"]

log = logging.getLogger(__name__)


class DreamScheduler:
    """Runs due dreams in a background thread.

    Args:
        memory: The memory to dream over.
        poll_seconds: How often to check the triggers.
        clock: The time source (for tests and simulations).

    Example:
        >>> with DreamScheduler(memory, poll_seconds=300):  # doctest: +SKIP
        ...     run_agent()
    """

    def __init__(
        self, memory: DreamMemory, *, poll_seconds: float = 60.0, clock: Callable[[], datetime] = utcnow
    ) -> None:
        if poll_seconds <= 0:
            raise ValidationError("poll_seconds must be positive")
        self.memory = memory
        self.poll_seconds = poll_seconds
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reports: list[DreamReport] = []
        self.failures: list[str] = []

    def users(self) -> list[str]:
        """Users that may have a dream due."""
        return self.memory.store.dream_users()

    def run_once(self) -> list[DreamReport]:
        """Check every user once and run the dreams that are due."""
        done: list[DreamReport] = []
        for user_id in self.users():
            if self._stop.is_set():
                break
            try:
                done.extend(self.memory.maybe_dream(user_id, now=self._clock(), blocking=False))
            except Exception as exc:  # degradation boundary: one user's failure stops nothing
                log.warning("scheduled dream failed: %s: %s", type(exc).__name__, exc)
                self.failures.append(f"{type(exc).__name__}: {exc}")
        self.reports.extend(done)
        return done

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            self.run_once()

    def start(self) -> Self:
        """Start the background thread (idempotent)."""
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="dreammem-scheduler", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Ask the thread to stop and wait for the dream in progress to finish."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
