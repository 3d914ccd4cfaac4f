"""The base of the paths that keep some of the other paths' candidate lines (speaker, naming).

Such a path reads no index of its own: it takes the candidates the paths before it found
for this recall (``RecallQuery.earlier``), orders them by their fused vote (the sum of
``1 / (rrf_k + rank)`` over those paths, equal weights; fused once per recall for the same
lists, :func:`~dreammem.recall.fusion.fused_once`), reads their texts once per recall
(``RecallQuery.searches``) and keeps the lines its rule picks, so that fusing it adds one
vote for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.fusion import fused_once
from dreammem.stores.base import RecordStore

__all__ = ["EarlierLinesPath"]


class EarlierLinesPath:
    """Reads the other paths' candidates, in their fused vote, with their texts.

    Args:
        store: The record store (to read the candidates' text).
        sources: The paths whose candidates are considered, in their fused order.
        rrf_k: The reciprocal-rank constant of that order.
    """

    def __init__(
        self,
        store: RecordStore,
        *,
        sources: Sequence[str] = ("keyword", "vector", "temporal"),
        rrf_k: int = 10,
    ) -> None:
        self._store = store
        self.sources = tuple(sources)
        self.rrf_k = rrf_k

    def lines(self, query: RecallQuery) -> list[tuple[Candidate, str]]:
        """The sources' candidates by fused vote, each with its text (inactive ones left out)."""
        ranked = {name: query.earlier[name] for name in self.sources if query.earlier.get(name)}
        if not ranked:
            return []
        fused = fused_once(query.searches, ranked, k=self.rrf_k)
        texts = query.searches.active_texts(self._store, query.user_id, [f.rowid for f in fused])
        return [(Candidate(f.rowid, f.score), texts[f.rowid]) for f in fused if f.rowid in texts]
