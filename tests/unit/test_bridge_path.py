"""The bridge path: from the best match to the memories that share a rare entity with it (issue 33).

The demo store holds "Order #48213 for the new GPU server was placed today." and, two days later,
"The vendor says order #48213 ships on 2024-07-15.". "When does the GPU server arrive?" matches the
first by words and by vector; the second, the answer, shares no word with it and sits far from it,
and the graph path cannot reach it from the question's own entities ("GPU" is none). The bridge
path follows the order number from the first to the second, on the real MiniLM embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.cli import DEMO_SESSIONS
from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.bridge import BridgePath
from dreammem.recall.recipe import PRESETS

T0 = datetime(2024, 7, 1, 9, 0, tzinfo=UTC)
VENDOR = "The vendor says order #48213 ships on 2024-07-15."
WITHOUT_BRIDGE = tuple(p for p in PRESETS["general"] if p != "bridge")


def _demo_store(embedder: Embedder) -> DreamMemory:
    memory = DreamMemory(None, embedder=embedder)
    for day, (session, turns) in enumerate(DEMO_SESSIONS):
        for n, (role, text) in enumerate(turns):
            when = T0 + timedelta(days=2 * day, minutes=n)
            memory.add(text, user_id="mia", session_id=session, role=role, event_time=when)
    return memory


@pytest.fixture(scope="module")
def demo(minilm: Embedder) -> Iterator[DreamMemory]:
    with _demo_store(minilm) as memory:
        yield memory


def _recalled(memory: DreamMemory, question: str, paths: tuple[str, ...]) -> list[str]:
    result = memory.recall(question, user_id="mia", k=5, paths=paths)
    assert not result.degraded
    return [h.record.content for h in result]


def test_the_demo_question_recalls_the_vendor_turn_through_the_order_number(demo: DreamMemory) -> None:
    assert "bridge" in RecallConfig().active_paths  # on by default
    hits = demo.recall("When does the GPU server arrive?", user_id="mia", k=5)
    assert VENDOR in [h.record.content for h in hits][:3]
    vendor = next(h for h in hits if h.record.content == VENDOR)
    assert "bridge" in vendor.paths and "keyword" not in vendor.paths


def test_without_the_bridge_the_vendor_turn_is_not_recalled(demo: DreamMemory) -> None:
    assert VENDOR not in _recalled(demo, "When does the GPU server arrive?", WITHOUT_BRIDGE)


@pytest.mark.parametrize(
    "question", ["What is the capital of France?", "Recommend a good science fiction novel."]
)
def test_an_unrelated_question_recalls_nothing_new(demo: DreamMemory, question: str) -> None:
    with_bridge = _recalled(demo, question, PRESETS["general"])
    assert with_bridge == _recalled(demo, question, WITHOUT_BRIDGE)
    assert VENDOR not in with_bridge


def bridge_scenario(memory: DreamMemory, user: str = "u") -> None:
    """The path's rules on one store (the Neo4j integration test runs it on a server too).

    A seed bridges along its rare entities only (not a name most memories mention, not an
    entity the question names itself) to the other memories mentioning them, never to itself.
    """

    def _rowid(text: str) -> int:
        [record] = memory.add_many([{"content": text, "user_id": user, "event_time": T0}])
        return memory.store.rowids(user, [record.id])[record.id]

    seed = _rowid("Carla filed ticket #7731 about the login outage.")
    answer = _rowid("The fix for #7731 shipped after the cache change.")
    for n in range(7):  # "Carla" is mentioned too often to bridge
        _rowid(f"Carla went for a walk number {n}.")
    named = _rowid("The login outage hit Berlin; Carla was there.")
    path = BridgePath(memory.graph, memory.store, max_df=5)

    def found(question: str) -> list[int]:
        query = RecallQuery(question, user, 10, T0, earlier={"vector": [Candidate(seed, 0.9)]})
        return [c.rowid for c in path.search(query)]

    assert found("why could nobody log in?") == [answer]
    assert found("what happened with #7731?") == []  # the graph path follows the question's own ids
    assert named not in found("why could nobody log in?")


def test_the_bridge_follows_rare_entities_only(memory: DreamMemory) -> None:
    bridge_scenario(memory)


def test_the_bridge_needs_candidates_before_it(memory: DreamMemory) -> None:
    path = BridgePath(memory.graph, memory.store)
    assert path.search(RecallQuery("anything", "u", 10, T0)) == []
    with pytest.raises(ValueError, match="at least 1"):
        BridgePath(memory.graph, memory.store, seeds=0)


def test_names_bridge_only_when_asked_identifiers_by_default(memory: DreamMemory) -> None:
    [seed, by_name, by_id] = memory.add_many(
        [
            {"content": text, "user_id": "u", "event_time": T0}
            for text in (
                "Ravi from Lisbon filed ticket #7731.",
                "Lisbon was sunny all week.",
                "The fix for #7731 shipped.",
            )
        ]
    )
    rowids = memory.store.rowids("u", [seed.id, by_name.id, by_id.id])
    query = RecallQuery("why the delay?", "u", 10, T0, earlier={"vector": [Candidate(rowids[seed.id], 0.9)]})
    every = [c.rowid for c in BridgePath(memory.graph, memory.store, kinds=None).search(query)]
    ids = [c.rowid for c in BridgePath(memory.graph, memory.store).search(query)]  # identifiers only
    assert sorted(every) == sorted([rowids[by_name.id], rowids[by_id.id]])
    assert ids == [rowids[by_id.id]]


def test_a_copy_of_a_seed_is_no_bridge_but_another_seed_is(memory: DreamMemory) -> None:
    texts = ("Carla filed ticket #7731.", "Carla filed ticket #7731.", "The fix for #7731 shipped.")
    added = memory.add_many([{"content": t, "user_id": "u", "event_time": T0} for t in texts])
    seed, copy, answer = (memory.store.rowids("u", [r.id])[r.id] for r in added)
    earlier = {"vector": [Candidate(seed, 0.9), Candidate(answer, 0.5)]}
    found = BridgePath(memory.graph, memory.store).search(RecallQuery("why?", "u", 10, T0, earlier=earlier))
    assert [c.rowid for c in found] == [answer, seed]  # each seed reaches the other, neither the copy
    assert copy not in [c.rowid for c in found]
