"""fts5_terms: FTS5's tokenizer and bm25() outside SQLite agree with SQLite's own."""

from __future__ import annotations

import random
import sqlite3

import pytest

from dreammem.stores.fts5_terms import (
    FTS5_TOKENIZER,
    Bm25Rows,
    Corpus,
    Fts5Tokens,
    fts5_bm25,
    phrase_hits,
    split_tokens,
)

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


def test_split_tokens_leaves_out_empty_tokens() -> None:
    assert split_tokens("") == []
    assert split_tokens("a b a") == ["a", "b", "a"]
    assert split_tokens(" a  b ") == ["a", "b"]


@pytest.mark.parametrize("seed", [4, 5, 6, 7])
def test_bm25_rows_scores_every_row_as_fts5_bm25_to_the_last_bit(seed: int) -> None:
    """The Neo4j keyword index ranks a step's rows with Bm25Rows: any difference would move ties."""
    rng = random.Random(seed)
    vocabulary = ["a", "b", "c", "d", "e", "f", "g"]
    rows = [
        (
            " ".join(rng.choices(vocabulary, k=rng.randint(0, 15))),
            ("  " if rng.random() < 0.1 else " ").join(rng.choices(vocabulary, k=rng.randint(0, 40))),
        )
        for _ in range(300)
    ]
    corpus = Corpus(len(rows) + rng.randint(0, 50), sum(len(split_tokens(a + " " + b)) for a, b in rows))
    for phrases in (["a"], ["b", "c"], ["a", "b c"], ["d e f", "g"], ["c", "c d", "e", "zebra"]):
        tokens = [p.split(" ") for p in phrases]
        documents = {tuple(t): rng.randint(0, corpus.rows) for t in tokens}
        weights = (1.0, rng.choice([0.5, 0.3, 0.7]))
        ranked = Bm25Rows(tokens, weights, documents, corpus)
        for own, context in rows:
            columns = (split_tokens(own), split_tokens(context))
            assert ranked.score((own, context)) == fts5_bm25(tokens, columns, weights, documents, corpus)


@pytest.mark.parametrize("seed", [8, 9])
def test_bm25_rows_scores_joined_text_as_its_tokens(seed: int) -> None:
    """Bm25Rows.score counts a clean column unsplit: tokens inside tokens, edge spaces, empties."""
    rng = random.Random(seed)
    vocabulary = ["a", "ab", "ba", "b", "aa", "c", "a-b"]

    def column() -> str:
        text = " ".join(rng.choices(vocabulary, k=rng.randint(0, 12)))
        roll = rng.random()
        return text.replace(" ", "  ", 1) if roll < 0.1 else (" " + text if roll < 0.2 else text)

    rows = [(column(), column()) for _ in range(400)]
    corpus = Corpus(len(rows), sum(len(split_tokens(a + " " + b)) for a, b in rows))
    for phrases in (["a"], ["ab"], ["a", "b"], ["a b", "aa"], ["b a", "a-b", "c"], ["a a", "ba"]):
        tokens = [p.split(" ") for p in phrases]
        documents = {tuple(t): rng.randint(0, corpus.rows) for t in tokens}
        ranked = Bm25Rows(tokens, (1.0, 0.5), documents, corpus)
        for own, context in rows:
            columns = (split_tokens(own), split_tokens(context))
            assert ranked.score((own, context)) == ranked.score_tokens(list(columns))
            assert ranked.score((own, context)) == fts5_bm25(tokens, columns, (1.0, 0.5), documents, corpus)
