"""The graph walk reads bridges from the best hop-1 memories only (a bound for large graphs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.stores import traversal
from dreammem.stores.traversal import TraversalLimits, traverse

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _fill(memory: DreamMemory) -> None:
    memory.add_many(
        [
            {"content": "Alice met Bob in Lisbon.", "user_id": "u", "event_time": T0},
            {
                "content": "Alice and Zed visited Lisbon.",
                "user_id": "u",
                "event_time": T0 + timedelta(days=1),
            },
            {"content": "Alice saw Carol.", "user_id": "u", "event_time": T0 + timedelta(days=2)},
            {"content": "Bob fixed the kayak.", "user_id": "u", "event_time": T0 + timedelta(days=3)},
            {"content": "Carol sold the lamp.", "user_id": "u", "event_time": T0 + timedelta(days=4)},
        ]
    )


def test_bridges_come_from_the_best_hop1_memories(memory: DreamMemory) -> None:
    _fill(memory)
    assert memory.graph is not None
    by_id = {r.id: r.content for r in memory.store.find("u")}

    def walk(limits: TraversalLimits) -> dict[str, int]:
        found = traverse(memory.graph, "u", ["alice", "lisbon"], limit=10, limits=limits)  # type: ignore[arg-type]
        return {by_id[n.memory_id]: n.hops for n in found}

    every = walk(TraversalLimits())
    assert every["Bob fixed the kayak."] == 2 and every["Carol sold the lamp."] == 2
    # The two memories with both seeds score best; only their entities bridge.
    best_two = walk(TraversalLimits(bridge_sources=2))
    assert best_two["Bob fixed the kayak."] == 2 and "Carol sold the lamp." not in best_two
    assert best_two["Alice saw Carol."] == 1


class _Reads:
    """The graph store, noting which read primitives a walk calls."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name in ("entity_stats", "memories_of", "entities_of", "related"):
            self.calls.append(name)
        return getattr(self._inner, name)


def test_hop2_is_skipped_only_when_hop1_fills_the_limit_and_the_walk_is_unchanged(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(memory)
    graph = _Reads(memory.graph)
    seeds = [["alice", "lisbon"], ["alice"], ["bob"], ["carol", "kayak"], ["lisbon"]]
    walks = {
        (tuple(keys), limit): traverse(graph, "u", keys, limit=limit)  # type: ignore[arg-type]
        for keys in seeds
        for limit in range(1, 7)
    }
    graph.calls.clear()
    assert traverse(graph, "u", ["alice"], limit=3)[-1].hops == 1  # type: ignore[arg-type]
    assert "entities_of" not in graph.calls  # 3 memories mention Alice: no bridge is read
    graph.calls.clear()
    assert traverse(graph, "u", ["alice"], limit=4)[-1].hops == 2  # type: ignore[arg-type]
    assert "entities_of" in graph.calls
    monkeypatch.setattr(traversal, "_hop2_may_rank", lambda *args: True)
    for (keys, limit), found in walks.items():
        assert traverse(graph, "u", list(keys), limit=limit) == found  # type: ignore[arg-type]
