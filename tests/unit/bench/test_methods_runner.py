"""The benchmark methods and runner on the tiny fixture (hashing embedder: no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dreammem.config import DreamMemConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import ConfigError
from dreammem.types import Kind, Layer, MemoryRecord, Source
from dreammem_bench.locomo import LocomoConversation, load_locomo
from dreammem_bench.methods import (
    BM25Method,
    DreamMemMethod,
    FusionMethod,
    RecencyMethod,
    VectorMethod,
)
from dreammem_bench.metrics import METRIC_KEYS
from dreammem_bench.report import build_report, render_table
from dreammem_bench.runner import merge_runs, run_benchmark, total_steps
from dreammem_bench.suite import build_methods, close_methods, parse_methods

FIXTURE = Path(__file__).parents[2] / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def conversations() -> list[LocomoConversation]:
    return load_locomo(FIXTURE)


def _ask(method, conversation: LocomoConversation, question: str, k: int = 3):  # type: ignore[no-untyped-def]
    method.index(conversation)
    return method.search(conversation, question, k)


def test_bm25_finds_the_turn_sharing_words(conversations: list[LocomoConversation]) -> None:
    out = _ask(BM25Method(), conversations[1], "How fast was the half marathon?")
    assert out[0] == frozenset({"D1:1"})


def test_bm25_with_no_known_word_returns_nothing(conversations: list[LocomoConversation]) -> None:
    assert _ask(BM25Method(), conversations[1], "zzzz qqqq") == []


def test_vector_ranks_by_similarity(conversations: list[LocomoConversation]) -> None:
    out = _ask(VectorMethod(HashingEmbedder()), conversations[0], "Pixel knocked coffee mug desk", k=6)
    assert out[0] == frozenset({"D2:2"})
    assert len(out) == 6


def test_fusion_merges_both_lists(conversations: list[LocomoConversation]) -> None:
    out = _ask(FusionMethod(HashingEmbedder()), conversations[0], "cello teacher scales daily", k=2)
    assert out[0] == frozenset({"D2:1"})
    assert len(out) == 2


def test_recency_is_the_last_turns_newest_first(conversations: list[LocomoConversation]) -> None:
    out = _ask(RecencyMethod(), conversations[0], "anything", k=2)
    assert out == [frozenset({"D2:3"}), frozenset({"D2:2"})]
    assert len(_ask(RecencyMethod(), conversations[1], "anything", k=10)) == 3


def test_dreammem_scopes_each_conversation_to_its_user(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(embedder=HashingEmbedder())
    try:
        for conversation in conversations:
            method.index(conversation)
        out = method.search(conversations[1], "half marathon", 5)
        assert out[0] == frozenset({"D1:1"})
        assert all(ids <= {"D1:1", "D1:2", "D2:1"} for ids in out)
        assert method.memory.store.users() == ["tiny-1", "tiny-2"]
    finally:
        method.close()


def test_dreammem_follows_provenance_of_distilled_records(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(embedder=HashingEmbedder())
    try:
        method.index(conversations[0])
        turns = {r.metadata["dia_id"]: r for r in method.memory.get_all(user_id="tiny-1", limit=50)}
        summary = MemoryRecord(
            user_id="tiny-1",
            content="Ava has a cat; Ben learns the cello.",
            layer=Layer.SEMANTIC,
            kind=Kind.SUMMARY,
            source=Source.DISTILLED,
            provenance=(turns["D1:1"].id, turns["D1:2"].id),
        )
        twice = MemoryRecord(user_id="tiny-1", content="x", provenance=(summary.id,))
        method.memory.store.insert([summary], ["ava cat ben cello"])
        assert method.sources(summary) == {"D1:1", "D1:2"}
        assert method.sources(twice) == {"D1:1", "D1:2"}
    finally:
        method.close()


def test_run_and_report_schema(conversations: list[LocomoConversation]) -> None:
    methods = build_methods(
        ["dreammem", "bm25", "recency"],
        baseline_embedder=HashingEmbedder(),
        dreammem_embedder=HashingEmbedder(),
        ablate=True,
    )
    names = [m.name for m in methods]
    ablations = [f"dreammem-no-{path}" for path in DreamMemConfig().recall.active_paths]
    assert names == ["dreammem", *ablations, "bm25", "recency"]
    steps: list[str] = []
    try:
        runs = run_benchmark(conversations, methods, k=10, on_step=steps.append)
    finally:
        close_methods(methods)
    assert len(steps) == total_steps(conversations, methods) == len(methods) * (2 + 7)
    report = build_report(runs, data="tiny.json", reranker=None, k=10, conversations=conversations)
    json.dumps(report)  # JSON-ready
    assert report["data"] == "tiny.json" and report["reranker"] is None
    assert report["skipped_questions"] == 2
    for name in names:
        entry = report["methods"][name]
        assert set(entry) >= {"overall", "adversarial", "by_category", "latency_ms", "ingest_per_s"}
        assert set(entry["overall"]) == set(METRIC_KEYS)
        assert entry["overall"]["n"] == 6  # 4 scored in tiny-1 (plus 1 adversarial) and 2 in tiny-2
        assert entry["adversarial"]["n"] == 1
        assert set(entry["by_category"]) == {"1", "2", "3", "4", "5"}
        assert set(entry["latency_ms"]) == {"p50", "p95"}
    by_name = report["methods"]
    assert by_name["dreammem-no-vector"]["ingest_per_s"] == by_name["dreammem"]["ingest_per_s"]
    assert report["methods"]["recency"]["overall"]["hit@10"] > 0  # 3-6 turns: the window covers a lot
    assert report["methods"]["bm25"]["overall"]["hit@10"] > 0.5
    assert render_table(report).row_count == len(names)


def test_merge_runs_adds_up(conversations: list[LocomoConversation]) -> None:
    first = run_benchmark(conversations[:1], [BM25Method()], k=5)
    second = run_benchmark(conversations[1:], [BM25Method()], k=5)
    merged = merge_runs(merge_runs({}, first), second)
    assert len(merged["bm25"].outcomes) == 5 + 2
    assert merged["bm25"].ingest_turns == 6 + 3


def test_parse_methods() -> None:
    assert parse_methods("vector, bm25") == ["vector", "bm25"]
    for bad in ("", "vector,vector", "dense"):
        with pytest.raises(ConfigError):
            parse_methods(bad)


class _Reverse:
    """A scripted reranker: prefers the last candidate it is given."""

    name = "reverse"

    def score(self, query: str, texts: object) -> list[float]:
        return [float(i) for i in range(len(texts))]  # type: ignore[arg-type]


def test_reranker_ablation_variants_share_the_store(conversations: list[LocomoConversation]) -> None:
    reranker = _Reverse()
    methods = build_methods(
        ["dreammem"],
        baseline_embedder=HashingEmbedder(),
        dreammem_embedder=HashingEmbedder(),
        reranker=reranker,
        ablate=True,
    )
    names = [m.name for m in methods]
    assert names[-2:] == ["dreammem-no-rerank", "dreammem-rerank-replace"]
    base, *_, plain, replace = methods
    try:
        base.index(conversations[1])
        question = "How fast was Chen's half marathon?"
        without = plain.search(conversations[1], question, 3)
        assert without[0] == frozenset({"D1:1"})  # fusion order
        assert replace.search(conversations[1], question, 3) == list(reversed(without))
        pipeline = base.memory.pipeline
        assert pipeline.reranker is reranker and pipeline.config.rerank_blend == "rrf"  # restored
    finally:
        close_methods(methods)


def test_the_dreamed_method_dreams_each_conversation_before_its_questions(
    conversations: list[LocomoConversation],
) -> None:
    plain, dreamed = (DreamMemMethod(embedder=HashingEmbedder(), dream=d) for d in (False, True))
    try:
        for method in (plain, dreamed):
            method.index(conversations[0])
        assert plain.memory.store.queue_size("tiny-1") > 0
        assert dreamed.memory.store.queue_size("tiny-1") == 0  # the dream took the queue
        assert dreamed.search(conversations[0], "cat", 5)  # hits map to turns through provenance
    finally:
        plain.close()
        dreamed.close()


def test_the_dreamed_method_is_a_known_method_name() -> None:
    assert parse_methods("dreammem,dreammem+dream") == ["dreammem", "dreammem+dream"]
