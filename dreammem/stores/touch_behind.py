"""Accesses written behind the recall that made them: :class:`TouchBehind`.

On a store whose every write is a network round trip, recall hands its hits' accesses
(``touch``) to a writer thread and answers at once. The writer writes them in the order
given, each with its own time and count, as soon as it can; :meth:`TouchBehind.close`
(called by the store's ``close``) writes whatever is still waiting, so none is lost
while the store is there to write to. A write that fails is logged and dropped, as a
failing ``touch`` in recall always was (recall never fails for its bookkeeping).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime

__all__ = ["TouchBehind"]

log = logging.getLogger(__name__)

Touch = Callable[[str, Sequence[str], datetime], None]


class TouchBehind:
    """Writes ``touch(user_id, ids, at)`` calls on a daemon thread, in order (thread-safe).

    Args:
        touch: The store's synchronous ``touch``.
    """

    def __init__(self, touch: Touch) -> None:
        self._touch = touch
        self._waiting: deque[tuple[str, tuple[str, ...], datetime]] = deque()
        self._ready = threading.Condition()
        self._writing = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Write this access soon (at once, after :meth:`close`)."""
        if not ids:
            return
        with self._ready:
            if self._closed:
                closed = True
            else:
                closed = False
                self._waiting.append((user_id, tuple(ids), at))
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="dreammem-touch", daemon=True)
                    self._thread.start()
                self._ready.notify()
        if closed:
            self._touch(user_id, ids, at)

    def flush(self) -> None:
        """Write every access waiting now (in this thread)."""
        with self._writing:
            while True:
                with self._ready:
                    if not self._waiting:
                        return
                    user_id, ids, at = self._waiting.popleft()
                try:
                    self._touch(user_id, ids, at)
                except Exception as exc:  # bookkeeping: never fails a recall, nor the writer
                    log.warning("recording access failed: %s", exc)

    def close(self) -> None:
        """Write what is waiting and stop the writer (idempotent)."""
        with self._ready:
            self._closed = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join()
        self.flush()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._waiting and not self._closed:
                    self._ready.wait()
                if self._closed:
                    return
            self.flush()
