"""A unit of work writes to the graph only the records whose graph item changed (or that are new)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.graph_sync import GraphSync
from dreammem.types import MemoryRecord, Status


@pytest.fixture
def staged(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The ids of every record each unit of work staged for the graph."""
    calls: list[list[str]] = []
    original = GraphSync.stage

    def spy(self: GraphSync, records: Sequence[MemoryRecord]) -> None:
        calls.append([r.id for r in records])
        original(self, records)

    monkeypatch.setattr(GraphSync, "stage", spy)
    return calls


def test_a_change_the_graph_does_not_see_is_not_staged(tmp_path: Path, staged: list[list[str]]) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        mia = memory.add("Mia flew to Lisbon with Tom.", user_id="u1")
        ana = memory.add("Ana moved to Oslo.", user_id="u1")
        assert staged == [[mia.id], [ana.id]]
        staged.clear()
        engine = memory.engine
        engine.update([dataclasses.replace(mia, importance=5, metadata={"note": "kept"})])
        engine.update([dataclasses.replace(ana, status=Status.SUPERSEDED)])
        engine.update([dataclasses.replace(mia, content="Mia flew to Porto with Tom.")])
        assert staged == [[], [ana.id], [mia.id]]
        lena = MemoryRecord(user_id="u1", content="Lena works in Lima.")
        with engine.unit() as unit:  # new in this unit, then only marked: new to the graph all the same
            unit.insert([lena], memory.embedder.embed_documents([lena.content]), terms=["lena"], model="m")
            unit.update([dataclasses.replace(lena, pinned=True)])
        assert staged[-1] == [lena.id]
        mentions = memory.graph.entities_of("u1", [mia.id, ana.id, lena.id])
        assert {e.name for e in mentions[mia.id]} == {"Mia", "Porto", "Tom"}
        assert ana.id not in mentions and {e.name for e in mentions[lena.id]} == {"Lena", "Lima"}
