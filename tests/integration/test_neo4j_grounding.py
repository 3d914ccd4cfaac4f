"""The Neo4j backend keeps each record's grounded window on its node, and temporal recall matches embedded."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import RecallQuery
from dreammem.recall.temporal import TemporalPath
from dreammem.stores.base import RecordCapability
from dreammem.stores.neo4j_store import Neo4jRecordStore
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

SAID = datetime(2022, 9, 2, 9, tzinfo=UTC)
NOW = SAID + timedelta(days=600)


def _found(memory: DreamMemory, user: str, question: str) -> list[int]:
    path = TemporalPath(memory.store, memory.vector_index, memory.embedder)
    return [c.rowid for c in path.search(RecallQuery(text=question, user_id=user, limit=5, now=NOW))]


def _node(store: Neo4jRecordStore, rowid: int) -> dict[str, object]:
    rows = store.client.run(
        "test",
        "MATCH (r:DMRecord {rowid: $rowid}) "
        "RETURN r.grounded AS grounded, r.grounded_start AS start, r.grounded_end AS stop",
        rowid=rowid,
    )
    return dict(rows[0])


@pytest.fixture
def neo4j_memory(neo4j_server: Neo4jServer) -> Iterator[DreamMemory]:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        assert isinstance(memory.store, Neo4jRecordStore)
        yield memory


def test_the_window_is_written_with_the_record_and_dropped_by_an_edit(neo4j_memory: DreamMemory) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    store = neo4j_memory.store
    assert isinstance(store, Neo4jRecordStore)
    assert RecordCapability.GROUNDED_TIMES in store.capabilities
    kayak = neo4j_memory.add("Bought a kayak yesterday", user_id=user, event_time=SAID)
    tea = neo4j_memory.add("Likes green tea", user_id=user, event_time=SAID)
    rowid, plain = (store.rowids(user, [kayak.id, tea.id])[i] for i in (kayak.id, tea.id))
    assert _node(store, rowid) == {
        "grounded": True,
        "start": datetime(2022, 9, 1, tzinfo=UTC).isoformat(),
        "stop": datetime(2022, 9, 2, tzinfo=UTC).isoformat(),
    }  # in the write's transaction, before any recall
    assert _node(store, plain) == {"grounded": True, "start": None, "stop": None}  # points nowhere
    assert rowid in _found(neo4j_memory, user, "kayak on 1 September 2022")
    assert rowid not in _found(neo4j_memory, user, "kayak in July 2022")
    neo4j_memory.update(kayak.id, "Bought a kayak last summer", user_id=user)
    assert rowid in _found(neo4j_memory, user, "kayak in July 2022")  # the new text's window
    assert rowid not in _found(neo4j_memory, user, "kayak on 1 September 2022")
    assert _node(store, rowid)["start"] == datetime(2022, 6, 1, tzinfo=UTC).isoformat()  # written back
    recalled = neo4j_memory.recall("what did I buy in July 2022?", user_id=user, now=NOW)
    assert kayak.id in [h.record.id for h in recalled]


def test_a_node_written_before_schema_6_is_grounded_on_first_use(neo4j_memory: DreamMemory) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    store = neo4j_memory.store
    assert isinstance(store, Neo4jRecordStore)
    kayak = neo4j_memory.add("Bought a kayak yesterday", user_id=user, event_time=SAID)
    rowid = store.rowids(user, [kayak.id])[kayak.id]
    store.client.run(  # as schema 5 wrote it
        "test",
        "MATCH (r:DMRecord {rowid: $rowid}) REMOVE r.grounded, r.grounded_start, r.grounded_end",
        rowid=rowid,
    )
    assert store.grounded_times(user, [rowid]) == {}
    assert rowid in _found(neo4j_memory, user, "kayak on 1 September 2022")
    assert store.grounded_times(user, [rowid]) == {
        rowid: (datetime(2022, 9, 1, tzinfo=UTC), datetime(2022, 9, 2, tzinfo=UTC))
    }


FIXTURE = [
    ("Went hiking at Mount Tam yesterday", 0),
    ("Flew back from Lisbon last week", 1),
    ("Bought a kayak two days ago", 2),
    ("Likes green tea in the morning", 3),
    ("Started the new job last month", 20),
    ("Ran a half marathon yesterday", 40),
]
QUESTIONS = [
    "what did I do on 1 September 2022?",
    "where was I in the last week of August 2022?",
    "what happened on 31 August 2022?",
    "what did I start in August 2022?",
    "what did I do on 11 October 2022?",
]


def _hits(memory: DreamMemory, user: str) -> list[list[str]]:
    for text, days in FIXTURE:
        memory.add(text, user_id=user, event_time=SAID + timedelta(days=days))
    contents: list[list[str]] = []
    for question in QUESTIONS:
        path = TemporalPath(memory.store, memory.vector_index, memory.embedder)
        found = path.search(RecallQuery(text=question, user_id=user, limit=5, now=NOW))
        records = memory.store.get_by_rowids(user, [c.rowid for c in found])
        contents.append(sorted(records[c.rowid].content for c in found))
    return contents


def test_temporal_recall_on_neo4j_finds_what_the_embedded_store_finds(
    neo4j_memory: DreamMemory, tmp_path: Path
) -> None:
    with DreamMemory(tmp_path / "embedded", embedder=HashingEmbedder()) as embedded:
        expected = _hits(embedded, "alice")
    assert sum(map(len, expected)) >= len(QUESTIONS)  # the fixture's dates do point into the windows
    assert "Flew back from Lisbon last week" in expected[1]  # found by its own date, not by when said
    assert _hits(neo4j_memory, f"u-{uuid.uuid4().hex[:8]}") == expected
