"""fts5_terms: FTS5's tokenizer and bm25() outside SQLite agree with SQLite's own."""

from __future__ import annotations

import random
import sqlite3

import pytest

from dreammem.stores.fts5_terms import FTS5_TOKENIZER, Corpus, Fts5Tokens, fts5_bm25, phrase_hits

WORDS = "running runs ran paints painted painting café cafe kayak fjord tea o'brien 10k dog dogs".split()


def test_tokens_are_fts5s_stems_folds_and_splits() -> None:
    tokens = Fts5Tokens()
    assert tokens.tokens(["Running paints café o'brien", "", "我们 去 北京"]) == [
        ["run", "paint", "cafe", "o", "brien"],
        [],
        ["我们", "去", "北京"],
    ]
    assert tokens.joined(["painted dogs"]) == ["paint dog"]


def test_phrase_hits_counts_occurrences() -> None:
    assert phrase_hits(["a", "b", "a", "b"], ["a", "b"]) == 2
    assert phrase_hits(["a", "b", "a"], ["a"]) == 2
    assert phrase_hits(["a"], ["a", "b"]) == 0
    assert phrase_hits(["a"], []) == 0


def words(rng: random.Random, least: int, most: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(least, most)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bm25_equals_sqlites_on_random_two_column_rows(seed: int) -> None:
    rng = random.Random(seed)
    rows = [
        (
            " ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
            " ".join(rng.choices(WORDS, k=rng.randint(0, 8))),
        )
        for _ in range(60)
    ]
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(terms, context, scope, tokenize = '{FTS5_TOKENIZER}')")
    conn.executemany(
        "INSERT INTO f (rowid, terms, context, scope) VALUES (?, ?, ?, ?)",
        [(i, *r, f"u{i % 3}") for i, r in enumerate(rows)],
    )
    tokenizer = Fts5Tokens()
    own = tokenizer.tokens([r[0] for r in rows])
    ctx = tokenizer.tokens([r[1] for r in rows])
    corpus = Corpus(len(rows), sum(len(a) + len(b) for a, b in zip(own, ctx, strict=True)))
    for query in (["painted", "dogs"], ["kayak"], ["o'brien", "tea", "ran"]):
        phrases = tokenizer.tokens(query)
        counts = {
            tuple(p): sum(phrase_hits(a, p) + phrase_hits(b, p) > 0 for a, b in zip(own, ctx, strict=True))
            for p in phrases
        }
        match = " OR ".join('"' + q.replace('"', '""') + '"' for q in query)
        expected = dict(
            conn.execute("SELECT rowid, -bm25(f, 1.0, 0.5, 0.0) FROM f WHERE f MATCH ?", (match,)).fetchall()
        )
        assert expected
        for rowid, score in expected.items():
            mine = fts5_bm25(phrases, [own[rowid], ctx[rowid]], [1.0, 0.5], counts, corpus)
            assert mine == pytest.approx(score, rel=1e-9, abs=1e-12)
