"""Hop 2 stops reading bridges once no bridge left can reach the top ``limit``; the walk is unchanged."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.stores import traversal
from dreammem.stores.traversal import GraphNeighbor, TraversalLimits, traverse
from dreammem_bench.latency import synthetic_turns


class _Rows:
    """The graph store, counting the memories that ``memories_of`` reads."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.rows = 0
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def memories_of(self, user_id: str, keys: list[str], *, per_entity: int) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = self._inner.memories_of(user_id, keys, per_entity=per_entity)
        self.rows += len(found)
        self.reads += 1
        return found


@pytest.fixture
def filled(memory: DreamMemory) -> DreamMemory:
    """Two users' synthetic turns: names, places, order numbers and amounts as entities."""
    memory.add_many(list(synthetic_turns(400, 2)))
    return memory


def _walks(graph: Any, keysets: list[list[str]]) -> dict[tuple[Any, ...], list[GraphNeighbor]]:
    limits = (TraversalLimits(), TraversalLimits(max_bridges=5), TraversalLimits(per_entity=8))
    return {
        (user, tuple(keys), limit, bound): traverse(graph, user, keys, limit=limit, limits=bound)
        for user in ("user-000", "user-001")
        for keys in keysets
        for limit in (1, 5, 30, 31, 80)
        for bound in limits
    }


def test_the_walk_is_the_same_as_reading_every_bridge(
    filled: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert filled.graph is not None
    rng = random.Random(5)
    mentioned = filled.graph.entities_of("user-000", [r.id for r in filled.store.find("user-000")])
    names = sorted({e.key for entities in mentioned.values() for e in entities})
    assert len(names) > 40
    keysets = [rng.sample(names, rng.randint(1, 3)) for _ in range(40)] + [["mia"], ["lisbon", "tom"]]
    stopping = _Rows(filled.graph)
    walks = _walks(stopping, keysets)
    assert any(n.hops == 2 for found in walks.values() for n in found)  # hop 2 is exercised
    monkeypatch.setattr(traversal, "_settled", lambda *args: False)  # read every chosen bridge
    every = _Rows(filled.graph)
    assert _walks(every, keysets) == walks
    assert stopping.rows < 0.7 * every.rows  # hop 1's reads included
    # A level that cannot settle the walk is read with the next: few more round trips.
    assert stopping.reads < 1.2 * every.reads
