from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from dreammem import DreamMemory, ScopeError
from dreammem.embed import HashingEmbedder
from dreammem.graph_view import user_graph


@pytest.fixture
def memory() -> DreamMemory:
    m = DreamMemory(None, embedder=HashingEmbedder())
    m.add("Tom Becker approves order #48213 for Northwind.", user_id="a")
    m.add("Mia works at Northwind with Tom Becker.", user_id="a")
    m.add("Lena <b>moved</b> to Oslo & likes it.", user_id="a")
    m.add("Someone else's friend Karl lives in Rome.", user_id="b")
    return m


def test_view_joins_each_memory_to_the_entities_it_mentions(memory: DreamMemory) -> None:
    view = user_graph(memory, user_id="a")
    labels = {n.id: n.label for n in view.nodes}
    mentions = {(labels[e.source], labels[e.target]) for e in view.edges if e.label == "mentions"}
    assert ("Mia works at Northwind with Tom Becker.", "Tom Becker") in mentions
    assert ("Tom Becker approves order #48213 for Northwind.", "#48213") in mentions
    northwind = [n for n in view.entities() if n.label == "Northwind"]
    assert len(northwind) == 1  # one node however many memories mention it
    assert sum(1 for e in view.edges if e.target == northwind[0].id) == 2
    assert not any("Karl" in n.label or "Rome" in n.label for n in view.nodes)  # scoped to the user
    assert all(n.layer == "episodic" for n in view.memories())


def test_networkx_export_has_every_node_and_edge(memory: DreamMemory) -> None:
    view = user_graph(memory, user_id="a")
    graph = view.to_networkx()
    assert graph.number_of_nodes() == len(view.nodes) and graph.number_of_edges() == len(view.edges)
    (tom,) = [n for n, data in graph.nodes(data=True) if data["label"] == "Tom Becker"]
    assert graph.in_degree(tom) == 2


def test_svg_is_well_formed_and_escapes_content(memory: DreamMemory) -> None:
    svg = user_graph(memory, user_id="a").to_svg()
    root = ET.fromstring(svg)  # raises on markup that leaked from a memory
    texts = "".join(root.itertext())
    assert "Lena <b>moved</b> to Oslo & likes it." in texts and "Tom Becker" in texts


def test_limit_and_scope() -> None:
    m = DreamMemory(None, embedder=HashingEmbedder())
    for n in range(5):
        m.add(f"Order #{1000 + n} was placed.", user_id="a")
    assert len(user_graph(m, user_id="a", limit=2).memories()) == 2
    assert user_graph(m, user_id="nobody").nodes == ()
    with pytest.raises(ScopeError):
        user_graph(m, user_id="")
