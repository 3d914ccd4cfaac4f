"""The whole store on one Neo4j server: several processes share one memory, users stay apart.

Each test works in fresh user ids on the session's real server (``scripts/neo4j.sh``).
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import BackendError, DreamMemory
from dreammem.cli import app
from dreammem.config import DreamMemConfig, Neo4jStoreConfig
from dreammem.embed import HashingEmbedder
from dreammem.engine.leases import LeaseLocks
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_store import SCHEMA_VERSION, Neo4jRecordStore
from dreammem.types import Kind, Layer, MemoryRecord
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

SPAWN = multiprocessing.get_context("spawn")
PLACES = (
    "Lofoten Bergen Tromso Oslo Alesund Geiranger Flam Narvik Bodo Molde "
    "Stavanger Kristiansand Trondheim Roros Lillehammer Voss Hamar Skien Arendal Larvik"
).split()


def _trip(n: int) -> str:
    return f"kayak trip along the coast of {PLACES[n]}"


def _fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def _write(uri: str, user: str, other: str, count: int) -> list[str]:
    """In a child process: write ``count`` records for ``user`` (half batched) and one for ``other``."""
    with DreamMemory(uri, embedder=HashingEmbedder()) as memory:
        ids = [memory.add(_trip(n), user_id=user).id for n in range(count // 2)]
        batch = [{"content": _trip(n), "user_id": user} for n in range(count // 2, count)]
        ids += [r.id for r in memory.add_many(batch)]
        memory.add(f"{_trip(0)}, the secret one", user_id=other)
    return ids


@pytest.fixture
def memory(neo4j_server: Neo4jServer) -> Iterator[DreamMemory]:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as opened:
        yield opened


def test_a_long_lived_reader_sees_another_processs_writes_by_vector_and_never_another_user(
    memory: DreamMemory, neo4j_server: Neo4jServer
) -> None:
    user, other = _fresh("alice"), _fresh("bob")
    memory.add("warm up the reader", user_id=user)  # the reader's embedder and index are open first
    with SPAWN.Pool(1) as pool:
        written = pool.apply(_write, (neo4j_server.uri, user, other, 20))
    assert memory.store.count(user) == 21 and memory.store.count(other) == 1
    rowids = memory.store.rowids(user, written)
    for n, record_id in enumerate(written):
        query = memory.embedder.embed_query(_trip(n))
        hits = memory.vector_index.search(user, query, 3)
        # The hashing embedder can give two place names one bucket: a tie for the top is fine.
        assert rowids[record_id] in {i for i, score in hits if score > hits[0][1] - 1e-5}
    secret = memory.recall("the secret one", user_id=user, k=30)
    assert not set(secret.ids) & {r.id for r in memory.store.find(other)}
    assert memory.stats(user_id=user)["vectors"] == 21


def test_two_instances_see_each_others_edits_and_forgets(
    memory: DreamMemory, neo4j_server: Neo4jServer
) -> None:
    user = _fresh("carol")
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as other:
        kept = other.add("sailing in Croatia", user_id=user)
        doomed = other.add("sailing in Greece", user_id=user)
        assert set(memory.recall("sailing", user_id=user, k=5).ids) == {kept.id, doomed.id}
        memory.forget(doomed.id, user_id=user)
        assert other.recall("sailing Greece", user_id=user, k=5, paths=["vector"]).ids == [kept.id]
        assert other.stats(user_id=user)["vectors"] == 1


def test_a_dream_is_seen_by_the_other_instance(memory: DreamMemory, neo4j_server: Neo4jServer) -> None:
    user = _fresh("dana")
    memory.add_many([{"content": f"I prefer green tea, note {n}", "user_id": user} for n in range(4)])
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as other:
        report = other.dream(user_id=user)
        assert report.queued == 4
        assert memory.store.queue_size(user) == 0
        assert [d.dream_id for d in memory.store.list_dreams(user, 5)] == [report.dream_id]


def test_the_config_selects_the_server_with_no_path(neo4j_server: Neo4jServer, tmp_path: Path) -> None:
    user = _fresh("erin")
    config = DreamMemConfig(store=Neo4jStoreConfig(uri=neo4j_server.uri))
    with DreamMemory(config=config, embedder=HashingEmbedder()) as memory:
        memory.add("the spare key is under the blue pot", user_id=user)
        assert memory.path is None
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as again:
        assert again.recall("spare key", user_id=user).hits
    assert list(tmp_path.iterdir()) == []


def test_one_dream_lease_per_user_across_holders_and_it_expires(neo4j_server: Neo4jServer) -> None:
    user = _fresh("frank")
    first, second = Neo4jClient(neo4j_server.uri), Neo4jClient(neo4j_server.uri)
    here, there = LeaseLocks(first, lease_seconds=1.0), LeaseLocks(second, lease_seconds=1.0)
    try:
        with here.hold(user) as held:
            assert held
            assert there.busy(user)
            with there.hold(user, blocking=False) as got:
                assert not got
            time.sleep(1.5)  # renewed while held: still ours past its life
            assert not there.try_take(user)
        assert there.try_take(user)  # released
        time.sleep(1.5)  # never renewed: expired
        assert here.try_take(user)
    finally:
        here.release(user)
        first.close()
        second.close()


def test_a_stopped_server_fails_fast_typed_and_loses_nothing_acknowledged(neo4j_server: Neo4jServer) -> None:
    user = _fresh("gina")
    config = DreamMemConfig(store=Neo4jStoreConfig(timeout=2.0))
    memory = DreamMemory(neo4j_server.uri, config=config, embedder=HashingEmbedder())
    acknowledged = [memory.add(f"note {n} before the outage", user_id=user).id for n in range(5)]
    neo4j_server.stop()
    try:
        for call in (
            lambda: memory.recall("note", user_id=user),  # every index path failed: an error, not "nothing"
            lambda: memory.add("a note during the outage", user_id=user),
            lambda: memory.dream(user_id=user),
        ):
            start = time.monotonic()
            with pytest.raises(BackendError) as caught:
                call()
            assert caught.value.is_retryable
            assert time.monotonic() - start < 10
    finally:
        neo4j_server.restart()
    deadline = time.monotonic() + 60
    while True:  # a client retries retryable errors; the breaker's probe lets calls through again
        try:
            acknowledged.append(memory.add("a note after the outage", user_id=user).id)
            break
        except BackendError as exc:
            assert exc.is_retryable and time.monotonic() < deadline
            time.sleep(0.5)
    assert [r.id for r in memory.store.get(user, acknowledged)] == acknowledged
    assert memory.store.count(user) == len(acknowledged)
    memory.close()


def test_a_version_1_database_gets_fts5_terms_on_open(neo4j_server: Neo4jServer) -> None:
    """Schema 2: nodes written with the engine's tokens (version 1) are re-tokenised once."""
    user = _fresh("hana")
    store = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
    try:
        now = datetime.now(UTC)
        record = MemoryRecord(user_id=user, content="she paints sunsets", created_at=now, event_time=now)
        (rowid,) = store.insert([record], ["she paints sunsets"])
        assert [r for r, _ in store.keyword_search(user, ["painted"], 5)] == [rowid]
        store.client.run(  # what a version-1 store held: the engine's tokens, no format mark
            "test",
            "MATCH (r:DMRecord {rowid: $rowid}) SET r.terms = 'she paints sunsets' REMOVE r.terms_format",
            rowid=rowid,
        )
        store.set_meta("schema_version", "1")
        assert store.keyword_search(user, ["painted"], 5) == []
    finally:
        store.close()
    reopened = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
    try:
        assert reopened.schema_version == SCHEMA_VERSION
        assert [r for r, _ in reopened.keyword_search(user, ["painted"], 5)] == [rowid]
        reopened.delete(user, [record.id])
    finally:
        reopened.close()


