"""Work done on a helper thread beside the query encoder.

The query encoder spends most of a recall in BLAS calls that release the GIL, and the
text-only paths (keyword, graph) spend most of theirs in SQLite statements that release
it too, and read neither the embedding nor each other's candidates. With a second CPU
the two run at the same time: a recall then takes about the encoder's time plus what
comes after it, instead of the sum (docs/BENCHMARKS.md, session 16). On one CPU the
thread would only take turns with the encoder, so the work runs in the caller.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

__all__ = ["BesideEncoder", "held_by_caller", "spare_cpu"]

A = TypeVar("A")
B = TypeVar("B")


def held_by_caller(store: object) -> bool:
    """Whether the calling thread holds ``store`` inside a transaction (its ``in_transaction_here()``).

    A helper thread reading that store would wait for the caller, who waits for the helper:
    such a recall runs its paths in the caller. A store without the method is never held so.
    """
    held = getattr(store, "in_transaction_here", None)
    return bool(held()) if callable(held) else False


def spare_cpu() -> bool:
    """Whether this process may run on more than one CPU (a helper thread can run beside it)."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS, Windows)
        return (os.cpu_count() or 1) > 1


class BesideEncoder:
    """Runs one function on a helper thread while the caller runs another.

    The helper threads start on first use and wait idle between calls; a call that
    finds them all busy (other threads recalling on the same pipeline) queues for one.

    Args:
        threads: Helper threads (concurrent recalls beyond this many queue).
    """

    def __init__(self, threads: int = 2) -> None:
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def run(self, beside: Callable[[], A], here: Callable[[], B]) -> tuple[A, B]:
        """``beside()`` on a helper thread and ``here()`` in the caller; both results.

        Both have finished when this returns or raises; an exception of either is
        raised (``here``'s when both raise).
        """
        future = self._executor().submit(beside)
        try:
            mine = here()
        except BaseException:
            wait([future])  # no work left running behind the caller's error
            raise
        return future.result(), mine

    def _executor(self) -> ThreadPoolExecutor:
        """The helper threads of this process (a forked child starts its own: it has none of the parent's)."""
        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="dreammem-recall")
                self._pid = os.getpid()
            return self._pool
