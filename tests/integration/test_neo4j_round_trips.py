"""Recall on the Neo4j backend: few Bolt round trips, the embedded store's answers.

A recall's reads about its first-stage candidates (their records, the reply path's
session neighbours, the records they replaced or point at, the pinned memories) are one
statement (:mod:`dreammem.stores.neo4j_surroundings`) and its accesses are written
behind it (:mod:`dreammem.stores.touch_behind`). Round trips are counted on the
driver's sockets (:mod:`tests.bolt_trips`).
"""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.neo4j_keyword import TEXT_INDEX
from dreammem.stores.neo4j_keyword_stats import UserKeywordCounts
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.stores.surroundings import read_one_by_one
from tests.bolt_trips import counting_round_trips
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=60)
LINES = [
    ("Caroline", "I went to the LGBTQ support group yesterday, it was powerful."),
    ("Melanie", "That sounds amazing, what did you talk about there?"),
    ("Caroline", "Mostly about adoption agencies and how to start the process."),
    ("Melanie", "I painted a lake sunrise last week, painting calms me down."),
    ("Caroline", "I am researching counseling careers in mental health."),
    ("Melanie", "My kids loved the camping trip to the mountains in June."),
    ("Caroline", "I moved from Sweden four years ago with my grandmother's necklace."),
    ("Melanie", "We ran a charity race for mental health awareness on Saturday."),
]
QUERIES = [
    "What did Caroline talk about at the support group?",
    "What does Melanie paint?",
    "Where did Caroline move from?",
    "what do I prefer to drink",
    "camping trip with the kids",
    "charity race",
]


def _fill(memory: DreamMemory, user: str) -> None:
    turns = [
        {
            "content": text,
            "user_id": user,
            "session_id": f"s{n // 8}",
            "speaker": speaker,
            "event_time": T0 + timedelta(days=n // 8, minutes=n),
        }
        for n, (speaker, text) in enumerate(LINES * 4)
    ]
    memory.add_many(turns)
    memory.add("I prefer tea in the morning.", user_id=user, event_time=T0 + timedelta(days=10))
    memory.add("Actually, I prefer coffee now.", user_id=user, event_time=T0 + timedelta(days=11))


def _hits(memory: DreamMemory, user: str) -> list[list[tuple[str, str]]]:
    """Each query's hits (text and layer: the two stores give the records different ids), in order."""
    found = [memory.recall(q, user_id=user, k=5, now=NOW).hits for q in QUERIES]
    return [[(h.record.content, h.record.layer.value) for h in hits] for hits in found]


@pytest.fixture
def user() -> str:
    return f"rt-{uuid.uuid4().hex[:8]}"


def test_a_vector_and_reply_recall_takes_two_round_trips_and_its_accesses_are_written(
    neo4j_server: Neo4jServer, user: str, gated: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = ["vector", "reply"]
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        _fill(memory, user)
        memory.recall(QUERIES[0], user_id=user, k=5, now=NOW, paths=paths)  # warm: schema, index
        with counting_round_trips(monkeypatch) as trips:
            counts = []
            for query in QUERIES:
                trips.reset()
                result = memory.recall(query, user_id=user, k=5, now=NOW, paths=paths)
                counts.append(trips.count)
                assert result.hits and not result.degraded
        # The vector search, then the candidates' surroundings; a third when the k-th hit ties the lowest
        # score the index returned, so the tie is ranked exactly, lower row id first, as FAISS ranks it
        # (hashing vectors tie often; a model's vectors rarely do).
        assert max(counts) <= 3, counts
        gated.set()
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as reopened:
        accesses = sum(r.access_count for r in reopened.store.find(user, statuses=None))
    assert accesses >= len(QUERIES) + 1  # every recall's accesses were written (by close at the latest)


def test_neo4j_recall_returns_the_embedded_stores_hits_in_order(
    neo4j_server: Neo4jServer, user: str, tmp_path: Path
) -> None:
    with DreamMemory(tmp_path / "embedded", embedder=HashingEmbedder()) as embedded:
        _fill(embedded, user)
        expected = _hits(embedded, user)
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as server:
        _fill(server, user)
        assert _hits(server, user) == expected
    assert any(hits for hits in expected)


def test_the_gathered_surroundings_are_the_single_reads(neo4j_server: Neo4jServer, user: str) -> None:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        _fill(memory, user)
        store = memory.store
        records = store.find(user, statuses=None)
        rowids = sorted(store.rowids(user, [r.id for r in records]).values())
        asked, seeds = [*rowids[::3], *rowids[-3:], 10**9], rowids[1::4]  # last: tea, coffee, correction
        gathered = store.surroundings(user, asked, seeds, pinned=True)
        single = read_one_by_one(store, user, asked, seeds, pinned=True)
        assert gathered == single
        assert gathered.neighbours and gathered.replaced and gathered.records


def test_a_keyword_search_counts_all_its_phrases_in_one_round_trip(
    neo4j_server: Neo4jServer, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        _fill(memory, user)
        assert isinstance(memory.store, Neo4jRecordStore)
        client = memory.store.client
        phrases = {w: f'terms:"{w}" context:"{w}"^0.5' for w in ("mental", "health", "paint", "zebra")}
        alone = {}
        for phrase, lucene in phrases.items():
            corpus, found = UserKeywordCounts(client, TEXT_INDEX).counts(user, {phrase: lucene})
            alone.update(found)
        with counting_round_trips(monkeypatch) as trips:
            together = UserKeywordCounts(client, TEXT_INDEX).counts(user, phrases)
        assert trips.count == 1
        assert together == (corpus, alone)
        assert alone["mental"] > 0 and alone["zebra"] == 0
