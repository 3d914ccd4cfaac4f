"""FTS5's ``bm25()`` computed outside FTS5, with cached document counts.

Every statement that calls ``bm25()`` makes FTS5 count, over the whole index, the rows
holding each query phrase: a pass over each phrase's posting list, 4-11 ms at a
million rows for words held by a tenth of them, paid again by the next statement.
When a statement ranks few rows (a scoped user's matches, the newest window of a
huge match set) but its phrases are frequent, that count is most of its cost and
grows with the store, not with the rows ranked.

:class:`OutsideRanker` ranks such rows here instead, with the same scores:

* the phrase's document counts come from a cache (:class:`DocumentCounts`), counted
  once and reused while the index has changed by at most ``COUNT_DRIFT`` of the
  count (a write changes a count by one at most, so a reused count is within that
  share of the true one);
* the index's row count and token totals are FTS5's own (its averages record, read
  for every ranking: one row);
* each row's phrase frequencies (own words weigh 1.0, context ``context_weight``) and
  length come from its stored text, split into words (the stored text is
  pre-tokenised, words joined by single spaces) and each word mapped to FTS5's tokens
  by FTS5's own tokenizer (:class:`~dreammem.stores.fts5_terms.Fts5Tokens`, cached per
  word: FTS5 splits the text at the spaces and stems every token on its own).

The formula is :func:`~dreammem.stores.fts5_terms.bm25_row`, the one the Neo4j store
ranks with. Only plain AND / OR queries of one-token phrases are ranked here (every
phrase of such a query that a row holds counts for that row, as in FTS5); the OR of
pairs and multi-token phrases stay with FTS5.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from dreammem.stores.fts5_terms import SCOPE_TOKENS, Corpus, Fts5Tokens, bm25_idf, bm25_row, phrase_hits

__all__ = [
    "COUNT_DRIFT",
    "OUTSIDE_RATIO",
    "DocumentCounts",
    "OutsideRanker",
    "corpus_of",
    "outside_pays",
    "varints",
]

COUNT_DRIFT = 0.01
"""Share of a cached document count by which the index may change before it is counted again."""
OUTSIDE_RATIO = 325
"""Postings FTS5 would count per row a statement ranks, from which the rows are ranked here.

