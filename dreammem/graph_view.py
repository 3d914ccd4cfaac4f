"""A user's memory graph as data you can look at: networkx, or an SVG picture.

Built only from the public graph contract (``entities_of``, ``related``), so it works
on the embedded graph and on Neo4j alike::

    view = user_graph(memory, user_id="alice")
    view.to_svg()            # a self-contained picture (notebooks: IPython.display.SVG)
    view.to_networkx()       # pip install "dreammem[graph]"

Memories sit in the left column, the entities they mention in the right one; a line
joins a memory to each entity it mentions, an arc joins two entities of an extracted
relation.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from dreammem.errors import ConfigError

if TYPE_CHECKING:
    from dreammem.memory import DreamMemory

__all__ = ["GraphEdge", "GraphNode", "GraphView", "user_graph"]

_LABEL_CHARS = 48
_ROW = 26
_WIDTH = 860
_MEMORY_X = 10
_ENTITY_X = 560


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A memory (``kind="memory"``, ``layer`` set) or an entity (``kind`` its entity kind)."""

    id: str
    label: str
    kind: str
    layer: str | None = None


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """``mentions`` (memory -> entity) or a relation between two entities."""

    source: str
    target: str
    label: str


@dataclass(frozen=True, slots=True)
class GraphView:
    """The nodes and edges of one user's graph."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]

    def memories(self) -> list[GraphNode]:
        """The memory nodes, in the order they were read (newest first)."""
        return [n for n in self.nodes if n.kind == "memory"]

    def entities(self) -> list[GraphNode]:
        """The entity nodes, in order of first mention."""
        return [n for n in self.nodes if n.kind != "memory"]

    def to_networkx(self) -> Any:
        """A ``networkx.MultiDiGraph`` with ``label``/``kind``/``layer`` node attributes.

        Raises:
            ConfigError: networkx is not installed (``pip install "dreammem[graph]"``).
        """
        try:
            import networkx as nx  # noqa: PLC0415 - optional (graph extra), only when a graph is drawn
        except ImportError as exc:
            raise ConfigError('graph export needs networkx: pip install "dreammem[graph]"') from exc
        graph = nx.MultiDiGraph()
        for node in self.nodes:
            graph.add_node(node.id, label=node.label, kind=node.kind, layer=node.layer)
        for edge in self.edges:
            graph.add_edge(edge.source, edge.target, label=edge.label)
        return graph

    def to_svg(self) -> str:
        """A self-contained SVG picture of the graph (two columns, see the module docs)."""
        memories, entities = self.memories(), self.entities()
        y_of = {n.id: 40 + i * _ROW for i, n in enumerate(memories)}
        y_of.update({n.id: 40 + i * _ROW for i, n in enumerate(entities)})
        height = 50 + _ROW * max(len(memories), len(entities), 1)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
            f'viewBox="0 0 {_WIDTH} {height}" font-family="sans-serif" font-size="12">',
            '<text x="10" y="18" font-weight="bold">memories</text>',
            f'<text x="{_ENTITY_X}" y="18" font-weight="bold">entities</text>',
        ]
        for edge in self.edges:
            y1, y2 = y_of[edge.source], y_of[edge.target]
            if edge.label == "mentions":
                out.append(
                    f'<line x1="{_ENTITY_X - 150}" y1="{y1 - 4}" x2="{_ENTITY_X - 6}" y2="{y2 - 4}" '
                    'stroke="#9aa5d6" stroke-width="1"/>'
                )
            else:
                bend = _WIDTH - 20
                out.append(
                    f'<path d="M {_ENTITY_X + 200} {y1 - 4} C {bend} {y1 - 4}, {bend} {y2 - 4}, '
                    f'{_ENTITY_X + 200} {y2 - 4}" fill="none" stroke="#e07b39"><title>'
                    f"{escape(edge.label)}</title></path>"
                )
        for node in memories:
            label = node.label if len(node.label) <= _LABEL_CHARS else node.label[: _LABEL_CHARS - 1] + "…"
            out.append(
                f'<text x="{_MEMORY_X}" y="{y_of[node.id]}"><title>{escape(node.id)} '
                f"({escape(node.layer or '')})</title>{escape(label)}</text>"
            )
        for node in entities:
            out.append(
                f'<circle cx="{_ENTITY_X}" cy="{y_of[node.id] - 4}" r="4" fill="#4051b5"/>'
                f'<text x="{_ENTITY_X + 10}" y="{y_of[node.id]}">{escape(node.label)} '
                f'<tspan fill="#888">{escape(node.kind)}</tspan></text>'
            )
        out.append("</svg>")
        return "\n".join(out)


def user_graph(memory: DreamMemory, *, user_id: str, limit: int = 50) -> GraphView:
    """The graph around a user's newest ``limit`` active memories.

    Raises:
        ScopeError: a missing or malformed user id.
    """
    records = memory.get_all(user_id=user_id, limit=limit)
    mentioned = memory.graph.entities_of(user_id, [r.id for r in records])
    nodes: dict[str, GraphNode] = {}
    edges: list[GraphEdge] = []
    for record in records:
        if record.id not in mentioned:
            continue
        nodes[record.id] = GraphNode(
            record.id, " ".join(record.content.split()), "memory", record.layer.value
        )
        for entity in mentioned[record.id]:
            node_id = f"entity:{entity.key}"
            nodes.setdefault(node_id, GraphNode(node_id, entity.name, entity.kind))
            edges.append(GraphEdge(record.id, node_id, "mentions"))
    keys = [n.id.removeprefix("entity:") for n in nodes.values() if n.kind != "memory"]
    drawn: set[tuple[str, str, str]] = set()
    for source, relation, target in memory.graph.related(user_id, keys):
        a, b = f"entity:{source}", f"entity:{target}"
        # ``related`` gives an edge once from each end it touches: draw it once.
        if a in nodes and b in nodes and (b, relation, a) not in drawn:
            drawn.add((a, relation, b))
            edges.append(GraphEdge(a, b, relation))
    return GraphView(tuple(nodes.values()), tuple(dict.fromkeys(edges)))
