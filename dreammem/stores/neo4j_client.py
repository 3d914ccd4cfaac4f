"""One bounded connection to a Neo4j server, shared by the stores of the Neo4j backend.

:class:`Neo4jClient` owns the driver, the circuit breaker and the transactions:

* every call is bounded: connecting, the Bolt handshake and acquiring a pooled
  connection share ``timeout`` (default 5 s: a server that accepts connections and
  never answers fails there), every query and transaction carries
  ``query_timeout`` as its server-side limit, and a server that stops answering on a
  connection already open (frozen, SIGSTOP) is given up on within about 1.5 ×
  ``timeout`` (:class:`~dreammem.stores.neo4j_watch.Watchdog`);
* a server found unreachable opens a :class:`~dreammem.stores.breaker.CircuitBreaker`,
  so later calls fail at once with a retryable :class:`~dreammem.errors.GraphUnavailableError`
  until a background probe sees it answer again;
* :meth:`Neo4jClient.transaction` opens one explicit transaction per thread; every
  :meth:`Neo4jClient.run` of that thread joins it (nested calls join the outer one),
  calls outside one run in their own auto-commit transaction;
* driver errors become DreamMem's (:func:`dreammem.stores.neo4j.translated`).

Queries are parameterised Cypher; only schema statements built from validated
integers and constant names are formatted.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from dreammem.errors import BackendError, ConfigError, GraphUnavailableError
from dreammem.stores.breaker import CircuitBreaker
from dreammem.stores.neo4j_watch import Watchdog

try:
    import neo4j
    from neo4j import exceptions as neo4j_errors
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the Neo4j backend needs the neo4j driver: pip install 'dreammem[neo4j]'") from exc

__all__ = ["Neo4jClient", "translated"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_SCHEMA_ATTEMPTS = 8
"""Tries of one schema statement that lost a race with another process (see :meth:`Neo4jClient.schema`)."""
_EQUIVALENT_RULE = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"


@dataclass
class _Open:
    """The transaction a thread has open, and how deep its nesting goes."""

    session: neo4j.Session
    tx: neo4j.Transaction
    depth: int = 1
    stuck: Future[Any] | None = None
    """Work on this transaction the caller gave up on (the server stopped answering)."""

    def dispose(self) -> None:
        """Roll back (if still open) and close the session; never raises."""
        try:
            if not self.tx.closed():
                self.tx.rollback()
        except Exception as exc:  # the server drops an unfinished transaction by itself
            log.warning("rolling back a Neo4j transaction failed: %s", exc)
        finally:
            self.session.close()


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Map driver errors onto DreamMem's error tree (the cause stays chained).

    A server that cannot be reached raises :class:`~dreammem.errors.GraphUnavailableError`
    (retryable); a transient server error or a query past its time limit a retryable
    :class:`~dreammem.errors.BackendError`; rejected credentials a ``ConfigError``;
    anything else a non-retryable ``BackendError``.
    """
    try:
        yield
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
        raise GraphUnavailableError(f"Neo4j is unavailable ({action}): {exc}") from exc
    except neo4j_errors.TransientError as exc:
        raise BackendError(f"Neo4j transient error ({action}): {exc}", is_retryable=True) from exc
    except neo4j_errors.ClientError as exc:
        # A query that ran past its time limit may well finish on a retry.
        timed_out = "TransactionTimedOut" in (exc.code or "")
        raise BackendError(f"Neo4j error ({action}): {exc}", is_retryable=timed_out) from exc
    except neo4j_errors.AuthError as exc:
        raise ConfigError(f"Neo4j rejected the credentials ({action}): {exc}") from exc
    except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
        raise BackendError(f"Neo4j error ({action}): {exc}", is_retryable=False) from exc


def _schema_race(exc: neo4j_errors.Neo4jError) -> bool:
    """A schema statement lost a race with another process creating the same rule."""
    return isinstance(exc, neo4j_errors.TransientError) or exc.code == _EQUIVALENT_RULE


