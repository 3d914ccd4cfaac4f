"""A circuit breaker for a remote backend: fail fast while it is known to be down.

Once a call found the server unreachable, the breaker *opens*: every call fails at
once with the same typed, retryable error instead of waiting out the timeout again.
After ``retry_after`` seconds the next call starts one probe in a background thread
(and still fails fast); when the probe succeeds the breaker *closes* and calls go
to the server again. So only the first call after an outage starts waits, bounded
by the backend's own timeout. An explicit retry (:meth:`CircuitBreaker.reset`) lets
the next call through at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from dreammem.errors import GraphUnavailableError

__all__ = ["CircuitBreaker"]

log = logging.getLogger(__name__)


class CircuitBreaker:
    """Open after a failure, probe in the background, close when the probe succeeds.

    Args:
        name: What is guarded (for messages).
        probe: A bounded call that raises when the server is still down.
        retry_after: Seconds between probes while open.
        clock: A monotonic clock (tests pass their own).
    """

    def __init__(
        self,
        name: str,
        probe: Callable[[], None],
        *,
        retry_after: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._probe = probe
        self.retry_after = retry_after
        self._clock = clock
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._next_probe = 0.0
        self._probing: threading.Thread | None = None

    @property
    def is_open(self) -> bool:
        """True while calls fail fast."""
        return self._reason is not None

    @property
    def probing(self) -> bool:
        """True while a background probe is in flight."""
        return self._probing is not None

    def check(self) -> None:
        """Call before each request.

        Raises:
            GraphUnavailableError: the breaker is open (at once, without a request).
        """
        with self._lock:
            reason = self._reason
            if reason is None:
                return
            if self._probing is None and self._clock() >= self._next_probe:
                self._probing = threading.Thread(
                    target=self._run_probe, name=f"probe {self.name}", daemon=True
                )
                self._probing.start()
        raise GraphUnavailableError(f"{self.name} is unavailable (failing fast until it answers): {reason}")

    def opened(self, reason: BaseException) -> None:
        """A request found the server unreachable: fail fast from now on."""
        with self._lock:
            if self._reason is None:
                log.warning("%s unreachable, failing fast until a probe succeeds: %s", self.name, reason)
            self._reason = f"{type(reason).__name__}: {reason}"[:300]
            self._next_probe = self._clock() + self.retry_after

    def closed(self) -> None:
        """A request succeeded: the server is back."""
        with self._lock:
            if self._reason is not None:
                log.info("%s answers again", self.name)
            self._reason = None

    def reset(self) -> None:
        """Let the next call go to the server (an explicit retry)."""
        with self._lock:
            self._reason = None

    def _run_probe(self) -> None:
        try:
            self._probe()
        except Exception as exc:  # the probe's only job is to tell up from down
            self.opened(exc)
        else:
            self.closed()
        finally:
            with self._lock:
                self._probing = None
