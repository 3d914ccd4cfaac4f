"""SQLite stays the source of truth when the graph lives on a real Neo4j server.

These tests stop and restart the session's Neo4j server (``scripts/neo4j.sh down`` /
``restart``, which keeps the data and the port) and check that nothing is lost.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.config import DreamMemConfig, EmbeddingConfig, Neo4jGraphConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import GraphUnavailableError
from dreammem.stores import EmbeddedGraphStore, Neo4jGraphStore
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
TEXTS = [
    "Caroline adopted a puppy named Rex.",
    "Rex loves running at Cannon Beach.",
    "Melanie painted a sunset in Portland.",
    "Tom Becker approves purchases above 10k.",
]


def turns(user: str, texts: list[str], start: int = 0) -> list[dict[str, object]]:
    return [
        {"content": t, "user_id": user, "event_time": T0 + timedelta(minutes=start + i)}
        for i, t in enumerate(texts)
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assert_graph_matches_records(memory: DreamMemory, user: str) -> None:
    """The graph holds exactly the user's active records (each with its entities)."""
    assert memory.graph is not None
    active = memory.get_all(user_id=user, limit=1000)
    assert memory.graph.stats(user).memories == len(active)
    mentioned = memory.graph.entities_of(user, [r.id for r in active])
    assert set(mentioned) == {r.id for r in active if r.entities}


@pytest.fixture
def user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def neo4j_memory(tmp_path: Path, neo4j_server: Neo4jServer, user: str) -> Iterator[DreamMemory]:
    config = DreamMemConfig(graph=Neo4jGraphConfig(uri=neo4j_server.uri))
    with DreamMemory(tmp_path / "store", config=config, embedder=HashingEmbedder()) as memory:
        yield memory
        assert memory.graph is not None
        memory.graph.clear(user)


def test_config_file_selects_neo4j(tmp_path: Path, neo4j_server: Neo4jServer, user: str) -> None:
    config_file = tmp_path / "dreammem.toml"
    config_file.write_text(
        f'[embedding]\nmodel = "hashing"\n[graph]\ntype = "neo4j"\nuri = "{neo4j_server.uri}"\n'
    )
    runner = CliRunner()
    store = str(tmp_path / "cli-store")
    for text in TEXTS[:2]:
        out = runner.invoke(app, ["add", text, "-u", user, "-p", store, "--config", str(config_file)])
        assert out.exit_code == 0, out.output
    out = runner.invoke(
        app,
        ["recall", "where does caroline go", "-u", user, "-p", store, "--config", str(config_file), "--json"],
    )
    assert out.exit_code == 0, out.output
    traces = json.loads(out.output)
    assert any("graph" in t["paths"] and "Cannon Beach" in t["content"] for t in traces)
    graph = Neo4jGraphStore(neo4j_server.uri)
    try:
        assert graph.stats(user).memories == 2
    finally:
        graph.clear(user)
        graph.close()


def test_neo4j_and_embedded_recall_alike(tmp_path: Path, neo4j_memory: DreamMemory, user: str) -> None:
    with DreamMemory(tmp_path / "embedded", embedder=HashingEmbedder()) as embedded:
        assert isinstance(embedded.graph, EmbeddedGraphStore)
        for memory in (embedded, neo4j_memory):
            memory.add_many(turns(user, TEXTS))
        assert isinstance(neo4j_memory.graph, Neo4jGraphStore)
        for query in ("Where does Caroline go?", "who approves for tom becker", "Portland"):
            mine = [h.record.content for h in neo4j_memory.recall(query, user_id=user, paths=["graph"])]
            ref = [h.record.content for h in embedded.recall(query, user_id=user, paths=["graph"])]
            assert mine == ref and mine


