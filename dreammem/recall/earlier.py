"""The base of the paths that keep some of the other paths' candidate lines (speaker, naming).

Such a path reads no index of its own: it takes the candidates the paths before it found
for this recall (``RecallQuery.earlier``), orders them by their fused vote (the sum of
``1 / (rrf_k + rank)`` over those paths, equal weights; fused once per recall for the same
lists, :func:`~dreammem.recall.fusion.fused_once`), reads their records once per recall
(``RecallQuery.searches``) and keeps the lines its rule picks, so that fusing it adds one
vote for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.fusion import fused_once
from dreammem.stores.base import RecordStore
from dreammem.types import MemoryRecord

__all__ = ["EarlierLinesPath", "active_records"]


class EarlierLinesPath:
    """Reads the other paths' candidates, in their fused vote, with their records.

    Args:
        store: The record store (to read the candidates' records).
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

    def lines(self, query: RecallQuery) -> list[tuple[Candidate, MemoryRecord]]:
        """The sources' candidates by fused vote, each with its record (inactive ones left out)."""
        ranked = {name: query.earlier[name] for name in self.sources if query.earlier.get(name)}
        if not ranked:
            return []
        fused = fused_once(query.searches, ranked, k=self.rrf_k)
        records = active_records(query, self._store, [f.rowid for f in fused])
        return [(Candidate(f.rowid, f.score), records[f.rowid]) for f in fused if f.rowid in records]


def active_records(query: RecallQuery, store: RecordStore, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
    """The active records of the query's user among these row ids, read once per recall."""
    found = query.searches.records(store, query.user_id, rowids)
    return {rowid: record for rowid, record in found.items() if record.is_active}
