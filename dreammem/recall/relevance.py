"""The relevance stage of recall: which ranked hits clear the floors, so nothing unrelated is injected.

A hit passes on its own cosine to the query (the absolute floor, the relative floor over the
user's recent memories, the mutual floor: :mod:`dreammem.recall.gate`), on the reference gate
where it applies (:mod:`dreammem.recall.reference`), on its words (the keyword path's best hits,
``RecallConfig.lexical_evidence``), or on what it inherits: a current value the relevance of
the records it superseded, a summary that of the records it condensed
(:mod:`dreammem.recall.lineage`). Stored vectors are read for this user's records only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.gate import (
    RelativeFloor,
    floor_for,
    judges_language,
    mutual_floor_for,
    mutual_misses,
    passes_relevance,
    query_passes,
    relative_floor,
    relative_floor_for,
)
from dreammem.recall.lineage import inherited_cosines
from dreammem.recall.recipe import PathSpec, found_beside_only, measures_similarity, word_rank
from dreammem.recall.reference import ReferenceGate, reference_gate
from dreammem.recall.scored import Scored
from dreammem.stores.base import RecordStore
from dreammem.types import MemoryRecord

__all__ = ["RelevanceJudge"]


class RelevanceJudge:
    """Judges a recall's ranked hits against the relevance floors of one store and embedder."""

    def __init__(
        self,
        store: RecordStore,
        config: RecallConfig,
        embedder: Embedder | None,
        specs: Mapping[str, PathSpec],
    ) -> None:
        self._store = store
        self.config = config
        self.embedder = embedder
        self.specs = specs

    def relevant(
        self, query: RecallQuery, kept: list[Scored], ranked: Mapping[str, list[Candidate]], *, sole: bool
    ) -> list[Scored]:
        """The hits that clear the relevance floor (pinned ones may come back from their budget)."""
        model = self.embedder.name if self.embedder is not None else None
        found = [s.record.content for s in kept]  # the reference gate reads their language
        reference = (
            None if sole else reference_gate(self.embedder, self.config, query.text, query.embedding, found)
        )
        floor = reference.floor if reference is not None else None if sole else floor_for(model, self.config)
        if floor is None or not measures_similarity(ranked):  # no cosines (vector path off or failed)
            return kept
        if not judges_language(model, self.config, query.text):  # on words or time alone
            return [s for s in kept if s.fused.timed or self._by_words(s)]
        relative, background = (reference.relative, None) if reference is not None else self._relative(query)
        # Under the relative floor a record condensed from several (a dream summary) stands out
        # only through its sources: its own embedding averages many topics and sits near every
        # query, so it would stand out from single memories for any question.
        condensed = {s.record.id for s in kept if relative is not None and len(s.record.provenance) > 1}

        def weak(item: Scored) -> bool:
            cosine = -1.0 if item.fused.similarity is None else item.fused.similarity
            return (
                cosine < floor
                or item.record.id in condensed
                or (relative is not None and not relative.passes(cosine))
            )

        inherited = self._inherited(query, kept, weak)
        similarities = [c.similarity for found in ranked.values() for c in found if c.similarity is not None]
        passes = query_passes(similarities, floor) or any(v >= floor for v in inherited.values())
        cosines, misses = self._own_cosines(query, kept, condensed, background, reference, inherited)

        def by_words(item: Scored, under: RelativeFloor | None = relative) -> bool:
            return under is None and self._by_words(item)

        # Reference gate: the memory side must pass; a best keyword hit needs no query side of its own.
        return [
            s
            for s in kept
            if (reference is None or s.fused.timed or s.record.id not in misses)
            and (
                (reference is not None and passes and s.record.id not in condensed and by_words(s, None))
                or passes_relevance(
                    None if s.record.id in condensed or by_words(s) else s.fused.similarity,
                    floor=floor,
                    query_passes=passes,
                    inherited=inherited.get(s.record.id),
                    cosine=None if s.record.id in condensed else cosines.get(s.record.id),
                    relative=relative,
                    timed=s.fused.timed,
                    mutual=reference is not None or s.record.id not in misses,
                )
            )
        ]

    def _by_words(self, item: Scored) -> bool:
        """Whether the hit is among the keyword path's best (``RecallConfig.lexical_evidence``)."""
        rank = word_rank(item.fused.ranks, self.specs)
        return rank is not None and rank <= self.config.lexical_evidence

    def _relative(self, query: RecallQuery) -> tuple[RelativeFloor | None, npt.NDArray[np.float32] | None]:
        """The relative floor over the user's recent memories (and those memories' vectors), if any."""
        model = self.embedder.name if self.embedder is not None else None
        z = relative_floor_for(model, self.config)
        if z is None or model is None or query.embedding is None:
            return None, None
        background = self._store.recent_vectors(query.user_id, model, self.config.background_size)
        if not background.size:
            return None, None
        return relative_floor(query.embedding, background, z), background

    def _own_cosines(
        self,
        query: RecallQuery,
        kept: Sequence[Scored],
        condensed: set[str],
        background: npt.NDArray[np.float32] | None,
        reference: ReferenceGate | None = None,
        inherited: Mapping[str, float] | None = None,
    ) -> tuple[dict[str, float], set[str]]:
        """Own cosines of hits the vector path missed, and mutual-floor misses.

        Read from stored vectors (this user's records only): every such hit under a relative floor, else
        only the hits found beside other hits alone (the reply path; one without a stored vector gets -1,
        below any floor). A miss is a hit whose own cosine does not stand out for the memory itself
        (:func:`~dreammem.recall.gate.mutual_misses`; the reference gate: :mod:`dreammem.recall.reference`).
        """
        model = self.embedder.name if self.embedder is not None else None
        if model is None or query.embedding is None:
            return {}, set()
        judged = [s for s in kept if s.record.id not in condensed]
        beside = [s.record.id for s in judged if found_beside_only(s.fused.path_scores, self.specs)]
        mutual = None if background is None else mutual_floor_for(model, self.config)
        wanted = beside
        if background is not None or reference is not None:
            every = mutual is not None or reference is not None
            wanted = [s.record.id for s in judged if every or s.fused.similarity is None]
            wanted += sorted(condensed) if reference is not None else []
        found = self._store.vectors_of(query.user_id, model, wanted) if wanted else {}
        own = {s.record.id: s.fused.similarity for s in judged if s.fused.similarity is not None}
        missing = {rid: float(v @ query.embedding) for rid, v in found.items() if rid not in own}
        missing.update({rid: -1.0 for rid in beside if rid not in found})
        if (
            reference is not None
        ):  # a cosine inherited (replaced or condensed records) is judged by this memory
            best = {rid: max(c, (inherited or {}).get(rid, c)) for rid, c in {**own, **missing}.items()}
            best.update({rid: (inherited or {}).get(rid, -1.0) for rid in condensed})
            return missing, reference.misses(best, found)
        if mutual is None or background is None:
            return missing, set()
        return missing, mutual_misses({**own, **missing}, found, background, mutual)

    def _inherited(
        self, query: RecallQuery, kept: Sequence[Scored], weak: Callable[[Scored], bool]
    ) -> dict[str, float]:
        """Per kept hit with too weak a cosine of its own: what it inherits from the records it replaced."""
        model = self.embedder.name if self.embedder is not None else None
        below = [s for s in kept if weak(s)]
        if query.embedding is None or model is None or not below:
            return {}
        owner = {r.id: s.record.id for s in below for r in (s.record, *s.twins)}
        found = inherited_cosines(
            list({r.id: r for s in below for r in (s.record, *s.twins)}.values()),
            query.embedding,
            lambda records: self._sources(query, records),
            lambda ids: self._store.vectors_of(query.user_id, model, ids),
        )
        out: dict[str, float] = {}
        for rid, cosine in found.items():
            out[owner[rid]] = max(out.get(owner[rid], cosine), cosine)
        return out

    def _sources(self, query: RecallQuery, records: Sequence[MemoryRecord]) -> list[tuple[str, MemoryRecord]]:
        """``(parent id, record)``: what these records superseded or were distilled from (this user's)."""
        ids = [r.id for r in records]
        older = query.searches.replaced(self._store, query.user_id, ids)
        replaced = [(str(r.superseded_by), r) for r in older]
        parents: dict[str, list[str]] = {}
        for record in records:
            for source in record.provenance:
                parents.setdefault(source, []).append(record.id)
        condensed = query.searches.by_ids(self._store, query.user_id, list(parents)) if parents else []
        return replaced + [(p, r) for r in condensed for p in parents[r.id]]
