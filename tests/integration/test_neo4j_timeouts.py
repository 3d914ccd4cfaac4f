"""Bounded time against a Neo4j that hangs, and quiet recalls against a real one.

A plain TCP server that accepts connections and never answers stands in for a hung
or half-dead Neo4j (the driver then waits for the Bolt handshake forever unless told
otherwise); the warning test runs against the session's real Neo4j server.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, Neo4jGraphConfig, Neo4jStoreConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import BackendError, GraphUnavailableError
from dreammem.stores import Neo4jGraphStore
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration]

SLACK = 3.0  # seconds of scheduling noise allowed on a loaded 2-core machine


@pytest.fixture
def silent_uri() -> Iterator[str]:
    """A bolt:// URI of a server that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)  # kept open, never answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"bolt://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


def _timed(work: object) -> tuple[float, BaseException | None]:
    start = time.monotonic()
    try:
        work()  # type: ignore[operator]
    except BaseException as exc:  # returned for the test to assert on
        return time.monotonic() - start, exc
    return time.monotonic() - start, None


def test_a_silent_server_fails_within_the_timeout_with_a_retryable_error(silent_uri: str) -> None:
    store = Neo4jGraphStore(silent_uri, timeout=1.0, retry_after=60)
    try:
        took, error = _timed(lambda: store.entity_stats("u1", ["rex"]))
        assert isinstance(error, GraphUnavailableError) and error.is_retryable
        assert 0.5 <= took <= 1.0 + SLACK
        for call in (
            lambda: store.memories_of("u1", ["rex"], per_entity=3),
            lambda: store.remove("u1", ["m1"]),
        ):
            took, error = _timed(call)
            assert isinstance(error, BackendError) and error.is_retryable
            assert took < 0.5  # the breaker is open: no second wait
    finally:
        store.close()


def test_the_default_timeout_is_at_most_five_seconds(silent_uri: str) -> None:
    store = Neo4jGraphStore(silent_uri)
    try:
        assert store.timeout <= 5.0
        took, error = _timed(lambda: store.stats("u1"))
        assert isinstance(error, GraphUnavailableError)
        assert took <= 5.0 + SLACK
    finally:
        store.close()


def test_graph_only_mode_on_a_silent_server_degrades_without_waiting_per_call(
    tmp_path: Path, silent_uri: str
) -> None:
    config = DreamMemConfig(graph=Neo4jGraphConfig(uri=silent_uri, timeout=1.0))
    with DreamMemory(tmp_path / "store", config=config, embedder=HashingEmbedder()) as memory:
        took, error = _timed(lambda: memory.add("Caroline adopted a puppy named Rex.", user_id="u1"))
        assert error is None and took <= 1.0 + SLACK  # the graph's share waits in the outbox
        start = time.monotonic()
        for n in range(5):
            memory.add(f"Rex loves Cannon Beach, walk {n}.", user_id="u1")
            result = memory.recall("Where does Rex go?", user_id="u1", k=3)
            assert "graph" in result.degraded and "Unavailable" in result.degraded["graph"]
            assert result.hits  # the other paths still answer
        assert time.monotonic() - start < 5 * 0.5 + SLACK
        assert memory.stats()["graph_outbox"] == 6


@pytest.mark.neo4j
def test_graph_recalls_log_and_warn_nothing(
    tmp_path: Path, neo4j_server: Neo4jServer, caplog: pytest.LogCaptureFixture
) -> None:
    user = f"quiet-{uuid.uuid4().hex[:8]}"
    config = DreamMemConfig(graph=Neo4jGraphConfig(uri=neo4j_server.uri))
    with DreamMemory(tmp_path / "store", config=config, embedder=HashingEmbedder()) as memory:
        try:
            memory.add_many(
                [
                    {"content": "Caroline adopted a puppy named Rex.", "user_id": user},
                    {"content": "Rex loves running at Cannon Beach.", "user_id": user},
                ]
            )
            caplog.set_level(logging.INFO, logger="neo4j")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for query in ("Where does Caroline go?", "Tell me about Rex", "Portland"):
                    result = memory.recall(query, user_id=user, k=3, paths=["graph"])
                    assert not result.degraded
            assert [w.message for w in caught] == []
            assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
        finally:
            assert memory.graph is not None
            memory.graph.clear(user)


def test_the_whole_store_on_a_silent_server_fails_within_its_timeout(silent_uri: str) -> None:
    config = DreamMemConfig(store=Neo4jStoreConfig(timeout=1.0))
    start = time.monotonic()
    with pytest.raises(BackendError) as caught:
        DreamMemory(silent_uri, config=config, embedder=HashingEmbedder())
    assert caught.value.is_retryable
    assert time.monotonic() - start < 1.0 + SLACK
