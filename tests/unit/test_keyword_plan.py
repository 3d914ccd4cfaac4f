"""Keyword search on large match sets: all-terms-first ranking and frequent-term pruning."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.stores import fts_query
from dreammem.stores.fts_query import TermShares, match_all, match_any, match_pairs
from dreammem.stores.sqlite import SQLiteRecordStore
from tests.keyword_alone import ranked_alone

CONFIG = DreamMemConfig(recall=RecallConfig(context_window_turns=0))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DreamMemory]:
    with DreamMemory(tmp_path / "kw", config=CONFIG, embedder=HashingEmbedder()) as memory:
        yield memory


def _contents(memory: DreamMemory, user: str, rows: list[tuple[int, float]]) -> list[str]:
    records = memory.store.get_by_rowids(user, [r for r, _ in rows])
    return [records[r].content for r, _ in rows]


def _or_only(store: SQLiteRecordStore, user: str, terms: list[str], limit: int) -> list[tuple[int, float]]:
    """The plain OR query over the user's rows alone (the reference the plan is checked against)."""
    return ranked_alone(store, user, match_any(terms))[:limit]


def _rounded(rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
    return [(rowid, round(score, 9)) for rowid, score in rows]


def test_expressions_quote_terms() -> None:
    assert match_any(["a", 'b"c']) == '"a" OR "b""c"'
    assert match_all(["a", "b"]) == '"a" AND "b"'


def test_rows_with_every_term_answer_alone_and_equal_the_or_ranking(store: DreamMemory) -> None:
    turns = [f"tom sold the kayak in lisbon on day {n}" for n in range(12)]
    turns += [f"tom walked on day {n}" for n in range(30)] + [f"lisbon rain on day {n}" for n in range(30)]
    store.add_many([{"content": t, "user_id": "u"} for t in turns])
    store.add_many([{"content": "tom sold the kayak in lisbon", "user_id": "other"}])
    got = store.store.keyword_search("u", ["tom", "lisbon"], 10)
    assert _rounded(got) == _or_only(store.store, "u", ["tom", "lisbon"], 10)
    assert all("tom sold" in c for c in _contents(store, "u", got))


def test_too_few_rows_with_every_term_fall_back_to_any_term(store: DreamMemory) -> None:
    store.add_many(
        [{"content": "tom in lisbon", "user_id": "u"}]
        + [{"content": f"tom walked {n}", "user_id": "u"} for n in range(5)]
        + [{"content": "tom in lisbon too", "user_id": "other"}]
    )
    got = store.store.keyword_search("u", ["tom", "lisbon"], 4)
    contents = _contents(store, "u", got)
    assert len(got) == 4 and contents[0] == "tom in lisbon"
    assert _rounded(got) == _or_only(store.store, "u", ["tom", "lisbon"], 4)


def test_frequent_terms_are_dropped_only_when_a_rarer_one_remains(store: DreamMemory) -> None:
    turns = [f"common filler number {n}" for n in range(40)] + ["common rare one", "rare two"]
    store.add_many([{"content": t, "user_id": "u"} for t in turns])
    kept = store.store.keyword_search("u", ["common", "rare"], 10)
    assert {"common filler number 0"} & set(_contents(store, "u", kept))  # OR: filler rows come too
    pruned = store.store.keyword_search("u", ["common", "rare"], 10, max_term_share=0.5)
    assert set(_contents(store, "u", pruned)) == {"common rare one", "rare two"}
    alone = store.store.keyword_search("u", ["common", "filler"], 5, max_term_share=0.5)
    assert len(alone) == 5  # every term is frequent: none is dropped


def test_term_shares_are_cached_and_refresh_after_writes() -> None:
    calls: list[str] = []
    counts = {"a": 5, "b": 1}

    def matches(expression: str, cap: int) -> int:
        calls.append(expression)
        return min(counts.get(expression.strip('"'), 0), cap)

    shares = TermShares(lambda: 100, matches)
    assert shares.rare(["a", "b"], 0.2) == ["a", "b"]
    assert shares.rare(["a", "b"], 0.2) == ["a", "b"] and len(calls) == 2  # cached
    counts["a"] = 50
    shares.note_writes(5)  # under a tenth of the rows: shares still cached
    assert shares.rare(["a"], 0.2) == ["a"] and len(calls) == 2
    shares.note_writes(6)
    counts_b = len(calls)
    assert shares.rare(["a", "b"], 0.2) == ["b"] and len(calls) == counts_b + 2
    assert shares.rare(["a"], 0.2) == []
    assert shares.present(["a", "zz"]) == ["a"]
    calls.clear()
    assert shares.present(["a", "zz"]) == ["a"] and calls == ['"zz"']  # an absent term is asked again


def test_terms_no_memory_holds_do_not_block_the_all_terms_step(store: DreamMemory) -> None:
    turns = [f"tom sold the kayak in lisbon on day {n}" for n in range(12)]
    turns += [f"tom walked on day {n}" for n in range(30)]
    store.add_many([{"content": t, "user_id": "u"} for t in turns])
    terms = ["tom", "lisbon", "zzzunknown"]
    got = store.store.keyword_search("u", terms, 10)
    assert _rounded(got) == _or_only(store.store, "u", terms, 10)
    assert all("tom sold" in c for c in _contents(store, "u", got))
    assert store.store.keyword_search("u", ["zzzunknown"], 10) == []


def test_a_new_word_is_found_right_after_a_search_missed_it(store: DreamMemory) -> None:
    store.add_many([{"content": f"filler {n}", "user_id": "u"} for n in range(20)])
    assert store.store.keyword_search("u", ["order", "4711"], 5) == []
    store.add("order 4711 shipped", user_id="u")
    assert len(store.store.keyword_search("u", ["order", "4711"], 5)) == 1


def test_pairs_expression() -> None:
    assert match_pairs(["a", "b", "c"]) == '("a" AND "b") OR ("a" AND "c") OR ("b" AND "c")'


def test_rows_with_two_terms_answer_on_large_match_sets(
    store: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [f"ana cleaned the kayak in quito on day {n}" for n in range(3)]
    turns += [f"ana cleaned a thing on day {n}" for n in range(6)]
    turns += [f"quito got cleaned on day {n}" for n in range(6)]
    turns += [f"ana walked {n}" for n in range(4)] + [f"quito far {n}" for n in range(4)]
    turns += [f"filler words number {n}" for n in range(80)]
    store.add_many([{"content": t, "user_id": "u"} for t in turns])
    terms = ["ana", "cleaned", "quito"]
    exact = _or_only(store.store, "u", terms, 15)
    monkeypatch.setattr(fts_query, "PAIR_BUDGET", 10)
    assert store.store._term_shares.pairs_pay(terms)  # noqa: SLF001 - white-box: the plain OR query and the pair planner the plan is checked against
    got = store.store.keyword_search("u", terms, 15)
    assert [r for r, _ in got] == [r for r, _ in exact]
    assert all(sum(t in c for t in terms) >= 2 for c in _contents(store, "u", got))
    many = store.store.keyword_search("u", terms, 20)  # too few rows hold two terms: the OR answers
    assert _rounded(many) == _or_only(store.store, "u", terms, 20)


def test_a_rare_term_keeps_the_or_query(store: DreamMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [f"ana cleaned a thing {n}" for n in range(20)] + ["quito once"]
    turns += [f"ana walked {n}" for n in range(20)] + [f"cleaned up {n}" for n in range(20)]
    store.add_many([{"content": t, "user_id": "u"} for t in turns])
    monkeypatch.setattr(fts_query, "PAIR_BUDGET", 10)
    terms = ["ana", "cleaned", "quito"]
    assert not store.store._term_shares.pairs_pay(terms)  # quito is far rarer than the others  # noqa: SLF001 - white-box: the plain OR query and the pair planner the plan is checked against
    got = store.store.keyword_search("u", terms, 10)
    assert _rounded(got) == _or_only(store.store, "u", terms, 10)
    assert "quito once" in _contents(store, "u", got)


def test_only_frequent_terms_rank_the_newest_matches(
    store: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add_many([{"content": f"common word {n}", "user_id": "u"} for n in range(30)])
    store.add_many([{"content": f"common word {n}", "user_id": "other"} for n in range(30, 40)])
    monkeypatch.setattr(fts_query, "FREQUENT_WINDOW", 20)
    newest = store.store.keyword_search("u", ["common"], 5, max_term_share=0.1)
    rowids = [r for r, _ in store.store.keyword_search("u", ["common"], 30)]
    assert len(newest) == 5 and {r for r, _ in newest} <= set(rowids)
    cutoff = sorted(rowids)[-20]  # the user's own newest matches: the other user's rows are not in its window
    assert all(r >= cutoff for r, _ in newest)
    assert len(store.store.keyword_search("u", ["common"], 25, max_term_share=0.1)) == 25  # too few new: all


def test_windowed_search_bounded_by_row_ids_matches_the_time_filter(store: DreamMemory) -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    # Written out of time order, so the window's row ids interleave with others.
    days = [5, 1, 9, 3, 7, 2, 8, 4, 6, 0]
    store.add_many(
        [{"content": f"tea day {d}", "user_id": "u", "event_time": t0 + timedelta(days=d)} for d in days]
    )
    store.add_many([{"content": "tea day 3 other", "user_id": "v", "event_time": t0 + timedelta(days=3)}])
    since, until = t0 + timedelta(days=2), t0 + timedelta(days=6)
    got = store.store.keyword_search("u", ["tea"], 10, since=since, until=until)
    assert sorted(_contents(store, "u", got)) == [f"tea day {d}" for d in (2, 3, 4, 5)]
    empty = store.store.keyword_search("u", ["tea"], 10, since=t0 + timedelta(days=50))
    assert empty == []


def test_searches_and_writes_in_threads_do_not_deadlock(store: DreamMemory) -> None:
    store.add_many([{"content": f"tea and cake {n}", "user_id": "u"} for n in range(50)])
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for n in range(20):
                store.add_many([{"content": f"new word{n} tea", "user_id": "u"}])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def search() -> None:
        try:
            for n in range(60):
                store.store.keyword_search("u", ["tea", f"word{n % 20}", "cake"], 5, max_term_share=0.1)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=f, daemon=True) for f in (write, search, search)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert errors == []
