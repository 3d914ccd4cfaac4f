"""The graph path: query entities -> 1-2 hops over the entity graph -> memories.

The query's entities are whatever the extractor finds (names, ids, amounts, dates,
places; jieba's POS tags for Chinese) plus every 1-3 word span of the query, so a
name typed in lower case ("what did caroline say") still reaches the entity
"Caroline". Spans the user's graph does not know cost nothing: the graph store
keeps only known keys. The walk itself (weights, hubs, limits) is
:func:`dreammem.stores.traversal.traverse`.
"""

from __future__ import annotations

import re

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.base import GraphStore, RecordStore
from dreammem.text.entities import extract_entities, normalize_entity
from dreammem.text.tokenize import STOPWORDS, contains_cjk, tokenize

__all__ = ["GraphPath", "query_entity_keys"]

_MAX_SPAN = 3
_MAX_KEYS = 256
_EDGE_PUNCT = " \t.,;:!?()[]{}\"'“”‘’«»<>"
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")


def _word_spans(words: list[str]) -> list[str]:
    stop = [w.casefold() in STOPWORDS for w in words]  # each word looked up once, not once per span
    spans: list[str] = []
    for size in range(1, _MAX_SPAN + 1):
        for start in range(len(words) - size + 1):
            if all(stop[start : start + size]):
                continue
            spans.append(" ".join(words[start : start + size]))
    return spans


def query_entity_keys(text: str, *, named_only: bool = False) -> list[str]:
    """Candidate entity keys for a query, most specific (extracted) first.

    ``named_only``: only the entities the extractor finds, not every word span.
    """
    keys = [e.key for e in extract_entities(text)]
    if named_only:
        return [k for k in dict.fromkeys(keys) if k][:_MAX_KEYS]
    raw = [w.strip(_EDGE_PUNCT) for w in text.split()]
    raw = [_POSSESSIVE.sub("", w) for w in raw if w]
    keys += [normalize_entity(s) for s in _word_spans([w for w in raw if w])]
    if contains_cjk(text):
        keys += [t for t in tokenize(text, cjk_chars=False) if t not in STOPWORDS and len(t) > 1]
    keys += [normalize_entity(s) for s in _word_spans(tokenize(text, cjk_chars=False))]
    return [k for k in dict.fromkeys(keys) if k][:_MAX_KEYS]


class GraphPath:
    """Memories linked to the query's entities, 1-hop matches above 2-hop ones.

    Args:
        graph: The graph store to walk.
        store: The record store (maps memory ids to the row ids fusion works on).
        hops: 1 or 2.
        named_only: Seed the walk only from the entities the query names (what the
            extractor finds: names, ids, places), not from every 1-3 word span; off by
            default (measured on LoCoMo in docs/BENCHMARKS.md, issue 16 levers).
    """

    name = "graph"
    """Reads only the query's entities, user and limit: runs before the query is embedded."""

    def __init__(
        self, graph: GraphStore, store: RecordStore, *, hops: int = 2, named_only: bool = False
    ) -> None:
        self._graph = graph
        self._store = store
        self.hops = hops
        self.named_only = named_only

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Graph neighbours of the query's entities, best first."""
        keys = query_entity_keys(query.text, named_only=self.named_only)
        if not keys:
            return []
        found = self._graph.neighbors(query.user_id, keys, hops=self.hops, limit=query.limit)
        rowids = self._store.rowids(query.user_id, [n.memory_id for n in found])
        return [Candidate(rowids[n.memory_id], n.score) for n in found if n.memory_id in rowids]
