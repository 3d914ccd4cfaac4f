"""The graph walk reads bridges from the best hop-1 memories only (a bound for large graphs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dreammem import DreamMemory
from dreammem.stores.traversal import TraversalLimits, traverse

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_bridges_come_from_the_best_hop1_memories(memory: DreamMemory) -> None:
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
