"""A real count of Bolt round trips: every time a driver socket reads after it wrote.

The Neo4j driver sends a request's messages (pipelined: BEGIN, RUN, PULL) with one write
and then reads the answers; each switch from writing to reading on a socket is one round
trip to the server. :func:`counting_round_trips` counts them on every socket of the
driver, whatever thread or pooled connection made them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from neo4j._async_compat.network import BoltSocketBase


class RoundTrips:
    """The round trips counted so far (read :attr:`count`; :meth:`reset` to start again)."""

    def __init__(self) -> None:
        self.count = 0
        self._wrote: dict[int, bool] = {}
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.count = 0

    def wrote(self, sock: object) -> None:
        with self._lock:
            self._wrote[id(sock)] = True

    def read(self, sock: object) -> None:
        with self._lock:
            if self._wrote.pop(id(sock), False):
                self.count += 1


@contextmanager
def counting_round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[RoundTrips]:
    """Count the round trips of every Bolt socket while the block runs."""
    trips = RoundTrips()
    send: Callable[..., Any] = BoltSocketBase.sendall
    receive: Callable[..., Any] = BoltSocketBase.recv_into

    def sendall(self: BoltSocketBase, data: Any) -> Any:
        trips.wrote(self)
        return send(self, data)

    def recv_into(self: BoltSocketBase, *args: Any, **kwargs: Any) -> Any:
        trips.read(self)
        return receive(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(BoltSocketBase, "sendall", sendall)
        patch.setattr(BoltSocketBase, "recv_into", recv_into)
        yield trips
