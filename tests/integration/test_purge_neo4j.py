"""Erasure with the graph on a real Neo4j server: the purged words leave Neo4j and the store files."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, Neo4jGraphConfig
from dreammem.embed import HashingEmbedder
from tests.erasure import all_encodings, files_holding
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

SECRET = "Vexlumbra Quorvane flew to Kraków with Ostrander Pell"
WORDS = ("Vexlumbra", "Quorvane", "Ostrander", "Kraków")


@pytest.fixture
def user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def memory(store: Path, neo4j_server: Neo4jServer, user: str) -> Iterator[DreamMemory]:
    config = DreamMemConfig(graph=Neo4jGraphConfig(uri=neo4j_server.uri))
    with DreamMemory(store, config=config, embedder=HashingEmbedder()) as m:
        yield m
        assert m.graph is not None
        m.graph.clear(user)


def neo4j_nodes_holding(uri: str, words: tuple[str, ...]) -> int:
    """How many nodes of the whole database have a property whose text holds one of the words.

    A list property (an embedding, a record's entities) counts by its items' text.
    """
    query = (
        "MATCH (n) WITH n, [k IN keys(n) | CASE WHEN n[k] IS :: LIST<ANY> "
        "THEN reduce(s = '', x IN n[k] | s + ' ' + toString(x)) ELSE toString(n[k]) END] AS texts "
        "WHERE any(t IN texts WHERE any(w IN $words WHERE toLower(t) CONTAINS toLower(w))) "
        "RETURN count(n) AS found"
    )
    with neo4j.GraphDatabase.driver(uri) as driver, driver.session() as session:
        return int(session.run(query, words=list(words)).single(strict=True)["found"])


def fill(memory: DreamMemory, user: str) -> str:
    memory.add("We planned the Lisbon offsite with Marta Ruiz", user_id=user, session_id="s1")
    secret = memory.add(SECRET, user_id=user, session_id="s1").id
    memory.add("Marta Ruiz booked the hotel", user_id=user, session_id="s1")
    return secret


def test_purge_erases_from_neo4j_and_the_files(
    memory: DreamMemory, neo4j_server: Neo4jServer, user: str, store: Path
) -> None:
    secret = fill(memory, user)
    memory.dream(user_id=user)
    assert neo4j_nodes_holding(neo4j_server.uri, WORDS) > 0, "the graph holds the entities before"
    assert files_holding(store, all_encodings(WORDS))
    result = memory.purge(secret, user_id=user)
    assert secret in result.purged and result.graph_pending == 0 and result.compacted
    assert neo4j_nodes_holding(neo4j_server.uri, WORDS) == 0
    assert files_holding(store, all_encodings(WORDS)) == []
    assert neo4j_nodes_holding(neo4j_server.uri, ("Marta",)) > 0  # what stays, stays
    hits = memory.recall("Who booked the hotel? Marta Ruiz", user_id=user, paths=["graph"])
    assert hits.hits and all(secret != h.id for h in hits)


def test_purge_while_neo4j_is_down_erases_on_replay(
    memory: DreamMemory, neo4j_server: Neo4jServer, user: str, store: Path
) -> None:
    secret = fill(memory, user)
    neo4j_server.stop()
    try:
        result = memory.purge(secret, user_id=user)
        assert result.graph_pending >= 1  # ids only wait in the outbox: no words
        assert files_holding(store, all_encodings(WORDS)) == []
    finally:
        neo4j_server.restart()
    assert neo4j_nodes_holding(neo4j_server.uri, WORDS) > 0  # not replayed yet
    memory.replay_graph()
    assert neo4j_nodes_holding(neo4j_server.uri, WORDS) == 0
    assert memory.stats()["graph_outbox"] == 0


def test_purge_a_whole_user_leaves_neo4j_empty_of_them(
    memory: DreamMemory, neo4j_server: Neo4jServer, user: str, store: Path
) -> None:
    fill(memory, user)
    memory.add("Marta Ruiz is someone else's contact too", user_id="bystander")
    memory.purge(user_id=user)
    assert memory.graph is not None and memory.graph.stats(user).empty
    assert neo4j_nodes_holding(neo4j_server.uri, (*WORDS, user)) == 0
    assert memory.graph.stats("bystander").memories == 1
    assert files_holding(store, all_encodings((*WORDS, user))) == []
    memory.graph.clear("bystander")
