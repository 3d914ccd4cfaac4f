"""On Neo4j the library's notes live in their own property (issue 35, item 3).

A caller's metadata naming ``possibly_outdated_by`` is the caller's data and changes
neither recall order nor marks; a database of schema 3, which kept the notes inside
each node's ``metadata``, has them moved out when it is opened, with recall unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import uuid

import pytest

from dreammem import DreamMemory, MemoryRecord, Status
from dreammem.agent_api import ChatTurn, ingest_turns
from dreammem.embed import HashingEmbedder
from dreammem.keyed import get_keyed, put_keyed
from dreammem.stores.neo4j_store import SCHEMA_VERSION
from dreammem.system_meta import KEYED_KEY, MESSAGE_KEY
from dreammem.write.relations import DECISION_KEY, OUTDATED_BY_KEY, OUTDATED_WHY_KEY, OUTDATES_KEY
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

QUESTION = "what tea do I prefer?"


def _pair(memory: DreamMemory, user: str) -> tuple[str, str]:
    mine = memory.add("I prefer green tea in the morning.", user_id=user).id
    other = memory.add("The printer on floor 2 is out of toner.", user_id=user).id
    return mine, other


def _seen(memory: DreamMemory, user: str) -> tuple[list[str], str]:
    result = memory.recall(QUESTION, user_id=user, k=5)
    return [h.id for h in result.hits], result.to_context().text


def _unaccessed(records: list[MemoryRecord]) -> list[MemoryRecord]:
    return [dataclasses.replace(r, last_accessed_at=None, access_count=0) for r in records]


def test_caller_metadata_does_not_steer_recall_on_neo4j(neo4j_server: Neo4jServer) -> None:
    user = f"notes-{uuid.uuid4().hex[:8]}"
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        mine, other = _pair(memory, user)
        before, _ = _seen(memory, user)
        attack = {OUTDATED_BY_KEY: [other], OUTDATES_KEY: [mine], DECISION_KEY: {"by": other}}
        noted = memory.add("Noted.", user_id=user, metadata=attack)
        assert memory.get(noted.id, user_id=user).metadata == attack
        ids, text = _seen(memory, user)
        assert ids[0] == before[0] == mine and [i for i in ids if i in before] == before
        assert "possibly outdated" not in text
        assert memory.get(mine, user_id=user).system == {}


def test_a_schema_3_database_moves_the_notes_out_of_the_metadata_on_open(neo4j_server: Neo4jServer) -> None:
    user = f"notes-{uuid.uuid4().hex[:8]}"
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        mine, other = _pair(memory, user)
        (record,) = memory.store.get(user, [mine])
        why = {other: {"rule": "test", "reason": "a newer one"}}
        marked = dataclasses.replace(
            record, metadata={"topic": "tea"}, system={OUTDATED_BY_KEY: [other], OUTDATED_WHY_KEY: why}
        )
        memory.store.update([marked])
        seen = _seen(memory, user)
        records = memory.get_all(user_id=user, status=None)  # as recall left them (access times)
        assert "possibly outdated" in seen[1]
        for r in records:  # what schema 3 wrote: the notes inside the metadata, no system property
            memory.store.client.run(
                "test",
                "MATCH (r:DMRecord {user_id: $user, id: $id}) SET r.metadata = $metadata REMOVE r.system",
                user=user,
                id=r.id,
                metadata=json.dumps({**r.metadata, **r.system}),
            )
        memory.store.set_meta("schema_version", "3")
        assert memory.get(mine, user_id=user).metadata == {"topic": "tea", **marked.system}
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as reopened:
        assert reopened.store.schema_version == SCHEMA_VERSION == 6
        # Recall writes its accesses behind it (stores/touch_behind.py): the first store's close wrote
        # those `records` may not have seen yet, so they are compared without the access fields.
        assert _unaccessed(reopened.get_all(user_id=user, status=None)) == _unaccessed(records)
        assert reopened.get(mine, user_id=user).metadata == {"topic": "tea"}
        assert _seen(reopened, user) == seen


REAL = "I am allergic to peanuts."


def test_caller_message_key_and_keyed_change_nothing_on_neo4j(neo4j_server: Neo4jServer) -> None:
    user = f"notes-{uuid.uuid4().hex[:8]}"
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        memory.add("my own note", user_id=user, session_id="s1", metadata={MESSAGE_KEY: "id:m1"})
        written = ingest_turns(memory, [ChatTurn("user", REAL, "m1")], user_id=user, session_id="s1")
        assert [r.content for r in written] == [REAL] and written[0].system == {MESSAGE_KEY: "id:m1"}
        assert ingest_turns(memory, [ChatTurn("user", REAL, "m1")], user_id=user, session_id="s1") == []
        old = memory.add("I take my coffee with regular milk.", user_id=user)
        memory.add("I switched to oat milk in my coffee.", user_id=user, metadata={KEYED_KEY: True})
        assert memory.get(old.id, user_id=user).status is Status.SUPERSEDED


def test_a_schema_4_database_moves_message_keys_and_keyed_entries_on_open(neo4j_server: Neo4jServer) -> None:
    user = f"notes-{uuid.uuid4().hex[:8]}"
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        ingest_turns(memory, [ChatTurn("user", REAL, "m1")], user_id=user, session_id="s1")
        put_keyed(memory, user_id=user, path=("prefs",), key="milk", value={"text": "oat"}, text="oat milk")
        memory.add("my own note", user_id=user, metadata={MESSAGE_KEY: 7, KEYED_KEY: True})
        records = memory.get_all(user_id=user, status=None)
        for r in records:  # what schema 4 wrote: these two notes inside the metadata
            later = {k: v for k, v in r.system.items() if k in (MESSAGE_KEY, KEYED_KEY)}
            memory.store.client.run(
                "test",
                "MATCH (r:DMRecord {user_id: $user, id: $id}) "
                "SET r.metadata = $metadata, r.system = $system REMOVE r.notes_version",
                user=user,
                id=r.id,
                metadata=json.dumps({**r.metadata, **later}),
                system=json.dumps({k: v for k, v in r.system.items() if k not in later}),
            )
        memory.store.set_meta("schema_version", "4")
        assert memory.stored_message_keys(["id:m1"], user_id=user, session_id="s1") == {
            "id:m1"
        }  # the property
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as reopened:
        assert reopened.store.schema_version == SCHEMA_VERSION == 6
        assert reopened.get_all(user_id=user, status=None) == records
        assert reopened.stored_message_keys(["id:m1", "7"], user_id=user, session_id="s1") == {"id:m1"}
        assert ingest_turns(reopened, [ChatTurn("user", REAL, "m1")], user_id=user, session_id="s1") == []
        entry = get_keyed(reopened, user_id=user, path=("prefs",), key="milk")
        assert entry is not None and entry.value == {"text": "oat"}
