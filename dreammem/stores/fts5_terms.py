"""The SQLite keyword index's terms and ranking, for a keyword index that is not FTS5.

The SQLite store indexes pre-tokenised text in an FTS5 table tokenised with
``porter unicode61 remove_diacritics 2`` (so "paints" matches "painted") and ranks
with ``bm25(records_fts, 1.0, context_weight)``. Another backend that wants the
same results (the Neo4j store's Lucene index) needs both:

* :class:`Fts5Tokens` runs FTS5's own tokenizer (an in-memory SQLite table per
  thread and its ``fts5vocab`` instances), so the terms are FTS5's exactly, stems,
  folded diacritics and split punctuation included;
* :func:`fts5_bm25` is FTS5's ``bm25()``: per query phrase, the hits in each
  column weighted by that column's weight, the document length over all columns
  (the SQLite index's ``scope`` column adds :data:`SCOPE_TOKENS` to every row),
  ``idf = log((N - n + 0.5) / (n + 0.5))`` (1e-6 when not positive), ``k1 = 1.2``,
  ``b = 0.75``; returned positive (higher is better), as the SQLite store returns it.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

__all__ = [
    "FTS5_TOKENIZER",
    "SCOPE_TOKENS",
    "Bm25Rows",
    "Corpus",
    "Fts5Tokens",
    "bm25_idf",
    "bm25_pairs",
    "bm25_row",
    "fts5_bm25",
    "phrase_hits",
    "split_tokens",
]

FTS5_TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The tokenizer of the SQLite store's ``records_fts`` table (migration 7)."""
SCOPE_TOKENS = 1
"""Tokens the SQLite index's ``scope`` column (migration 10) adds to every row's length."""
_K1 = 1.2
_B = 0.75
_MIN_IDF = 1e-6


@dataclass(frozen=True)
class Corpus:
    """Index-wide statistics BM25 needs: indexed rows and their tokens (own words and context)."""

    rows: int
    tokens: int

    @property
    def avgdl(self) -> float:
        """Average document length, scope token included (1.0 for an empty index)."""
        return (self.tokens + SCOPE_TOKENS * self.rows) / self.rows if self.rows else 1.0


class Fts5Tokens:
    """FTS5's tokenizer as a function: text in, FTS5's tokens out (thread-safe)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(":memory:")
            conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{FTS5_TOKENIZER}')")
            conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
            self._local.conn = conn
        return conn

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's tokens as FTS5 indexes them, in order."""
        found: list[list[str]] = [[] for _ in texts]
        if not any(texts):
            return found
        conn = self._connection()
        with conn:
            conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(texts))
            for doc, term in conn.execute('SELECT doc, term FROM v ORDER BY doc, "offset"'):
                found[int(doc)].append(str(term))
            conn.execute("DELETE FROM t")
        return found

    def joined(self, texts: Sequence[str]) -> list[str]:
        """Each text's tokens joined by single spaces (the text a whitespace analyzer splits back)."""
        return [" ".join(tokens) for tokens in self.tokens(texts)]


