"""BM25 ranked outside FTS5 (cached document counts, rows scored from their text) equals FTS5's ranking.

A statement ranking few rows whose phrases are frequent across the store is ranked in
Python (``rank_outside``) instead of by FTS5's ``bm25()``, which counts every phrase's
documents over the whole index in every statement. The scores must be FTS5's: every
plan step of a user holding the whole index, inside the newest window and the full ranking.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.stores import fts_query
from dreammem.stores.fts5_terms import FTS5_TOKENIZER, SCOPE_TOKENS, Corpus, Fts5Tokens
from dreammem.stores.sqlite import rank_outside
from dreammem.stores.sqlite.rank_outside import DocumentCounts, OutsideRanker, corpus_of, outside_pays

WORDS = "kayak lisbon tea rain garden budget camera painted paints painting o'brien café cafe dogs".split()
QUERIES = (
    ["kayak"],
    ["painting", "dogs"],
    ["tea", "rain", "garden"],
    ["cafe"],
    ["budget", "w12"],
    ["lisbon", "camera", "kayak", "rain"],
)
T0 = datetime(2024, 1, 1, tzinfo=UTC)
Ranked = list[tuple[int, float]]


def _turns(seed: int, count: int) -> list[dict[str, object]]:
    """Sessions of five turns of one user, "big".

    Only a user whose rows are the whole index is ranked with FTS5's statistics (any
    other is ranked with its own, tests/unit/test_keyword_user_statistics.py), so only
    such a user's statements may be ranked by FTS5 or outside it.
    """
    rng = random.Random(seed)
    return [
        {
            "content": " ".join([*rng.choices(WORDS, k=rng.randint(1, 8)), f"w{rng.randint(0, 99)}"]),
            "user_id": "big",
            "session_id": f"s{n // 5}",
            "event_time": T0 + timedelta(hours=n),
        }
        for n in range(count)
    ]


@pytest.fixture(params=[(1, 0.5), (2, 0.3)])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DreamMemory]:
    seed, weight = request.param
    config = DreamMemConfig(recall=RecallConfig(context_window_turns=1, context_weight=weight))
    with DreamMemory(tmp_path / "store", config=config, embedder=HashingEmbedder()) as memory:
        memory.add_many(_turns(seed, 500))
        yield memory


@pytest.fixture
def outside_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the rankings done outside FTS5 (the real method runs)."""
    runs: list[int] = []
    rank = OutsideRanker.rank

    def counted(self: OutsideRanker, *args: object, **kwargs: object) -> Ranked:
        runs.append(1)
        return rank(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(OutsideRanker, "rank", counted)
    return runs


def _both(monkeypatch: pytest.MonkeyPatch, search: Callable[[], Ranked]) -> tuple[Ranked, Ranked]:
    """The search ranked by FTS5 (never outside), then outside FTS5 whenever it may be."""
    monkeypatch.setattr(rank_outside, "OUTSIDE_RATIO", 10**9)
    by_fts5 = search()
    monkeypatch.setattr(rank_outside, "OUTSIDE_RATIO", 0)
    return by_fts5, search()


def _assert_same(by_fts5: Ranked, outside: Ranked) -> None:
    """The same rows in the same order, equal scores and a cut between them included, with FTS5's scores."""
    assert [rowid for rowid, _ in outside] == [rowid for rowid, _ in by_fts5]
    assert [s for _, s in outside] == pytest.approx([s for _, s in by_fts5], rel=1e-9)


@pytest.mark.parametrize("window", [None, 15])
def test_outside_scores_are_fts5s_for_every_step_and_limit(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch, outside_runs: list[int], window: int | None
) -> None:
    if window is not None:
        monkeypatch.setattr(fts_query, "RANK_WINDOW", window)
    store = memory.engine.store
    for terms in QUERIES:
        for limit in (3, 10, 1000):
            by_fts5, outside = _both(monkeypatch, lambda t=terms, n=limit: store.keyword_search("big", t, n))
            assert by_fts5
            _assert_same(by_fts5, outside)
    assert len(outside_runs) > 10


def test_outside_scores_are_fts5s_in_a_time_window_and_after_more_writes(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch, outside_runs: list[int]
) -> None:
    store = memory.engine.store
    since, until = T0 + timedelta(hours=100), T0 + timedelta(hours=300)
    for terms in QUERIES:
        by_fts5, outside = _both(
            monkeypatch, lambda t=terms: store.keyword_search("big", t, 1000, since=since, until=until)
        )
        _assert_same(by_fts5, outside)
    runs = len(outside_runs)
    memory.add_many(_turns(9, 60))  # the cached counts are now stale by more than COUNT_DRIFT
    for terms in QUERIES:
        by_fts5, outside = _both(monkeypatch, lambda t=terms: store.keyword_search("big", t, 1000))
        _assert_same(by_fts5, outside)
    assert len(outside_runs) > runs


def test_equal_scores_keep_fts5s_order_lower_row_id_first() -> None:
    ranker = OutsideRanker((1.0, 0.5))
    rows = [(rowid, "kayak tea", None) for rowid in (7, 3, 9, 5)] + [(4, "kayak", None)]
    corpus = Corpus(rows=100, tokens=300)
    ranked = ranker.rank(rows, ["kayak"], [10], corpus, 3)
    assert [rowid for rowid, _ in ranked] == [4, 3, 5]  # the shorter row first, then ties by row id
    assert ranked[1][1] == ranked[2][1]


def test_terms_of_several_tokens_are_left_to_fts5() -> None:
    ranker = OutsideRanker((1.0, 0.5))
    assert ranker.phrases(["painted", "dogs", "café"]) == ["paint", "dog", "cafe"]
    assert ranker.phrases(["kayak", "o'brien"]) is None


def _varint(value: int) -> bytes:
    """SQLite's variable-length integer (written independently of the reader under test)."""
    if value >= 1 << 56:  # eight 7-bit groups of the high 56 bits, then the low byte whole
        high = value >> 8
        return bytes([((high >> (7 * (7 - k))) & 0x7F) | 0x80 for k in range(8)] + [value & 0xFF])
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(groups))