def test_server_stopped_mid_run_loses_nothing(
    neo4j_memory: DreamMemory, neo4j_server: Neo4jServer, user: str
) -> None:
    memory = neo4j_memory
    first = memory.add_many(turns(user, TEXTS[:2]))
    assert_graph_matches_records(memory, user)
    neo4j_server.stop()
    try:
        # Writes and deletes keep working; the graph's share waits in the outbox.
        later = memory.add_many(turns(user, TEXTS[2:], start=10))
        memory.forget(first[1].id, user_id=user)
        assert memory.stats()["graph_outbox"] == 3
        result = memory.recall("Where does Melanie paint?", user_id=user, k=3)
        assert "graph" in result.degraded and "Unavailable" in result.degraded["graph"]
        assert result.hits and "Melanie" in result.hits[0].record.content
        with pytest.raises(GraphUnavailableError) as info:
            memory.replay_graph()
        assert info.value.is_retryable
        assert memory.stats()["graph_outbox"] == 3
    finally:
        neo4j_server.restart()
    assert memory.replay_graph() == 3
    assert memory.stats()["graph_outbox"] == 0
    assert_graph_matches_records(memory, user)
    assert memory.graph is not None
    assert memory.graph.entities_of(user, [first[1].id]) == {}  # the forgotten one is gone
    hits = memory.recall("Tell me about Tom Becker", user_id=user, k=3, paths=["graph"])
    assert not hits.degraded and hits.hits[0].record.id == later[1].id


def test_outbox_survives_a_process_restart(tmp_path: Path, neo4j_server: Neo4jServer, user: str) -> None:
    """Writes made while the graph was unreachable reach it from a later process."""
    path = tmp_path / "store"
    down = DreamMemConfig(graph=Neo4jGraphConfig(uri=f"bolt://127.0.0.1:{free_port()}"))
    with DreamMemory(path, config=down, embedder=HashingEmbedder()) as memory:
        memory.add_many(turns(user, TEXTS))
        assert memory.stats()["graph_outbox"] == len(TEXTS)
        assert "graph" in memory.recall("Caroline", user_id=user).degraded
    up = DreamMemConfig(graph=Neo4jGraphConfig(uri=neo4j_server.uri))
    with DreamMemory(path, config=up, embedder=HashingEmbedder()) as memory:
        try:
            result = memory.recall("Where does Caroline go?", user_id=user, k=4)  # replays first
            assert not result.degraded
            assert memory.stats()["graph_outbox"] == 0
            assert_graph_matches_records(memory, user)
            assert any("graph" in h.paths and "Cannon Beach" in h.record.content for h in result)
        finally:
            assert memory.graph is not None
            memory.graph.clear(user)


def test_reindex_graph_rebuilds_neo4j(tmp_path: Path, neo4j_memory: DreamMemory, user: str) -> None:
    memory = neo4j_memory
    memory.add_many(turns(user, TEXTS))
    assert memory.graph is not None
    memory.graph.clear(user)
    assert memory.graph.stats(user).empty
    assert memory.reindex_graph() == len(TEXTS)
    assert_graph_matches_records(memory, user)
    assert memory.stats()["graph_outbox"] == 0


def test_reindex_graph_with_the_server_down_keeps_the_work(
    tmp_path: Path, neo4j_server: Neo4jServer, user: str
) -> None:
    path = tmp_path / "store"
    down = DreamMemConfig(
        embedding=EmbeddingConfig(model="hashing"),
        graph=Neo4jGraphConfig(uri=f"bolt://127.0.0.1:{free_port()}"),
    )
    with DreamMemory(path, config=down) as memory:
        memory.add_many(turns(user, TEXTS))
        with pytest.raises(GraphUnavailableError):
            memory.reindex_graph()
        assert memory.stats()["graph_outbox"] == len(TEXTS)
    up = down.model_copy(update={"graph": Neo4jGraphConfig(uri=neo4j_server.uri)})
    with DreamMemory(path, config=up) as memory:
        try:
            assert memory.replay_graph() == len(TEXTS)
            assert_graph_matches_records(memory, user)
        finally:
            assert memory.graph is not None
            memory.graph.clear(user)
