"""A current value inherits the relevance of the records it superseded (recall/lineage.py).

The hashing embedder makes cosines follow shared words, so each case states an old value
that shares the query's words and a new value that shares none of them: without the
inherited cosine the relevance floor would hold the new value back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.lineage import inherited_cosines
from dreammem.types import MemoryRecord, Status

SLOT = "user/dentist"
QUERY = "which dentist on Elm Street"
T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[DreamMemory]:
    """A store on the hashing embedder with a relevance floor (it has no calibrated one)."""
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=0.2))
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as memory:
        yield memory


def _value(memory: DreamMemory, text: str, user: str = "u1") -> str:
    return memory.remember(text, user_id=user, slot=SLOT, pinned=False).id


def test_the_replacement_of_a_matching_record_passes_the_floor(gated: DreamMemory) -> None:
    old = _value(gated, "My dentist is Dr Okafor on Elm Street")
    new = _value(gated, "Brandt took over after Okafor retired")
    assert gated.get(old, user_id="u1").status is Status.SUPERSEDED
    assert gated.recall(QUERY, user_id="u1", k=3, paths=["vector"]).ids == [new]
    assert gated.recall(QUERY, user_id="u1", k=3).ids == [new]


def test_the_relevance_is_inherited_down_a_chain(gated: DreamMemory) -> None:
    _value(gated, "My dentist is Dr Okafor on Elm Street")
    _value(gated, "Brandt took over after Okafor retired")
    newest = _value(gated, "Switched again: Lindqvist near the harbour")
    assert gated.recall(QUERY, user_id="u1", k=3).ids == [newest]


def test_an_unrelated_query_gets_no_replacement(gated: DreamMemory) -> None:
    _value(gated, "My dentist is Dr Okafor on Elm Street")
    _value(gated, "Brandt took over after Okafor retired")
    assert gated.recall("quarterly tax filing deadline", user_id="u1", k=3).ids == []


def test_another_users_record_never_lends_relevance(gated: DreamMemory) -> None:
    """Even a record of another user that names this user's record as its successor."""
    mine = gated.add("Brandt took over after Okafor retired", user_id="u1")
    theirs = MemoryRecord(
        user_id="u2",
        content="My dentist is Dr Okafor on Elm Street",
        status=Status.SUPERSEDED,
        superseded_by=mine.id,
    )
    (rowid,) = gated.store.insert([theirs], ["my dentist is dr okafor on elm street"])
    gated.store.put_vectors([rowid], gated.embedder.name, gated.embedder.embed_documents([theirs.content]))
    assert gated.recall(QUERY, user_id="u1", k=3).ids == []
    assert gated.store.superseded_by_any("u1", [mine.id]) == []
    assert [r.id for r in gated.store.superseded_by_any("u2", [mine.id])] == [theirs.id]


def test_a_dream_summary_passes_the_floor_when_one_of_its_sources_does(tmp_path: Path) -> None:
    """A session of chit-chat and one statement, condensed by a dream: the summary is far from
    the question as a whole, the statement it holds is not."""
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=0.6))
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as memory:
        turns = [
            "I found an old photo album in the attic.",
            "The new season of the baking show starts soon.",
            "No sugar in my tea anymore, please.",
            "My neighbour repainted the fence blue.",
        ]
        memory.add_many(
            [
                {"content": t, "user_id": "u1", "session_id": "s1", "event_time": T0 + timedelta(minutes=n)}
                for n, t in enumerate(turns)
            ]
        )
        memory.dream(user_id="u1", now=T0 + timedelta(days=1))
        summary = next(r for r in memory.get_all(user_id="u1") if "No sugar" in r.content)
        assert summary.provenance  # the statement now lives in the dream's summary only
        result = memory.recall("sugar in my tea", user_id="u1", k=3, now=T0 + timedelta(days=2))
        assert summary.id in result.ids
        assert result.hits[result.ids.index(summary.id)].path_scores["vector"] < 0.6
        assert memory.recall("quarterly tax filing", user_id="u1", k=3).ids == []


def test_inherited_cosines_follow_the_chain_and_skip_other_dimensions() -> None:
    """Each lookup asks only for the last step's records; a vector of another dimension is skipped."""
    query = np.array([1.0, 0.0], dtype=np.float32)
    asked: list[list[str]] = []
    c = MemoryRecord(user_id="u1", content="c", id="c")
    b = MemoryRecord(user_id="u1", content="b", superseded_by="c", id="b")
    a = MemoryRecord(user_id="u1", content="a", superseded_by="b", id="a")
    x = MemoryRecord(user_id="u1", content="x", id="x")
    chain = {"c": [b], "b": [a]}

    def sources(records: Sequence[MemoryRecord]) -> list[tuple[str, MemoryRecord]]:
        asked.append([r.id for r in records])
        return [(r.id, s) for r in records for s in chain.get(r.id, [])]

    vectors = {"a": np.array([3.0, 0.0], dtype=np.float32), "b": np.array([0.0, 1.0, 0.0], dtype=np.float32)}
    found = inherited_cosines(
        [c, x], query, sources, lambda ids: {i: vectors[i] for i in ids if i in vectors}
    )
    assert found == {"c": pytest.approx(1.0)}
    assert asked == [["c", "x"], ["b"], ["a"]]