class Neo4jClient:
    """A driver with timeouts, a breaker and per-thread transactions.

    Args:
        uri: ``bolt://host:7687`` or ``neo4j://host:7687`` (cluster routing).
        auth: ``(user, password)``, or None for a server with auth disabled.
        database: The database holding the store.
        timeout: Seconds to connect, hand-shake and get a pooled connection.
        query_timeout: Seconds a query or transaction may run on the server (None: no limit).
        connection_timeout: Seconds to wait for a TCP connection (default and at most ``timeout``).
        retry_after: Seconds between background probes once the server was found unreachable.

    Raises:
        ConfigError: the URI is invalid or a timeout is not positive.
    """

    def __init__(
        self,
        uri: str,
        *,
        auth: tuple[str, str] | None = None,
        database: str = "neo4j",
        timeout: float = 5.0,
        query_timeout: float | None = 30.0,
        connection_timeout: float | None = None,
        retry_after: float = 10.0,
    ) -> None:
        for name, value in (
            ("timeout", timeout),
            ("query_timeout", 1.0 if query_timeout is None else query_timeout),
            ("connection_timeout", connection_timeout or timeout),
            ("retry_after", retry_after),
        ):
            if not value > 0:
                raise ConfigError(f"{name} must be > 0 seconds, got {value!r}")
        self.uri = uri
        self.database = database
        self.timeout = float(timeout)
        self.query_timeout = None if query_timeout is None else float(query_timeout)
        try:
            self.driver = neo4j.GraphDatabase.driver(
                uri,
                auth=auth,
                connection_timeout=min(connection_timeout or timeout, timeout),
                # Acquiring a connection includes the handshake: a silent server ends here.
                connection_acquisition_timeout=timeout,
                max_transaction_retry_time=0.0,
                notifications_min_severity="OFF",
            )
        except (ValueError, neo4j_errors.ConfigurationError) as exc:
            raise ConfigError(f"invalid Neo4j URI {uri!r}: {exc}") from exc
        self._breaker = CircuitBreaker(
            f"Neo4j at {uri}", self.driver.verify_connectivity, retry_after=retry_after
        )
        self._watch = Watchdog(
            f"Neo4j at {uri}",
            self.timeout,
            self.driver.verify_connectivity,
            limit=None if self.query_timeout is None else self.query_timeout + self.timeout,
        )
        self._local = threading.local()
        self._closed = False
        self._version: tuple[int, ...] | None = None

    def __repr__(self) -> str:
        return f"Neo4jClient({self.uri!r}, database={self.database!r})"

    @contextmanager
    def guarded(self, action: str) -> Iterator[None]:
        """Fail fast while the breaker is open; typed errors; open the breaker when unreachable."""
        if self._closed:
            raise BackendError(f"the Neo4j store at {self.uri} is closed; open a new DreamMemory to use it")
        self._breaker.check()
        try:
            with translated(action):
                yield
        except GraphUnavailableError as exc:
            self._breaker.opened(exc)
            raise
        self._breaker.closed()

    def retry_now(self) -> None:
        """Let the next call go to the server even while it is failing fast."""
        self._breaker.reset()

    # -- transactions --------------------------------------------------------------

    def current(self) -> neo4j.Transaction | None:
        """The transaction this thread has open, if any (the graph store joins it)."""
        open_: _Open | None = getattr(self._local, "open", None)
        return None if open_ is None else open_.tx

    @contextmanager
    def transaction(self) -> Iterator[neo4j.Transaction]:
        """One atomic unit of work in this thread; nested calls join the outer one.

        Raises:
            BackendError: the server failed; the whole unit was rolled back.
        """
        open_: _Open | None = getattr(self._local, "open", None)
        if open_ is not None:
            open_.depth += 1
            try:
                yield open_.tx
            finally:
                open_.depth -= 1
            return
        with self.guarded("begin"):
            open_ = self._bounded("begin", self._begin, cleanup=self._dispose_begun)
        self._local.open = open_
        try:
            yield open_.tx
        except BaseException:
            self._local.open = None
            if open_.stuck is not None:  # after the abandoned work is done, on its worker
                self._watch.after(open_.stuck, open_.dispose)
            else:
                try:
                    self._bounded("rollback", open_.dispose, cleanup=lambda _: None)
                except GraphUnavailableError as exc:
                    log.warning("rolling back a Neo4j transaction: %s", exc)
            raise
        self._local.open = None
        if open_.stuck is not None:  # a query gave up inside, and the caller swallowed its error
            self._watch.after(open_.stuck, open_.dispose)
            raise GraphUnavailableError(f"Neo4j at {self.uri} stopped answering inside this transaction")
        with self.guarded("commit"):
            self._bounded("commit", lambda: self._commit(open_), cleanup=lambda _: None)

    def _begin(self) -> _Open:
        session = self.driver.session(database=self.database)
        try:
            return _Open(session, session.begin_transaction(timeout=self.query_timeout))
        except BaseException:
            session.close()
            raise

    def _dispose_begun(self, future: Future[_Open]) -> None:
        """Close a transaction whose begin was abandoned, once the begin is done."""

        def dispose() -> None:
            if future.exception() is None:
                future.result().dispose()

        self._watch.after(future, dispose)

    @staticmethod
    def _commit(open_: _Open) -> None:
        try:
            open_.tx.commit()
        finally:
            open_.session.close()

    def _bounded(
        self,
        action: str,
        work: Callable[[], T],
        *,
        cleanup: Callable[[Future[T]], None] | None = None,
        slow_ok: bool = False,
    ) -> T:
        """``work()`` on a worker thread, given up on once the server stops answering (see Watchdog).

        ``cleanup`` is told the future of abandoned work (None: the work cleans up after itself).
        """
        return self._watch.call(action, work, abandoned=cleanup, slow_ok=slow_ok)

    def run(self, action: str, cypher: str, /, **params: Any) -> list[neo4j.Record]:
        """Run one query (in this thread's transaction if one is open) and return its rows."""
        if self.current() is not None:
            return self.within(action, lambda tx: list(tx.run(cypher, params)))
        bounded = neo4j.Query(cypher, timeout=self.query_timeout)  # type: ignore[arg-type]
        with self.guarded(action):
            return self._bounded(action, lambda: self._auto_commit(bounded, params))

    def within(self, action: str, work: Callable[[neo4j.Transaction], T]) -> T:
        """``work(tx)`` in this thread's open transaction, bounded like every call (see :meth:`run`).

        Raises:
            BackendError: no transaction is open in this thread, or the server failed.
            GraphUnavailableError: the server stopped answering; the transaction is given up.
        """
        open_: _Open | None = getattr(self._local, "open", None)
        if open_ is None:
            raise BackendError("Neo4jClient.within needs an open transaction (use transaction())")
        with self.guarded(action):
            if open_.stuck is not None:
                raise GraphUnavailableError(f"Neo4j at {self.uri} stopped answering inside this transaction")

            def stuck(future: Future[T]) -> None:
                open_.stuck = future

            tx = open_.tx
            return self._bounded(action, lambda: work(tx), cleanup=stuck)

    def _auto_commit(self, query: neo4j.Query, params: dict[str, Any]) -> list[neo4j.Record]:
        with self.driver.session(database=self.database) as session:
            return list(session.run(query, params))

    def scalar(self, action: str, cypher: str, /, **params: Any) -> Any:
        """The first column of the first row (None when there is none)."""
        rows = self.run(action, cypher, **params)
        return rows[0][0] if rows else None

    def schema(self, statements: Sequence[str]) -> None:
        """Run schema statements, each in its own auto-commit transaction (never in a unit).

        The statements are idempotent (``IF NOT EXISTS``), yet processes creating the
        schema of a new database at once deadlock on its label locks or see "an
        equivalent index already exists": such a statement is run again (then a no-op),
        up to :data:`_SCHEMA_ATTEMPTS` times.
        """
        with self.guarded("schema"):
            self._bounded("schema", lambda: self._schema(statements), slow_ok=True)

    def _schema(self, statements: Sequence[str]) -> None:
        with self.driver.session(database=self.database) as session:
            for statement in statements:
                for attempt in range(1, _SCHEMA_ATTEMPTS + 1):
                    try:
                        session.run(neo4j.Query(statement)).consume()  # type: ignore[arg-type]
                        break
                    except neo4j_errors.Neo4jError as exc:
                        if not _schema_race(exc) or attempt == _SCHEMA_ATTEMPTS:
                            raise
                        time.sleep(random.uniform(0.05, 0.2) * attempt)

    def server_version(self) -> tuple[int, ...]:
        """The server's version as its Bolt agent reports it (``Neo4j/2026.08.1`` -> ``(2026, 8, 1)``).

        Asked once per client; ``()`` when the agent names no version.
        """
        if self._version is None:
            with self.guarded("server_info"):
                agent = self._bounded("server_info", self.driver.get_server_info).agent
            found = re.match(r"[^/]*/(\d+(?:\.\d+)*)", agent or "")
            self._version = tuple(int(part) for part in found.group(1).split(".")) if found else ()
        return self._version

    def next_ids(self, name: str, count: int) -> int:
        """Reserve ``count`` consecutive integers of a named counter; returns the first.

        Runs in its own short transaction (never the caller's): a rolled-back unit
        leaves a gap, never a duplicate, and no unit holds the counter's lock.
        """
        query = (
            "MERGE (c:DMCounter {name: $name}) SET c.value = coalesce(c.value, 0) + $count "
            "RETURN c.value - $count + 1 AS first"
        )

        def reserve() -> Any:
            with self.driver.session(database=self.database) as session:
                return session.execute_write(
                    lambda tx: tx.run(query, name=name, count=count).single(strict=True)[0]
                )

        with self.guarded("next_ids"):
            first = self._bounded("next_ids", reserve)
        return int(first)

    def close(self) -> None:
        """Close the driver (idempotent); later calls raise :class:`BackendError`."""
        if not self._closed:
            self._closed = True
            self._watch.close()
            self.driver.close()
