"""The session and feedback recall paths (real MiniLM; they are off by default)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import SentenceTransformerEmbedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.feedback import FeedbackPath, expansion_terms
from dreammem.recall.session import SessionPath, session_scores

T0 = datetime(2025, 3, 1, 18, 0, tzinfo=UTC)
SESSIONS = {
    "garden": [
        "I planted tomatoes and basil in pots on the balcony this spring.",
        "The seedlings need watering twice a day when it is hot.",
        "My neighbour gave me a bag of compost from her allotment.",
    ],
    "work": ["The quarterly report is due on Friday.", "My manager wants the slides by Thursday afternoon."],
    "trip": ["We booked a cabin near the lake for August."],
}


@pytest.fixture(scope="module")
def store(minilm: SentenceTransformerEmbedder) -> Iterator[DreamMemory]:
    with DreamMemory(None, embedder=minilm) as memory:
        at = T0
        for session, turns in SESSIONS.items():
            at += timedelta(days=3)
            memory.add_many(
                [{"content": t, "user_id": "u1", "session_id": session, "event_time": at} for t in turns]
            )
        yield memory


def _query(memory: DreamMemory, text: str, *, paths: tuple[str, ...]) -> RecallQuery:
    """The query as the pipeline hands it to a late path: embedded, with the earlier paths' candidates."""
    pipeline = memory.pipeline
    assert pipeline.embedder is not None
    query = RecallQuery(
        text, "u1", 30, T0 + timedelta(days=30), embedding=pipeline.embedder.embed_query(text)
    )
    earlier = {name: pipeline.paths[name].search(query) for name in paths}
    return dataclasses.replace(query, earlier=earlier)


def _content(memory: DreamMemory, candidates: list[Candidate]) -> list[str]:
    records = memory.store.get_by_rowids("u1", [c.rowid for c in candidates])
    return [records[c.rowid].content for c in candidates]


def test_sessions_are_voted_for_by_reciprocal_rank_over_the_lists() -> None:
    session_of = {1: "a", 2: "b", 3: "a", 4: "c"}
    lists = [
        [Candidate(1, 0.9), Candidate(2, 0.8), Candidate(9, 0.1)],
        [Candidate(3, 5.0), Candidate(2, 4.0)],
    ]
    scores = session_scores(lists, session_of, rrf_k=10)
    assert scores == pytest.approx({"a": 1 / 11 + 1 / 11, "b": 1 / 12 + 1 / 12})
    assert "c" not in scores  # a memory no list found casts no vote; row 9 has no session


def test_the_session_path_ranks_every_memory_of_the_best_session_by_similarity(store: DreamMemory) -> None:
    path = SessionPath(store.store, store.pipeline.embedder, sessions=1)  # type: ignore[arg-type]
    query = _query(store, "what is growing on the balcony?", paths=("keyword", "vector"))
    keyword = _content(store, list(query.earlier["keyword"]))
    assert path.best_sessions(query) == ["garden"]
    found = path.search(query)
    texts = _content(store, found)
    assert sorted(texts) == sorted(SESSIONS["garden"])  # the whole session, nothing else
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    assert SESSIONS["garden"][2] in texts and SESSIONS["garden"][2] not in keyword  # shares no word
    wide = SessionPath(store.store, store.pipeline.embedder, sessions=2)  # type: ignore[arg-type]
    assert len(wide.best_sessions(query)) == 2 and len(wide.search(query)) > len(found)


def test_the_session_path_needs_earlier_candidates_and_an_embedding(store: DreamMemory) -> None:
    path = SessionPath(store.store, store.pipeline.embedder)  # type: ignore[arg-type]
    query = _query(store, "when is the quarterly report due?", paths=("keyword",))
    assert path.search(dataclasses.replace(query, earlier={})) == []
    assert path.search(dataclasses.replace(query, embedding=None)) == []
    allowed = frozenset(c.rowid for c in query.earlier["keyword"])
    assert {c.rowid for c in path.search(dataclasses.replace(query, allowed=allowed))} <= allowed
    with pytest.raises(ValueError, match="at least 1"):
        SessionPath(store.store, store.pipeline.embedder, sessions=0)  # type: ignore[arg-type]


def test_recall_fuses_the_session_path_when_configured(minilm: SentenceTransformerEmbedder) -> None:
    config = DreamMemConfig(recall=RecallConfig(paths=("vector", "keyword", "session")))
    with DreamMemory(None, embedder=minilm, config=config) as memory:
        for session, turns in SESSIONS.items():
            memory.add_many([{"content": t, "user_id": "u1", "session_id": session} for t in turns])
        result = memory.recall("who gave me compost for the tomatoes?", user_id="u1", k=3)
        assert result.hits and "session" in result.hits[0].paths
        assert result.hits[0].record.content == SESSIONS["garden"][2]
        assert "session" not in result.degraded


def test_expansion_words_are_shared_by_feedback_texts_and_weighted_by_rank() -> None:
    feedback = [
        "the pottery class meets on saturday mornings",
        "on saturday the pottery teacher showed us glazes",
        "glazes and pottery wheels, saturday again",
    ]
    # pottery: 1 + 1/2 + 1/3; glazes: 1/2 + 1/3; class / meets / mornings / teacher: one text only.
    assert expansion_terms(["saturday"], feedback) == ["pottery", "glazes"]
    assert expansion_terms(["saturday"], feedback, terms=1) == ["pottery"]
    assert expansion_terms(["saturday", "pottery"], feedback, min_docs=3) == []
    assert expansion_terms(["saturday"], []) == []


def test_the_feedback_path_finds_a_memory_through_its_neighbours_words(
    minilm: SentenceTransformerEmbedder,
) -> None:
    turns = [
        "Lena: my pottery class meets on saturday mornings",
        "Lena: on saturday the pottery teacher showed us how to glaze",
        "Lena: the kiln finally fired my first pottery bowl",
        "Lena: my brother plays football in a local team",
        "Lena: I am reading a novel about sailors",
        "Lena: the train to work was late again",
        "Lena: we watched a documentary about whales",
        "Lena: my sister moved to Lisbon last year",
        "Lena: the dentist appointment is next week",
    ]
    with DreamMemory(None, embedder=minilm) as memory:
        memory.add_many([{"content": t, "user_id": "u1"} for t in turns])
        path = FeedbackPath(memory.store, max_term_share=0.5)
        query = _query(memory, "what happens on saturday?", paths=("keyword",))
        keyword = _content(memory, list(query.earlier["keyword"]))
        assert turns[2] not in keyword
        found = _content(memory, path.search(query))
        assert turns[2] in found and turns[3] not in found
        assert path.search(dataclasses.replace(query, earlier={})) == []
        lonely = _query(memory, "tell me about the sailors", paths=("keyword",))
        assert path.search(lonely) == []  # one feedback text: no word is shared, nothing added
