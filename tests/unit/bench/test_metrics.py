"""Retrieval metrics, computed by hand on small cases."""

from __future__ import annotations

import pytest

from dreammem_bench.metrics import (
    METRIC_KEYS,
    QuestionOutcome,
    aggregate,
    percentile,
    score_question,
    summarize,
)


def test_first_hit_at_rank_three() -> None:
    scores = score_question({"D1:1"}, [{"D2:1"}, {"D3:1"}, {"D1:1"}, {"D4:1"}])
    assert scores == {
        "hit@1": 0.0,
        "hit@5": 1.0,
        "hit@10": 1.0,
        "recall@5": 1.0,
        "recall@10": 1.0,
        "mrr": pytest.approx(1 / 3),
        "s_hit@5": 1.0,
        "s_hit@10": 1.0,
    }


def test_hit_beyond_five_counts_only_at_ten() -> None:
    retrieved = [{f"D9:{i}"} for i in range(6)] + [{"D1:1"}]
    scores = score_question({"D1:1", "D1:2"}, retrieved)
    assert scores["hit@5"] == 0.0
    assert scores["hit@10"] == 1.0
    assert scores["recall@5"] == 0.0
    assert scores["recall@10"] == 0.5
    assert scores["mrr"] == pytest.approx(1 / 7)


def test_distilled_memory_covers_several_gold_turns() -> None:
    scores = score_question({"D1:1", "D2:5"}, [{"D1:1", "D2:5", "D3:3"}])
    assert scores["hit@1"] == 1.0
    assert scores["recall@5"] == 1.0
    assert scores["mrr"] == 1.0


def test_miss_and_empty_retrieval() -> None:
    assert score_question({"D1:1"}, []) == {
        "hit@1": 0.0,
        "hit@5": 0.0,
        "hit@10": 0.0,
        "recall@5": 0.0,
        "recall@10": 0.0,
        "mrr": 0.0,
        "s_hit@5": 0.0,
        "s_hit@10": 0.0,
    }


def test_empty_gold_is_an_error() -> None:
    with pytest.raises(ValueError):
        score_question(set(), [{"D1:1"}])


def test_aggregate_means_and_n() -> None:
    a = score_question({"x"}, [{"x"}])
    b = score_question({"x"}, [{"y"}, {"x"}])
    out = aggregate([a, b])
    assert out["hit@1"] == 0.5
    assert out["mrr"] == pytest.approx(0.75)
    assert out["n"] == 2
    assert set(out) == set(METRIC_KEYS)
    assert aggregate([])["n"] == 0


def test_summarize_separates_adversarial_and_categories() -> None:
    outcomes = [
        QuestionOutcome(1, frozenset({"a"}), (frozenset({"a"}),)),
        QuestionOutcome(4, frozenset({"a"}), (frozenset({"b"}),)),
        QuestionOutcome(5, frozenset({"a"}), (frozenset({"a"}),)),
    ]
    summary = summarize(outcomes)
    assert summary["overall"] == {**summary["overall"], "hit@1": 0.5, "n": 2}  # type: ignore[dict-item]
    assert summary["adversarial"]["hit@1"] == 1.0  # type: ignore[index]
    assert summary["adversarial"]["n"] == 1  # type: ignore[index]
    assert set(summary["by_category"]) == {"1", "4", "5"}  # type: ignore[arg-type]
    assert summary["by_category"]["4"]["hit@10"] == 0.0  # type: ignore[index]


def test_percentile() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_session_hits_count_distinct_sessions() -> None:
    retrieved = [{"D1:1"}, {"D1:2"}, {"D2:1"}, {"D1:3"}, {"D3:1"}, {"D4:1"}, {"D5:1"}, {"D6:4"}]
    scores = score_question({"D6:1"}, retrieved)
    assert scores["hit@10"] == 0.0  # the gold turn itself is not retrieved
    assert scores["s_hit@5"] == 0.0  # D6 is the sixth distinct session
    assert scores["s_hit@10"] == 1.0
    assert score_question({"D3:9"}, retrieved)["s_hit@5"] == 1.0  # D3 is the third, after D1's three turns
