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

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.neo4j_store import SCHEMA_VERSION
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
        assert reopened.store.schema_version == SCHEMA_VERSION == 4
        assert reopened.get_all(user_id=user, status=None) == records
        assert reopened.get(mine, user_id=user).metadata == {"topic": "tea"}
        assert _seen(reopened, user) == seen