def test_a_version_2_database_finds_same_text_records_after_open(neo4j_server: Neo4jServer) -> None:
    """Schema 3: nodes written without ``content_head`` (version 2) get it, so their twins are found."""
    user = _fresh("omar")
    store = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
    text = "I moved to Lisbon in March and my new office is near the river, three stops from home."
    try:
        now = datetime.now(UTC)
        turn = MemoryRecord(user_id=user, content=text, created_at=now, event_time=now)
        fact = MemoryRecord(
            user_id=user, content=text, layer=Layer.SEMANTIC, kind=Kind.FACT,
            provenance=(turn.id,), created_at=now, event_time=now,
        )  # fmt: skip
        other = MemoryRecord(
            user_id=user, content="Another start, then " + text, created_at=now, event_time=now
        )
        store.insert([turn, fact, other], [text, text, other.content])
        assert [r.id for r in store.twins(turn)] == [fact.id]
        store.client.run("test", "MATCH (r:DMRecord {user_id: $user}) REMOVE r.content_head", user=user)
        store.set_meta("schema_version", "2")
        assert store.twins(turn) == []  # what a version-2 node cannot give the index
    finally:
        store.close()
    reopened = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
    try:
        assert reopened.schema_version == SCHEMA_VERSION
        assert [r.id for r in reopened.twins(turn)] == [fact.id]
        assert [r.id for r in reopened.twins(fact)] == [turn.id]
        edited = dataclasses.replace(other, content=text)  # an update that changes the text moves its head
        reopened.update([edited])
        heads = reopened.client.run(
            "test", "MATCH (r:DMRecord {user_id: $user}) RETURN r.id AS id, r.content_head AS head", user=user
        )
        assert {row["id"]: row["head"] for row in heads} == {r.id: text[:32] for r in (turn, fact, other)}
        assert reopened.twins(edited) == []  # the same text, but no provenance link
        reopened.delete(user, [turn.id, fact.id, other.id])
    finally:
        reopened.close()


def test_cli_commands_take_a_server_uri(neo4j_server: Neo4jServer, tmp_path: Path) -> None:
    user = _fresh("ivan")
    config = tmp_path / "dreammem.toml"
    config.write_text('[embedding]\nmodel = "hashing"\n')
    runner = CliRunner()
    common = ["-u", user, "-p", neo4j_server.uri, "--config", str(config)]
    added = runner.invoke(app, ["add", "the spare key is under the blue pot", *common])
    assert added.exit_code == 0, added.output
    found = runner.invoke(app, ["recall", "where is the spare key", *common, "--json"])
    assert found.exit_code == 0, found.output
    assert [t["content"] for t in json.loads(found.output)] == ["the spare key is under the blue pot"]
    assert list(tmp_path.iterdir()) == [config]  # nothing written locally
