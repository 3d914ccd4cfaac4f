"""Equal ranks go by row id: the one tie rule every store follows.

Random trace ids never order anything; the record's row id (its write order) does:

* a list ranked by a score (BM25, cosine) puts equal scores lower
  row id first, as FTS5 returns them;
* a list ordered by time puts equal times in the same direction by row id, so
  newest first means the later write first (:meth:`GraphStore.memories_of
  <dreammem.stores.graph_base.GraphStore.memories_of>`, ``window_rowids``).

So two stores holding the same memories (another backend, or the same memories
under other ids) return them, and cut a list between equals, alike. SQL and
Cypher backends spell the rule as a last ``ORDER BY`` key; Python rankings use
:func:`best_first`.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["best_first"]


def best_first(hits: Iterable[tuple[int, float]]) -> list[tuple[int, float]]:
    """``(rowid, score)`` pairs by score, highest first; equal scores lower row id first."""
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))
