"""The embedded graph with relation edges a caller writes, the view of them, and the async twins."""

from __future__ import annotations

import asyncio
import sys
import xml.etree.ElementTree as ET

import pytest

from dreammem import ConfigError, DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.graph_view import user_graph
from dreammem.stores.base import GraphEntity, GraphItem, GraphRelation

TOM, ACME = GraphEntity("tom becker", "Tom Becker"), GraphEntity("acme corp", "Acme Corp")


@pytest.fixture
def related() -> DreamMemory:
    """A store whose graph holds one relation edge, written through the GraphStore contract."""
    memory = DreamMemory(None, embedder=HashingEmbedder())
    record = memory.add("Tom Becker signs the contracts at Acme Corp.", user_id="a")
    item = GraphItem(record.id, (TOM, ACME), (GraphRelation(TOM.key, "works_at", ACME.key),))
    memory.graph.upsert("a", [item])
    return memory


def test_a_relation_edge_is_in_the_view_and_drawn_as_a_titled_path(related: DreamMemory) -> None:
    view = user_graph(related, user_id="a")
    labels = {n.id: n.label for n in view.nodes}
    relations = [(labels[e.source], e.label, labels[e.target]) for e in view.edges if e.label != "mentions"]
    assert len(relations) == 1  # the contract gives it from both ends: drawn once
    assert {relations[0][0], relations[0][2]} == {"Tom Becker", "Acme Corp"} and relations[0][1] == "works_at"
    root = ET.fromstring(view.to_svg())
    paths = [el for el in root.iter("{http://www.w3.org/2000/svg}path")]
    assert len(paths) == 1
    assert "".join(paths[0].itertext()) == "works_at"


def test_relations_are_read_either_way_and_scoped_to_the_user(related: DreamMemory) -> None:
    assert related.graph.related("a", [ACME.key]) == [
        (ACME.key, "works_at", TOM.key)
    ]  # (key, relation, other)
    assert related.graph.related("a", [TOM.key]) == [(TOM.key, "works_at", ACME.key)]
    assert len(related.graph.related("a", [TOM.key, ACME.key])) == 2
    assert related.graph.related("b", [TOM.key]) == []
    assert related.graph.stats("a").relations == 1


def test_rewriting_a_memory_replaces_its_relations(related: DreamMemory) -> None:
    (record,) = related.get_all(user_id="a")
    related.graph.upsert("a", [GraphItem(record.id, (TOM, ACME))])
    assert related.graph.related("a", [TOM.key]) == []
    assert related.graph.stats("a").relations == 0


def test_forgetting_the_memory_drops_its_relation_edges(related: DreamMemory) -> None:
    (record,) = related.get_all(user_id="a")
    related.forget(record.id, user_id="a")
    assert related.graph.related("a", [TOM.key]) == []
    assert user_graph(related, user_id="a").nodes == ()


def test_graph_export_without_networkx_names_the_extra(
    related: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(ConfigError, match=r"dreammem\[graph\]"):
        user_graph(related, user_id="a").to_networkx()


def test_a_long_memory_label_is_cut_in_the_picture_but_whole_in_its_node() -> None:
    memory = DreamMemory(None, embedder=HashingEmbedder())
    text = "Tom Becker " + "reviewed the quarterly numbers again " * 6
    memory.add(text, user_id="a")
    view = user_graph(memory, user_id="a")
    (node,) = view.memories()
    assert node.label == " ".join(text.split())
    drawn = "".join(ET.fromstring(view.to_svg()).itertext())
    assert "…" in drawn and node.label not in drawn


def test_the_graph_async_twins_give_what_the_sync_methods_give(related: DreamMemory) -> None:
    graph = related.graph
    (record,) = related.get_all(user_id="a")
    sync = graph.neighbors("a", [TOM.key], hops=2)

    async def run() -> None:
        assert await graph.aneighbors("a", [TOM.key], hops=2) == sync
        await graph.aremove("a", [record.id])
        assert await graph.aneighbors("a", [TOM.key]) == []
        await graph.aupsert("a", [GraphItem(record.id, (TOM,))])

    asyncio.run(run())
    assert [n.memory_id for n in graph.neighbors("a", [TOM.key])] == [record.id]
