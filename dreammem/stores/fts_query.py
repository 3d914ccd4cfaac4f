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
* **two terms at least.** When the terms together match many rows (more than
  ``PAIR_BUDGET`` postings), 3-6 of them are left and their document counts are
  within a factor ``PAIR_SPREAD`` (so similar BM25 weights), rows holding at least two are
  ranked next (an OR of pairs, a few hundred to a few thousand rows at 100k) and
  answer when there are ``limit`` of them: rows holding one common term only are
  the long tail the OR query spends its time on. On the latency benchmark's 100k
  store it gave the OR query's top 30 on 88 of 93 queries (same set and order),
  at a third of the cost. Small stores never take this step.
* **frequent terms dropped** (opt-in, ``max_term_share``). Otherwise, terms in more
  than ``max_term_share`` of the indexed rows are left out of the OR when a rarer
  term remains: their BM25 weight (``log((N - n + 0.5) / (n + 0.5))``) is small, and
  they are what makes the match set huge. When every term is that frequent, BM25
  ranks only the newest ``FREQUENT_WINDOW`` matching rows (if this user has
  ``limit`` among them; else all). Shares are counted (capped) once and cached
  until the index has grown by a tenth.
* **the newest matches of a huge match set.** ``bm25()`` costs a few microseconds per
  matching row, so a step matching 100k rows (a term in a tenth of a million memories
  of one user) costs hundreds of milliseconds whatever its plan. A step matching more
  than ``RANK_WINDOW`` rows (in the time window; the user's own when the search is
  scoped, every user's when the user holds most of the index) ranks only the newest
  ``RANK_WINDOW`` of them (when ``limit`` of those are the user's active rows);
  their scores are the full ranking's (FTS5's statistics cover the whole index). A
  step with fewer matches is ranked whole, as before: nothing changes below that size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations

from dreammem.stores.fts5_terms import Corpus

__all__ = [
    "FREQUENT_WINDOW",
    "RANK_WINDOW",
    "TermShares",
    "UserSearch",
    "frequent",
    "match_all",
    "match_any",
    "match_pairs",
    "pairs_pay",
]

_STALE_FRACTION = 0.1
PAIR_BUDGET = 5_000
"""Postings above which the OR of pairs is tried before the OR of all terms."""
PAIR_SPREAD = 2
"""Largest ratio of document counts between the terms for the OR of pairs."""
PAIR_MAX_SHARE = 0.2
"""Largest share of rows a term of the OR of pairs may be in."""
MAX_PAIR_TERMS = 6
FREQUENT_WINDOW = 2_000
"""Newest matching rows ranked when every query term is frequent."""
RANK_WINDOW = 2_000
"""Newest matching rows ranked by one step when more match (bounds its cost, see above)."""
_COUNT_CAP = 50_000
_MAX_CACHED = 50_000


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_any(terms: Sequence[str]) -> str:
    """An FTS5 expression matching rows with any of the terms."""
    return " OR ".join(_phrase(t) for t in terms)


def match_all(terms: Sequence[str]) -> str:
    """An FTS5 expression matching rows with every term."""
    return " AND ".join(_phrase(t) for t in terms)


def match_pairs(terms: Sequence[str]) -> str:
    """An FTS5 expression matching rows with at least two of the terms.

    Its ``bm25()`` is ``len(terms) - 1`` times the OR query's for rows holding every
    term (each term sits in that many pairs); divide by it to compare.
    """
    return " OR ".join(f"({_phrase(a)} AND {_phrase(b)})" for a, b in combinations(terms, 2))


def pairs_pay(counts: Sequence[int], rows: int) -> bool:
    """:meth:`TermShares.pairs_pay` from the terms' document counts (capped) among ``rows`` rows."""
    return (
        2 < len(counts) <= MAX_PAIR_TERMS
        and sum(counts) > PAIR_BUDGET
        and min(counts) * PAIR_SPREAD >= max(counts)
        and max(counts) <= PAIR_MAX_SHARE * rows
    )


def frequent(count: int, rows: int, max_share: float) -> bool:
    """Whether a term held by ``count`` of ``rows`` rows is in more than ``max_share`` of them."""
    return count >= int(max_share * rows) + 1


@dataclass(frozen=True, slots=True)
class UserSearch:
    """One keyword search of one user: its statistics, its words' documents among its rows, limit, window."""

    user_id: str
    corpus: Corpus
    documents: dict[str, int]
    limit: int
    since: datetime | None
    until: datetime | None


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
        """Rows holding the term, counted up to ``cap``.

        Cached, except a zero: a term no row holds yet may be written any moment, and
        a stale zero would hide it from search. The store is asked without this
        object's lock held: a writer holds the store's lock while it calls
        :meth:`note_writes`, so holding ours while waiting for the store's deadlocks.
        """
        key = (term, cap)
        with self._lock:
            cached = self._counts.get(key)
        if cached is not None:
            return cached
        count = self._matches(_phrase(term), cap)
        if count:
            with self._lock:
                if len(self._counts) >= _MAX_CACHED:
                    self._counts.clear()
                self._counts[key] = count
        return count

    def rows(self) -> int:
        """The indexed rows (cached like the counts; the store is asked unlocked)."""
        with self._lock:
            rows = self._rows
        if rows is None:
            rows = self._total()
            with self._lock:
                self._rows = rows
        return rows

    def _frequent(self, term: str, max_share: float) -> bool:
        rows = self.rows()
        return frequent(self._count(term, int(max_share * rows) + 1), rows, max_share)

    def pairs_pay(self, terms: Sequence[str]) -> bool:
        """True when ranking rows with two terms first is both cheaper and safe.

        Cheaper: the terms match more than ``PAIR_BUDGET`` rows together. Safe: their
        document counts lie within a factor ``PAIR_SPREAD`` of each other and none is
        in more than ``PAIR_MAX_SHARE`` of the rows, so their BM25 weights are close
        and clearly positive, and a row with two of them outranks a row with one
        (up to extreme length differences). A rare term alone can outrank two common
        ones: then the OR query runs.
        """
        if not 2 < len(terms) <= MAX_PAIR_TERMS:
            return False
        return pairs_pay([self._count(t, _COUNT_CAP) for t in terms], self.rows())

    def documents(self, term: str) -> int:
        """Rows holding the term (any column), counted up to 50,000 and cached like the others."""
        return self._count(term, _COUNT_CAP)

    def present(self, terms: Sequence[str]) -> list[str]:
        """The terms at least one indexed row holds (the others cannot change BM25)."""
        return [t for t in terms if self._count(t, 1)]

    def rare(self, terms: Sequence[str], max_share: float) -> list[str]:
        """The terms in at most ``max_share`` of the indexed rows."""
        return [t for t in terms if not self._frequent(t, max_share)]
