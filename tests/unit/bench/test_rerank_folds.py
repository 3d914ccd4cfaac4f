"""Reranker folds: cached scores, the blend chosen by folds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from dreammem_bench.locomo import LocomoConversation, load_locomo
from dreammem_bench.metrics import QuestionOutcome
from dreammem_bench.rerank_folds import CachedReranker, choose_weight_by_folds
from dreammem_bench.runner import MethodRun

FIXTURE = Path(__file__).parents[2] / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def conversations() -> list[LocomoConversation]:
    return load_locomo(FIXTURE)


class CountingReranker:
    name = "counting"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append(list(texts))
        return [float(len(t)) for t in texts]


def test_the_cache_scores_each_pair_once_and_keeps_the_order() -> None:
    inner = CountingReranker()
    cached = CachedReranker(inner)
    assert cached.score("q", ["bb", "a"]) == [2.0, 1.0]
    assert cached.score("q", ["a", "ccc", "bb", "a"]) == [1.0, 3.0, 2.0, 1.0]
    assert inner.calls == [["bb", "a"], ["ccc"]]
    assert cached.score("other", ["a"]) == [1.0] and inner.calls[-1] == ["a"]
    assert cached.name == "counting"


def _run(name: str, hits: Sequence[bool], conversations: Sequence[LocomoConversation]) -> MethodRun:
    run = MethodRun(name)
    categories = [q.category for c in conversations for q in c.questions]
    for hit, category in zip(hits, categories, strict=False):
        retrieved = (frozenset({"D1:1"}),) if hit else (frozenset({"D9:9"}),)
        run.outcomes.append(QuestionOutcome(category, frozenset({"D1:1"}), retrieved))
    return run


def test_each_conversation_gets_the_weight_that_did_best_on_the_others(
    conversations: list[LocomoConversation],
) -> None:
    # Two conversations of 5 questions (the fifth adversarial: not scored) and 2, in that order.
    assert [[q.category for q in c.questions] for c in conversations] == [[4, 1, 2, 3, 5], [4, 4]]
    runs = {
        "dreammem-no-rerank": _run("dreammem-no-rerank", [1, 0, 0, 0, 1, 1, 0], conversations),
        "w0.5": _run("w0.5", [1, 1, 0, 0, 1, 0, 0], conversations),
        "w1": _run("w1", [0, 0, 0, 0, 0, 1, 1], conversations),
    }
    folds = choose_weight_by_folds(runs, conversations, ["dreammem-no-rerank", "w0.5", "w1"])
    assert [f.held_out for f in folds] == [c.sample_id for c in conversations]
    # Held out: the first conversation, chosen on the second (w1: 2/2) -> w1 scores 0/4 there.
    assert folds[0].chosen == "w1" and folds[0].train_hit5 == 1.0 and folds[0].held["hit@5"] == 0.0
    assert folds[0].baseline["hit@5"] == 0.25
    # Held out: the second, chosen on the first (w0.5: 2/4) -> 0/2.
    assert folds[1].chosen == "w0.5" and folds[1].held["hit@5"] == 0.0
    assert folds[1].fixed["w1"]["hit@5"] == 1.0


def test_ties_go_to_the_first_candidate(conversations: list[LocomoConversation]) -> None:
    same = [True, False, False, False, True, False, True]
    runs = {n: _run(n, same, conversations) for n in ("dreammem-no-rerank", "w0.5")}
    folds = choose_weight_by_folds(runs, conversations, ["dreammem-no-rerank", "w0.5"])
    assert {f.chosen for f in folds} == {"dreammem-no-rerank"}


def test_outcomes_that_do_not_match_the_conversations_are_refused(
    conversations: list[LocomoConversation],
) -> None:
    runs = {"dreammem-no-rerank": _run("dreammem-no-rerank", [True], conversations)}
    with pytest.raises(ValueError, match="1 outcomes for 7 questions"):
        choose_weight_by_folds(runs, conversations, ["dreammem-no-rerank"])