def phrase_hits(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Occurrences of a phrase (a token sequence) in a token list."""
    n = len(phrase)
    if n == 0 or n > len(tokens):
        return 0
    if n == 1:
        return sum(token == phrase[0] for token in tokens)
    first = phrase[0]
    return sum(
        1
        for i in range(len(tokens) - n + 1)
        if tokens[i] == first and list(tokens[i : i + n]) == list(phrase)
    )


def bm25_idf(rows: int, documents: int) -> float:
    """FTS5's idf of a phrase held by ``documents`` of ``rows`` rows (1e-6 when not positive).

    A count above ``rows`` (counted before rows were removed) is taken as ``rows``.
    """
    documents = min(documents, rows)
    idf = math.log((rows - documents + 0.5) / (documents + 0.5))
    return max(idf, _MIN_IDF)


def bm25_row(freqs: Sequence[float], length: int, idfs: Sequence[float], corpus: Corpus) -> float:
    """FTS5's ``bm25()`` of one row, negated, from its weighted phrase frequencies.

    Args:
        freqs: Each phrase's hits in the row, each weighted by its column's weight.
        length: The row's tokens over all columns, scope token included.
        idfs: Each phrase's :func:`bm25_idf`.
        corpus: Rows and tokens of the whole index.
    """
    norm = _K1 * (1 - _B + _B * length / corpus.avgdl)
    score = 0.0
    for freq, idf in zip(freqs, idfs, strict=True):
        if freq:
            score += idf * ((freq * (_K1 + 1)) / (freq + norm))
    return score


def bm25_pairs(freqs: Sequence[float], length: int, idfs: Sequence[float], corpus: Corpus) -> float:
    """FTS5's ``bm25()`` of one row for the OR of every pair of the phrases, over ``len - 1``, negated.

    FTS5 scores each pair's two phrases as phrases of their own, and only where the
    row holds both (a pair that does not match adds nothing); divided by ``len - 1``
    (the pairs each phrase is in), a row holding every phrase scores as under the OR.
    """
    pair_freqs: list[float] = []
    pair_idfs: list[float] = []
    for i, j in combinations(range(len(freqs)), 2):
        both = bool(freqs[i] and freqs[j])
        pair_freqs += [freqs[i] if both else 0.0, freqs[j] if both else 0.0]
        pair_idfs += [idfs[i], idfs[j]]
    return bm25_row(pair_freqs, length, pair_idfs, corpus) / (len(freqs) - 1)


def fts5_bm25(
    phrases: Sequence[Sequence[str]],
    columns: Sequence[Sequence[str]],
    weights: Sequence[float],
    documents_with: Mapping[tuple[str, ...], int],
    corpus: Corpus,
) -> float:
    """FTS5's ``bm25()`` of one row, negated (see the module docstring).

    Args:
        phrases: The query's phrases, each a token sequence.
        columns: The row's tokens, one list per text column (the scope token is added).
        weights: The weight of each column.
        documents_with: Rows of the index holding each phrase (any column).
        corpus: Rows and tokens of the whole index.
    """
    return Bm25Rows(phrases, weights, documents_with, corpus).score_tokens([list(c) for c in columns])


def split_tokens(text: str) -> list[str]:
    """Space-joined tokens (:meth:`Fts5Tokens.joined`) back as a list, empty tokens left out."""
    tokens = text.split(" ") if text else []
    return [t for t in tokens if t] if "" in tokens else tokens


def _hits(tokens: list[str], phrase: tuple[str, ...]) -> int:
    """:func:`phrase_hits`, with a single-token phrase counted by ``list.count`` (the usual case)."""
    return tokens.count(phrase[0]) if len(phrase) == 1 else phrase_hits(tokens, phrase)


class Bm25Rows:
    """:func:`fts5_bm25` of many rows of one query: each phrase's idf worked out once.

    A row is given as its columns' space-joined tokens (what a keyword index stores);
    its score is :func:`fts5_bm25`'s to the last bit (the same sums, in the same order).

    Args:
        phrases: The query's phrases, each a token sequence.
        weights: The weight of each column.
        documents_with: Rows of the index holding each phrase (any column).
        corpus: Rows and tokens of the whole index.
    """

    def __init__(
        self,
        phrases: Sequence[Sequence[str]],
        weights: Sequence[float],
        documents_with: Mapping[tuple[str, ...], int],
        corpus: Corpus,
    ) -> None:
        self._phrases = [tuple(p) for p in phrases]
        self._weights = tuple(weights)
        self._corpus = corpus
        self._idfs = [bm25_idf(corpus.rows, documents_with.get(p, 0)) for p in self._phrases]

    def score(self, columns: Sequence[str]) -> float:
        """One row's score (higher is better) from its columns' space-joined tokens.

        :meth:`score_tokens`'s sums without the work that adds nothing: a column of
        single-space-joined tokens has one token more than spaces and is split only when it
        holds a phrase's first token as text.
        """
        length = SCOPE_TOKENS
        texts: list[str | list[str]] = []
        for text in columns:
            if not text or "  " in text or text[0] == " " or text[-1] == " ":
                tokens = split_tokens(text)
                length += len(tokens)
                texts.append(tokens)
            else:
                length += text.count(" ") + 1
                texts.append(text)
        return bm25_row(self._frequencies(texts), length, self._idfs, self._corpus)

    def score_tokens(self, tokens: Sequence[list[str]]) -> float:
        """One row's score (higher is better) from its columns' tokens (the scope token is added)."""
        length = sum(len(column) for column in tokens) + SCOPE_TOKENS
        return bm25_row(self._frequencies(list(tokens)), length, self._idfs, self._corpus)

    def _frequencies(self, texts: list[str | list[str]]) -> list[float]:
        """Each phrase's weighted hits over the columns (a text column split only where it may hit).

        A column without hits adds nothing (``w * 0 = 0.0`` would leave the sum as it was).
        """
        if len(texts) != len(self._weights):
            raise ValueError(f"{len(texts)} columns for {len(self._weights)} weights")
        freqs: list[float] = []
        for phrase in self._phrases:
            freq = 0.0
            for i, w in enumerate(self._weights):
                column = texts[i]
                if isinstance(column, str):
                    if phrase and phrase[0] not in column:
                        continue
                    column = texts[i] = column.split(" ")
                hits = _hits(column, phrase)
                if hits:
                    freq += w * hits
            freqs.append(freq)
        return freqs
