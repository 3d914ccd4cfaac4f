"""Cheap FTS5 match expressions for BM25 over a large store.

FTS5 computes ``bm25()`` for every row a query matches before it can sort, so an OR
of common words over 100k memories ranks tens of thousands of rows (~0.7 us each).
Two ways around it, both used by
:meth:`~dreammem.stores.sqlite.SQLiteRecordStore.keyword_search`:

* **absent terms dropped.** A term no row holds matches nothing and adds nothing
  to any row's score; leaving it out changes no result but lets the next step work.
* **all terms first.** The rows holding every query term are found by intersecting
  posting lists (about 1 ms at 100k). Their ``bm25()`` values are the same as under
  the OR query (same phrases, same statistics), and rows holding every term outrank
  rows missing one in practice; when there are at least ``limit`` of them, they are
  the answer. On the latency benchmark's 100k store this gave exactly the OR query's
  top 30 on every query tried.
* **frequent terms dropped.** Otherwise, terms in more than ``max_share`` of the
  indexed rows are left out of the OR when a rarer term remains: their BM25 weight
  (``log((N - n + 0.5) / (n + 0.5))``) is small, and they are what makes the match
  set huge. Shares are counted (capped) once and cached until the index has grown
  by a tenth.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

__all__ = ["TermShares", "match_all", "match_any"]

_STALE_FRACTION = 0.1
_MAX_CACHED = 50_000


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_any(terms: Sequence[str]) -> str:
    """An FTS5 expression matching rows with any of the terms."""
    return " OR ".join(_phrase(t) for t in terms)


def match_all(terms: Sequence[str]) -> str:
    """An FTS5 expression matching rows with every term."""
    return " AND ".join(_phrase(t) for t in terms)


class TermShares:
    """Which query terms are too common to rank by, from cached document counts.

    Args:
        total: Counts the indexed rows.
        matches: ``matches(expression, cap)`` counts rows matching an FTS5
            expression, stopping at ``cap``.
    """

    def __init__(self, total: Callable[[], int], matches: Callable[[str, int], int]) -> None:
        self._total = total
        self._matches = matches
        self._lock = threading.Lock()
        self._rows: int | None = None
        self._writes = 0
        self._counts: dict[tuple[str, int], int] = {}

    def note_writes(self, count: int) -> None:
        """Record that ``count`` rows were indexed or re-indexed (stale shares refresh)."""
        with self._lock:
            self._writes += count
            if self._rows is not None and self._writes > _STALE_FRACTION * max(self._rows, 1):
                self._rows, self._writes = None, 0
                self._counts.clear()

    def _count(self, term: str, cap: int) -> int:
        """Rows holding the term, counted up to ``cap`` (call with the lock held).

        Cached, except a zero: a term no row holds yet may be written any moment, and
        a stale zero would hide it from search.
        """
        key = (term, cap)
        if key in self._counts:
            return self._counts[key]
        count = self._matches(_phrase(term), cap)
        if count:
            if len(self._counts) >= _MAX_CACHED:
                self._counts.clear()
            self._counts[key] = count
        return count

    def _frequent(self, term: str, max_share: float) -> bool:
        with self._lock:
            if self._rows is None:
                self._rows = self._total()
            cap = int(max_share * self._rows) + 1
            return self._count(term, cap) >= cap

    def present(self, terms: Sequence[str]) -> list[str]:
        """The terms at least one indexed row holds (the others cannot change BM25)."""
        with self._lock:
            return [t for t in terms if self._count(t, 1)]

    def prune(self, terms: Sequence[str], max_share: float) -> list[str]:
        """The terms without the frequent ones, or all of them when every one is frequent."""
        rare = [t for t in terms if not self._frequent(t, max_share)]
        return rare or list(terms)
