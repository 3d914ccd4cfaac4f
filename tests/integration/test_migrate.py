"""``dreammem migrate``: embedded -> Neo4j -> embedded gives back every record and dream."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem.migration import migrate
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


def _snapshot(memory: DreamMemory, users: list[str]) -> dict[str, object]:
    store = memory.store
    return {
        user: {
            "records": sorted((r.to_dict() for r in store.find(user, statuses=None)), key=lambda d: d["id"]),
            "queued": sorted(r.id for r in store.queued(user)),
            "task_states": store.task_states(user),
            "dreams": store.list_dreams(user, 100),
        }
        for user in users
    }


def _source(path: Path, users: list[str]) -> DreamMemory:
    memory = DreamMemory(path, embedder=HashingEmbedder())
    alice, bob = users
    memory.add_many(
        [{"content": f"I prefer green tea in the morning, day {n}", "user_id": alice} for n in range(3)]
    )
    edited = memory.add("my locker code is 1234", user_id=alice)
    memory.update(edited.id, "my locker code is 4321", user_id=alice)  # history
    doomed = memory.add("I used to live in Porto", user_id=alice)
    memory.forget(doomed.id, user_id=alice)
    memory.dream(user_id=alice)  # provenance, archived turns, a dream log entry
    memory.add("still queued for the next dream", user_id=alice)
    memory.set_task_state({"goal": "renew the passport"}, user_id=alice, session_id="s1")
    memory.add("bob's own memory about chess", user_id=bob)
    return memory


def test_a_round_trip_through_neo4j_loses_nothing(tmp_path: Path, neo4j_server: Neo4jServer) -> None:
    users = [f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}"]
    with _source(tmp_path / "a", users) as source:
        before = _snapshot(source, users)
        with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as server:
            report = migrate(source, server, users)
            assert report.records == sum(len(before[u]["records"]) for u in users)  # type: ignore[arg-type]
            assert _snapshot(server, users) == before
            assert migrate(source, server, users).records == 0  # again: nothing new
            for record in source.store.find(users[0], statuses=None):
                assert server.history(record.id, user_id=users[0]) == source.history(
                    record.id, user_id=users[0]
                )
            assert any(
                len(source.history(r.id, user_id=users[0])) > 1
                for r in source.store.find(users[0], statuses=None)
            )
            with DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as back:
                migrate(server, back, users)
                assert _snapshot(back, users) == before
                for query in ("locker code", "what tea do I drink?", "where did I live"):
                    assert (
                        back.recall(query, user_id=users[0]).ids == source.recall(query, user_id=users[0]).ids
                    )


def test_the_cli_migrates_a_path_to_a_uri(tmp_path: Path, neo4j_server: Neo4jServer) -> None:
    users = [f"carol-{uuid.uuid4().hex[:8]}", f"dan-{uuid.uuid4().hex[:8]}"]
    _source(tmp_path / "a", users).close()
    result = CliRunner().invoke(app, ["migrate", str(tmp_path / "a"), neo4j_server.uri, "--user", users[1]])
    assert result.exit_code == 0, result.output
    assert "migrated 1 users: 1 records" in result.output
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as server:
        assert server.store.count(users[1]) == 1 and server.store.count(users[0]) == 0
