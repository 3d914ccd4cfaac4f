"""A bound on every driver call, even on a connection whose server froze mid-answer.

The driver bounds connecting and acquiring a pooled connection, but a query on a
connection already open waits for the server's answer as long as the server's own
keep-alive hint says (two minutes on Neo4j 5's defaults): a server stopped with
SIGSTOP, a host frozen by swapping or a half-open network path hold the caller that
long. :class:`Watchdog` runs each piece of driver work on a worker thread and waits
for it in slices of half the timeout; after each slice it checks on a fresh
connection (the driver's own ``verify_connectivity``, bounded by the timeout) that
the server still answers. A server that does not is given up on: the caller gets a
retryable :class:`~dreammem.errors.GraphUnavailableError` within about 1.5 × the
timeout, and the abandoned work finishes (or fails) on its worker when the server
answers again or the driver drops the connection; its session is closed there. A
server that answers but is slow is waited for, up to ``limit`` seconds (the query
limit the server enforces itself, plus the timeout).

An abandoned write was never acknowledged: a transaction it belonged to is rolled
back (see :meth:`Watchdog.after`); an auto-commit write or a commit abandoned while
in flight may or may not have been applied, like any write whose answer was lost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from dreammem.errors import GraphUnavailableError

__all__ = ["Watchdog"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_WORKERS = 64
"""Worker threads: calls in flight at once (the driver's pool holds 100 connections)."""
_PROBES = 4
"""Threads of their own for the checks, so that a pool busy with slow work cannot delay them."""


class Watchdog:
    """Run driver work on worker threads and give up on a server that stops answering.

    Args:
        name: What is watched (for messages).
        timeout: Seconds a call may wait for a server that does not answer at all.
        probe: A call bounded by ``timeout`` that raises when the server does not answer.
        limit: Seconds a call may wait for a server that answers but is slow (None: no limit).
    """

    def __init__(self, name: str, timeout: float, probe: Callable[[], None], *, limit: float | None) -> None:
        self.name = name
        self.timeout = timeout
        self.limit = limit
        self._probe = probe
        self._pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="dreammem-neo4j")
        self._probes = ThreadPoolExecutor(max_workers=_PROBES, thread_name_prefix="dreammem-neo4j-probe")

    def call(
        self,
        action: str,
        work: Callable[[], T],
        *,
        abandoned: Callable[[Future[T]], None] | None = None,
        slow_ok: bool = False,
    ) -> T:
        """The result of ``work()`` (its exception re-raised), or an error once the server stops answering.

        Args:
            action: What the work does (for messages).
            work: Driver calls; runs on a worker thread.
            abandoned: Told the work's future when the caller gives up on it (to clean up after it).
            slow_ok: Wait past ``limit`` while the server answers (schema work: index builds).

        Raises:
            GraphUnavailableError: the server did not answer a probe while the work waited,
                or the work ran past ``limit`` (retryable; the work is abandoned).
        """
        future = self._pool.submit(work)
        start = time.monotonic()
        while True:
            try:
                return future.result(timeout=self.timeout / 2)
            except TimeoutError:
                pass
            waited = time.monotonic() - start
            reason = self._check(future)
            if reason is None and future.done():
                return future.result()
            if reason is None and not slow_ok and self.limit is not None and waited > self.limit:
                reason = f"no answer after {waited:.1f} s"
            if reason is not None:
                if abandoned is not None:
                    abandoned(future)
                raise GraphUnavailableError(f"{self.name} stopped answering ({action}): {reason}")

    def after(self, future: Future[Any], cleanup: Callable[[], None]) -> None:
        """Run ``cleanup`` on a worker once ``future`` is done (closing what abandoned work used)."""
        future.add_done_callback(lambda _: self._quietly(cleanup))

    def close(self) -> None:
        """Stop taking work; abandoned work still finishes on its worker."""
        self._pool.shutdown(wait=False, cancel_futures=False)
        self._probes.shutdown(wait=False, cancel_futures=True)

    def _check(self, future: Future[T]) -> str | None:
        """None while the server answers a probe (or the work finished meanwhile), else why not."""
        probe: Future[Any] = self._probes.submit(self._probe)
        wait([future, probe], timeout=self.timeout * 1.25, return_when=FIRST_COMPLETED)
        if future.done():
            return None
        if not probe.done():  # the probe is bounded by the timeout itself: a full pool never ran it
            return f"a connectivity check got no answer within {self.timeout:g} s"
        if (error := probe.exception()) is not None:
            return f"a connectivity check failed: {type(error).__name__}: {error}"
        return None

    def _quietly(self, cleanup: Callable[[], None]) -> None:
        try:
            cleanup()
        except Exception as exc:  # cleanup of abandoned work: the server drops what is left
            log.debug("%s: cleanup after abandoned work failed: %s", self.name, exc)