Measured on a one-user store of a million turns (2-core machine, docs/BENCHMARKS.md,
session 10): FTS5 counts postings for ``bm25()`` at 21-31 ns each; a row costs FTS5
1.2-5.8 us of its own work and this path 8.5-13.9 us; the break-even per query word was
237-486, median about 325. (At 200, recall p95 at one user x 1M was 90-145 ms; at 325,
51-71 ms, with FTS5 alone 51-62.) The results do not depend on it, only the cost.
"""
_MAX_WORDS = 400_000
"""Words whose tokens are kept (the cache starts over beyond it)."""
_MAX_COUNTS = 50_000


def varints(block: bytes) -> list[int]:
    """SQLite's variable-length integers (big-endian 7-bit groups; a ninth byte holds 8 bits)."""
    values: list[int] = []
    i = 0
    while i < len(block):
        value = 0
        for n in range(9):
            byte = block[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


def corpus_of(averages: bytes | None) -> Corpus:
    """The index-wide statistics ``bm25()`` uses, from an FTS5 table's averages record.

    The record (row 1 of the ``%_data`` table) holds the row count, then the tokens
    of each column; the scope column's tokens are part of the average length, as in
    FTS5 (:class:`~dreammem.stores.fts5_terms.Corpus` adds ``SCOPE_TOKENS`` per row).
    """
    values = varints(averages or b"")
    if not values:
        return Corpus(0, 0)
    rows = values[0]
    return Corpus(rows, sum(values[1:]) - SCOPE_TOKENS * rows)


def outside_pays(rows: int, documents: Sequence[int]) -> bool:
    """Whether ranking ``rows`` rows here costs less than FTS5 counting the phrases' ``documents``."""
    return rows * OUTSIDE_RATIO <= sum(documents)


class DocumentCounts:
    """Rows of the index holding a phrase, counted once and reused while they can barely have changed.

    Args:
        count: ``count(phrase_expression)`` counts the rows matching an FTS5 expression.
    """

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._lock = threading.Lock()
        self._writes = 0
        self._cached: dict[str, tuple[int, int, int]] = {}

    def note_writes(self, count: int) -> None:
        """Record that ``count`` rows were indexed, re-indexed or removed."""
        with self._lock:
            self._writes += count

    def get(self, expression: str, rows: int) -> int:
        """The rows holding a phrase (``expression``), the index holding ``rows`` rows now.

        A cached count is reused while the rows indexed since (by this process, and the
        change of the row count, which other processes' writes move too) stay within
        ``COUNT_DRIFT`` of it; the store is asked without the lock held.
        """
        with self._lock:
            cached = self._cached.get(expression)
            writes = self._writes
        if cached is not None:
            count, rows_then, writes_then = cached
            if max(abs(rows - rows_then), writes - writes_then) <= COUNT_DRIFT * count:
                return count
        count = self._count(expression)
        with self._lock:
            if len(self._cached) >= _MAX_COUNTS:
                self._cached.clear()
            self._cached[expression] = (count, rows, writes)
        return count


class OutsideRanker:
    """FTS5's ``bm25()`` of stored rows, computed from their text (see the module docstring).

    Args:
        weights: The weight of the own-words and the context column.
    """

    def __init__(self, weights: tuple[float, float]) -> None:
        self.weights = weights
        self._fts5 = Fts5Tokens()
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[str, ...]] = {}
        """Each known word's FTS5 tokens."""
        self._lengths: dict[str, int] = {}
        """Each known word's number of FTS5 tokens."""
        self._words_with: dict[str, dict[str, int]] = {}
        """Each token: the known words holding it, with how often."""

    def _learn(self, words: set[str]) -> None:
        """Map words not seen yet to FTS5's tokens (call with the lock held)."""
        new = sorted(w for w in words if w not in self._tokens)
        if not new:
            return
        if len(self._tokens) + len(new) > _MAX_WORDS:
            self._tokens.clear()
            self._lengths.clear()
            self._words_with.clear()
        for word, tokens in zip(new, self._fts5.tokens(new), strict=True):
            self._tokens[word] = tuple(tokens)
            self._lengths[word] = len(tokens)
            for token in tokens:
                holders = self._words_with.setdefault(token, {})
                holders[word] = holders.get(word, 0) + 1

    def phrase_tokens(self, terms: Sequence[str]) -> list[tuple[str, ...]]:
        """Each term's FTS5 tokens (the phrase FTS5 makes of it)."""
        with self._lock:
            self._learn(set(terms))
            return [self._tokens[term] for term in terms]

    def phrases(self, terms: Sequence[str]) -> list[str] | None:
        """Each term's one FTS5 token, or None when a term is not one token (FTS5 ranks those)."""
        tokens = self.phrase_tokens(terms)
        if any(len(t) != 1 for t in tokens):
            return None
        return [t[0] for t in tokens]

    def _hits(self, phrases: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
        """The known words holding a phrase: (phrase, times) for each (call with the lock held)."""
        hits: dict[str, list[tuple[int, int]]] = {}
        for i, phrase in enumerate(phrases):
            for word, times in self._words_with.get(phrase, {}).items():
                hits.setdefault(word, []).append((i, times))
        return hits

    def frequencies(
        self, rows: Sequence[tuple[int, str | None, str | None]], phrases: Sequence[Sequence[str]]
    ) -> list[tuple[int, list[float], int]]:
        """Each row's weighted hits of each phrase (FTS5 tokens) and its length, scope token included.

        Args:
            rows: ``(rowid, own words, context)`` as stored in the keyword index.
            phrases: The query's phrases, each a sequence of FTS5 tokens; one-token
                phrases are counted from the words holding them, longer ones in the
                row's token list.
        """
        weights = self.weights
        single = all(len(p) == 1 for p in phrases)
        columns = [(rowid, ((own or "").split(), (context or "").split())) for rowid, own, context in rows]
        found: list[tuple[int, list[float], int]] = []
        with self._lock:
            self._learn({w for _, texts in columns for words in texts for w in words})
            hits = self._hits([p[0] for p in phrases]) if single else {}
            for rowid, texts in columns:
                length = sum(self._lengths[w] for words in texts for w in words) + SCOPE_TOKENS
                freqs = [0.0] * len(phrases)
                for words, weight in zip(texts, weights, strict=True):
                    if single:
                        for found_in in [hits[w] for w in words if w in hits]:
                            for i, times in found_in:
                                for _ in range(times):  # one addition per instance, as FTS5 adds them
                                    freqs[i] += weight
                        continue
                    tokens = [t for w in words for t in self._tokens[w]]
                    for i, phrase in enumerate(phrases):
                        for _ in range(phrase_hits(tokens, phrase)):
                            freqs[i] += weight
                found.append((rowid, freqs, length))
        return found

    def rank(
        self,
        rows: Sequence[tuple[int, str | None, str | None]],
        phrases: Sequence[str],
        documents: Sequence[int],
        corpus: Corpus,
        limit: int,
    ) -> list[tuple[int, float]]:
        """The best ``limit`` of ``(rowid, own words, context)`` rows, best first, with FTS5's scores.

        Args:
            rows: The rows to rank, as stored in the keyword index.
            phrases: The query's phrases, one FTS5 token each (:meth:`phrases`).
            documents: Rows of the index holding each phrase.
            corpus: Rows and tokens of the index (:func:`corpus_of`).
            limit: How many to return; equal scores keep the lower row id first, as FTS5
                orders them (its statements scan row ids upwards and a sort keeps the first
                of equal scores), so a cut between equal scores keeps FTS5's rows.
        """
        idfs = [bm25_idf(corpus.rows, n) for n in documents]
        weights, length_of = self.weights, self._lengths.__getitem__

        def score(columns: tuple[list[str], list[str]], hits: dict[str, list[tuple[int, int]]]) -> float:
            """One row's bm25() (KeyError: a word not learnt yet)."""
            length = sum(map(length_of, columns[0])) + sum(map(length_of, columns[1])) + SCOPE_TOKENS
            freqs = [0.0] * len(phrases)
            for words, weight in zip(columns, weights, strict=True):
                for found in [hits[w] for w in words if w in hits]:
                    for i, times in found:
                        for _ in range(times):  # one addition per instance, as FTS5 adds them
                            freqs[i] += weight
            return bm25_row(freqs, length, idfs, corpus)

        ranked: list[tuple[float, int]] = []  # (bm25() as FTS5 returns it, negative, row id)
        unknown: list[tuple[int, tuple[list[str], list[str]]]] = []
        with self._lock:
            hits = self._hits(phrases)
            for rowid, own, context in rows:
                columns = ((own or "").split(), (context or "").split())
                try:
                    ranked.append((-score(columns, hits), rowid))
                except KeyError:
                    unknown.append((rowid, columns))
            if unknown:
                self._learn({w for _, columns in unknown for words in columns for w in words})
                hits = self._hits(phrases)
                ranked.extend((-score(columns, hits), rowid) for rowid, columns in unknown)
        ranked.sort()
        return [(rowid, -bm25) for bm25, rowid in ranked[:limit]]