def test_the_averages_record_gives_fts5s_rows_and_tokens() -> None:
    rng = random.Random(4)
    rows = [
        (" ".join(rng.choices(WORDS, k=rng.randint(1, 9))), " ".join(rng.choices(WORDS, k=3)))
        for _ in range(40)
    ]
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(terms, context, scope, tokenize = '{FTS5_TOKENIZER}')")
    with conn:  # FTS5 writes its totals on commit
        conn.executemany("INSERT INTO f (terms, context, scope) VALUES (?, ?, 'u61')", rows)
    tokens = Fts5Tokens()
    total = sum(len(t) for t in tokens.tokens([text for row in rows for text in row]))
    (block,) = conn.execute("SELECT block FROM f_data WHERE id = 1").fetchone()
    corpus = corpus_of(block)
    assert (corpus.rows, corpus.tokens) == (40, total)
    assert corpus.avgdl == (total + SCOPE_TOKENS * 40) / 40
    assert corpus_of(None).rows == 0


@pytest.mark.parametrize("rows", [0, 1, 127, 128, 16_383, 16_384, 2**32 + 7])
def test_the_averages_record_reads_large_counts(rows: int) -> None:
    for totals in ([0, 0, rows], [2**56 + 5, 2**63 - 1, rows]):
        corpus = corpus_of(b"".join(_varint(v) for v in (rows, *totals)))
        assert (corpus.rows, corpus.tokens) == (rows, sum(totals) - SCOPE_TOKENS * rows)


def test_document_counts_are_counted_again_once_the_index_moved() -> None:
    asked: list[str] = []

    def count(expression: str) -> int:
        asked.append(expression)
        return 200

    counts = DocumentCounts(count)
    assert counts.get('"tea"', 10_000) == 200
    assert counts.get('"tea"', 10_002) == 200  # two rows more: within 1 % of 200
    assert len(asked) == 1
    assert counts.get('"tea"', 10_003) == 200  # three: counted again
    counts.note_writes(3)  # three rows re-indexed in place
    assert counts.get('"tea"', 10_003) == 200
    assert len(asked) == 3


def test_only_statements_whose_phrases_outnumber_their_rows_are_ranked_outside() -> None:
    assert outside_pays(211, [113_000, 98_000])  # a 1,000-row user's expected matches in a million rows
    assert not outside_pays(2_000, [113_000, 98_000, 300_000])  # a newest window at a million rows
    assert not outside_pays(2_000, [40_000, 30_000])  # a newest window at 300k rows
    assert not outside_pays(600, [300, 200])  # a small store: FTS5's own plan
