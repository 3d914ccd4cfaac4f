"""Equal scores rank by insertion order, never by the random record ids.

Two stores get the same memories under ids that rise with insertion in one and fall
in the other; every ranking must come out the same. ``tests/integration/test_neo4j_ties.py``
runs the same checks on a real Neo4j server.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import dreammem.types
from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)

# Said at one time, all naming Caroline (or Melanie and Rex): every graph score ties
# within its group, so only the tie rule orders them.
TEXTS = [
    *(f"Caroline mentioned item number {n} at the market." for n in range(12)),
    *(f"Melanie and Rex walked past stall {n}." for n in range(6)),
]
QUERIES = [
    "What did Caroline mention?",
    "Where did Melanie walk?",
    "Tell me about Rex",
    "caroline and melanie",
]


def fill(
    open_store: Callable[[], DreamMemory], user: str, monkeypatch: pytest.MonkeyPatch, *, rising: bool
) -> DreamMemory:
    """A store of TEXTS for ``user`` whose record ids rise (or fall) with insertion order."""
    base = random.getrandbits(100) << 24  # fresh ids on a shared server
    counter = iter(range(1, 1 << 20))

    def next_uuid() -> uuid.UUID:
        n = next(counter)
        return uuid.UUID(int=base + (n if rising else (1 << 22) - n))

    with monkeypatch.context() as patch:
        patch.setattr(dreammem.types.uuid, "uuid4", next_uuid)
        memory = open_store()
        memory.add_many([{"content": t, "user_id": user, "event_time": T0} for t in TEXTS])
    return memory


def texts(memory: DreamMemory, user: str, query: str, *, k: int, paths: list[str] | None = None) -> list[str]:
    return [h.record.content for h in memory.recall(query, user_id=user, k=k, paths=paths)]


def check_ties(rising: tuple[DreamMemory, str], falling: tuple[DreamMemory, str]) -> None:
    """The same rankings from both stores, graph path alone and full recall; newest record first."""
    pairs = (rising, falling)
    ids = [sorted(m.store.find(u), key=lambda r: r.id) for m, u in pairs]
    assert [r.content for r in ids[0]] == [r.content for r in reversed(ids[1])], "ids must differ in order"
    for query in QUERIES:
        graph = [texts(m, u, query, k=10, paths=["graph"]) for m, u in pairs]
        assert graph[0] and graph[0] == graph[1], query
        full = [texts(m, u, query, k=8) for m, u in pairs]
        assert full[0] == full[1], query
    newest = [f"Caroline mentioned item number {n} at the market." for n in (11, 10, 9)]
    for memory, user in pairs:
        assert texts(memory, user, "What did Caroline mention?", k=3, paths=["graph"]) == newest


@pytest.fixture
def twins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DreamMemory, DreamMemory]]:
    rising = fill(
        lambda: DreamMemory(tmp_path / "a", embedder=HashingEmbedder()), "u1", monkeypatch, rising=True
    )
    falling = fill(
        lambda: DreamMemory(tmp_path / "b", embedder=HashingEmbedder()), "u1", monkeypatch, rising=False
    )
    yield rising, falling
    rising.close()
    falling.close()


def test_ties_rank_alike_whatever_the_ids_on_sqlite(twins: tuple[DreamMemory, DreamMemory]) -> None:
    check_ties((twins[0], "u1"), (twins[1], "u1"))
