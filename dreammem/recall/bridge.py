"""The bridge path (name ``bridge``): memories sharing a rare entity with the best matches.

A question often matches the memory that *introduces* a thing ("Order #48213 for the new
GPU server was placed today") while the answer is another memory that names it only by its
identifier ("The vendor says order #48213 ships on 2024-07-15"): it shares no word with
"When does the GPU server arrive?" and sits far from it in embedding space. The graph path
cannot reach it either, since it starts from the question's own entities ("GPU" is none).
This path takes the two-hop route through the best match instead::

    question -> the first stage's best candidates (their fused vote, as the reply path reads it)
             -> the identifiers they mention that few memories share (ids, amounts, dates,
                contacts: the ``KEY_KINDS`` of :func:`dreammem.text.entities.extract_entities`,
                mentioned by at most ``max_df`` memories)
             -> the other memories mentioning them

Each memory reached gets ``sum(w(entity) / (rrf_k + seed rank))`` over the seeds and
entities that lead to it (``w``: the entity's normalised IDF,
:func:`dreammem.stores.traversal.entity_weight`), so a memory sharing a rarer entity with a
better seed leads. Entities mentioned by more memories (a recurring date) never bridge.
Names do not bridge by default: on LoCoMo's transcripts a pet's or a friend's name led
to lines about other things (hit@5 0.799 -> 0.796, multi-hop 0.697 -> 0.683), identifiers
alone changed nothing there (docs/BENCHMARKS.md, session 28). Entities the question names
itself are left to the graph path. The seeds' entities are read from their text, as the
graph was built; the rest through the :class:`~dreammem.stores.base.GraphStore` primitives,
so the embedded graph and Neo4j answer alike (a seed without such an identifier costs no
read). Its hits are judged by the relevance gate on that evidence, as the keyword path's
are (``lexical`` in :mod:`dreammem.recall.recipe`): they pass when the question as a whole
does, so an unrelated question recalls nothing through them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.earlier import active_records
from dreammem.recall.fusion import fused_once
from dreammem.recall.graph import query_entity_keys
from dreammem.recall.scored import text_key
from dreammem.stores.base import GraphStore, RecordStore
from dreammem.stores.traversal import entity_weight
from dreammem.text.entities import KEY_KINDS, extract_entities

__all__ = ["BridgePath"]


class BridgePath:
    """Memories that share a rare entity with the first stage's best candidates.

    Args:
        graph: The graph store (which memory mentions which entity).
        store: The record store (maps memory ids and row ids).
        sources: The paths whose candidates are the seeds, in their fused order.
        seeds: How many of the best-voted candidates lend their entities.
        max_df: An entity mentioned by more memories than this does not bridge.
        kinds: The entity kinds that may bridge; None: every kind. By default the identifying
            ones (:data:`~dreammem.text.entities.KEY_KINDS`: ids, amounts, dates, contacts, urls),
            not names: measured in docs/BENCHMARKS.md, session 28.
        rrf_k: The reciprocal-rank constant of the seeds' order and of the votes.

    Raises:
        ValueError: ``seeds`` or ``max_df`` below 1.
    """

    name = "bridge"

    def __init__(
        self,
        graph: GraphStore,
        store: RecordStore,
        *,
        sources: Sequence[str] = ("keyword", "vector", "temporal"),
        seeds: int = 3,
        max_df: int = 5,
        kinds: Collection[str] | None = KEY_KINDS,
        rrf_k: int = 10,
    ) -> None:
        if seeds < 1 or max_df < 1:
            raise ValueError("seeds and max_df must be at least 1")
        self._graph = graph
        self._store = store
        self.sources = tuple(sources)
        self.seeds = seeds
        self.max_df = max_df
        self.kinds = None if kinds is None else frozenset(kinds)
        self.rrf_k = rrf_k

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The memories the best seeds' rare entities lead to, best voted first (ties: newer row)."""
        named = set(query_entity_keys(query.text))
        seeds = [(seed, keys - named, text) for seed, keys, text in self._seeds(query)]
        keys = sorted({key for _, found, _ in seeds for key in found})
        if not keys:
            return []
        user = query.user_id
        total, df = self._graph.entity_stats(user, keys)
        rare = {key: entity_weight(n, total) for key, n in df.items() if 1 < n <= self.max_df}
        holders: dict[str, list[str]] = {}
        for key, memory_id in (
            self._graph.memories_of(user, sorted(rare), per_entity=self.max_df) if rare else ()
        ):
            holders.setdefault(key, []).append(memory_id)
        votes: dict[str, float] = {}
        for rank, (seed, found, _) in enumerate(seeds, 1):
            for key in found & rare.keys():
                for other in holders.get(key, ()):
                    if other != seed:
                        votes[other] = votes.get(other, 0.0) + rare[key] / (self.rrf_k + rank)
        rowids = self._store.rowids(user, list(votes)) if votes else {}
        chosen = {rowids[m]: v for m, v in votes.items() if m in rowids}
        if query.allowed is not None:
            chosen = {rowid: v for rowid, v in chosen.items() if rowid in query.allowed}
        # A copy of a seed (its text in another layer) is no bridge: it is found with the seed.
        copies = {text_key(text) for _, _, text in seeds}
        seed_ids = {seed for seed, _, _ in seeds}
        records = active_records(query, self._store, list(chosen))
        chosen = {
            r: v
            for r, v in chosen.items()
            if r in records and (records[r].id in seed_ids or text_key(records[r].content) not in copies)
        }
        order = sorted(chosen, key=lambda rowid: (-chosen[rowid], -rowid))
        return [Candidate(rowid, chosen[rowid]) for rowid in order[: query.limit]]

    def _seeds(self, query: RecallQuery) -> list[tuple[str, set[str], str]]:
        """The sources' best candidates by fused vote (active ones): memory id, entity keys, text.

        The keys are read from the records' text as the graph was built from it
        (:func:`~dreammem.stores.base.records_to_graph_items`), not asked of the graph store.
        """
        ranked = {name: query.earlier[name] for name in self.sources if query.earlier.get(name)}
        if not ranked:
            return []
        best = [f.rowid for f in fused_once(query.searches, ranked, k=self.rrf_k)[: self.seeds]]
        records = active_records(query, self._store, best)
        found = [records[rowid] for rowid in best if rowid in records]
        return [(r.id, self._keys(r.content), r.content) for r in found]

    def _keys(self, text: str) -> set[str]:
        """The keys of the entities of these kinds that the text mentions."""
        return {
            e.key for e in extract_entities(text) if e.key and (self.kinds is None or e.kind in self.kinds)
        }
