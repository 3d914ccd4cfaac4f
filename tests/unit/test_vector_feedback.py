"""The vector feedback path: dense pseudo-relevance feedback over the vector path's best matches.

Real MiniLM, real SQLite and FAISS.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, EmbeddingConfig
from dreammem.recall.base import RecallQuery
from dreammem.recall.vector_feedback import VectorFeedbackPath
from dreammem.types import utcnow

TEXTS = (
    "We adopted a rescue greyhound called Comet",
    "Comet sleeps on the sofa after his walk",
    "The vet said the dog needs a lighter diet",
    "I renewed my passport at the embassy",
    "Our quarterly budget review is on Friday",
)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[DreamMemory]:
    with DreamMemory(
        tmp_path / "store", config=DreamMemConfig(embedding=EmbeddingConfig(model="minilm"))
    ) as m:
        m.add_many([{"content": t, "user_id": "u1"} for t in TEXTS])
        m.add("My dog Comet is a beagle", user_id="u2")
        yield m


def _query(memory: DreamMemory, text: str) -> RecallQuery:
    vector = memory.pipeline.paths["vector"]
    plain = RecallQuery(text, "u1", 5, utcnow(), embedding=memory.embedder.embed_query(text))
    return RecallQuery(
        text, "u1", 5, plain.now, embedding=plain.embedding, earlier={"vector": vector.search(plain)}
    )


def _contents(memory: DreamMemory, rowids: list[int], user: str = "u1") -> list[str]:
    records = memory.store.get_by_rowids(user, rowids)
    return [records[r].content for r in rowids]


def test_without_vector_candidates_it_returns_nothing(memory: DreamMemory) -> None:
    path = memory.pipeline.paths["vector_feedback"]
    assert path.search(RecallQuery("my pet", "u1", 5, utcnow())) == []


def test_weight_zero_is_the_vector_path_and_a_weight_moves_toward_the_best_matches(
    memory: DreamMemory,
) -> None:
    query = _query(memory, "tell me about my pet")
    first = [c.rowid for c in query.earlier["vector"]]
    still = VectorFeedbackPath(memory.store, memory.vector_index, memory.embedder, weight=0.0)
    assert [c.rowid for c in still.search(query)] == first
    moved = memory.pipeline.paths["vector_feedback"].search(query)
    found = _contents(memory, [c.rowid for c in moved])
    assert set(found[:3]) == set(TEXTS[:3])  # the dog's three memories lead
    assert "My dog Comet is a beagle" not in found  # another user's memory never comes back
    scores = [c.score for c in moved]
    assert scores == sorted(scores, reverse=True)


def test_recall_fuses_it_when_it_is_named(memory: DreamMemory) -> None:
    result = memory.recall("tell me about my pet", user_id="u1", paths=["vector", "vector_feedback"])
    assert result.degraded == {}
    assert any("vector_feedback" in h.paths for h in result.hits)
