"""Schema safety across versions (issue 37, item 4): an older client refuses to write.

Two client versions share one database: the current one (schema 3) and an older one
(schema 2, which would write record nodes without ``content_head``), acted by the
store's ``client_version``. The database records the lowest writer version; the older
client reads but every record write is a ``StoreVersionError`` that writes nothing,
also when it opened the database before the newer client raised the version.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime

import pytest

from dreammem import StoreVersionError
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_store import SCHEMA_VERSION, Neo4jRecordStore
from dreammem.stores.neo4j_versions import MIN_WRITER_KEY
from dreammem.types import MemoryRecord
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

OLDER = SCHEMA_VERSION - 1


def _record(user: str, text: str) -> MemoryRecord:
    now = datetime.now(UTC)
    return MemoryRecord(user_id=user, content=text, created_at=now, event_time=now)


def _count(store: Neo4jRecordStore, user: str) -> int:
    return int(store.client.scalar("test", "MATCH (r:DMRecord {user_id: $user}) RETURN count(r)", user=user))


def test_an_older_client_refuses_to_write_once_a_newer_one_opened(neo4j_server: Neo4jServer) -> None:
    user = f"versions-{uuid.uuid4().hex[:8]}"
    current = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
    current.set_meta(MIN_WRITER_KEY, str(OLDER))  # as the database was before any schema-3 client opened it
    current.close()
    older = Neo4jRecordStore(Neo4jClient(neo4j_server.uri), client_version=OLDER)
    newer: Neo4jRecordStore | None = None
    try:
        kept = _record(user, "The older client wrote this before the upgrade.")
        older.insert([kept], ["older client wrote upgrade"])  # allowed: no newer client yet
        newer = Neo4jRecordStore(Neo4jClient(neo4j_server.uri))
        assert newer.get_meta(MIN_WRITER_KEY) == str(SCHEMA_VERSION)

        # The older process opened before the upgrade: its writes are refused, whole.
        with pytest.raises(StoreVersionError, match=f"schema version {SCHEMA_VERSION} or later"):
            older.insert([_record(user, "Incomplete node attempt.")], ["incomplete node attempt"])
        with pytest.raises(StoreVersionError):
            older.update([dataclasses.replace(kept, content="Rewritten by the older client.")])
        with pytest.raises(StoreVersionError), older.transaction():
            older.insert([_record(user, "Inside a unit.")], ["inside unit"])
        assert _count(newer, user) == 1
        assert [r.content for r in older.get(user, [kept.id])] == [kept.content]  # reading still works
        assert newer.get(user, [kept.id])[0].content == kept.content

        # An older client opening now opens for reading only.
        older.close()
        older = Neo4jRecordStore(Neo4jClient(neo4j_server.uri), client_version=OLDER)
        assert [r.id for r in older.get(user, [kept.id])] == [kept.id]
        with pytest.raises(StoreVersionError):
            older.insert([_record(user, "Still refused.")], ["still refused"])
        assert newer.get_meta(MIN_WRITER_KEY) == str(SCHEMA_VERSION)  # an older open never lowers it
        assert _count(newer, user) == 1

        # The current client writes as before.
        newer.insert([_record(user, "The current client writes.")], ["current client writes"])
        assert _count(newer, user) == 2
    finally:
        if newer is not None:
            newer.client.run("test", "MATCH (r:DMRecord {user_id: $user}) DETACH DELETE r", user=user)
            newer.close()
        older.close()
