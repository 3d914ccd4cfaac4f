"""Pipeline stages: fusion, rerank blend, decay, per-layer floors, ordering, degradation, trace."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import BackendError, DreamMemConfig, DreamMemory, GraphUnavailableError, Layer, ValidationError
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.fusion import reciprocal_rank_fusion
from dreammem.recall.pipeline import RecallPipeline
from dreammem.recall.scoring import decay_factor, fusion_ceiling, rank_order, rerank_score
from dreammem.types import MemoryRecord

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


class OverlapReranker:
    """A deterministic reranker: the share of query words found in the text."""

    name = "overlap"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append(len(texts))
        words = set(query.lower().split())
        return [len(words & set(t.lower().split())) / max(1, len(words)) for t in texts]


class BrokenReranker:
    name = "broken"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("model file is corrupt")


class ShortReranker:
    name = "short"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [1.0]


class FixedPath:
    """A path that returns a fixed ranking of row ids (to pin fusion inputs down)."""

    def __init__(self, name: str, rowids: Sequence[int]) -> None:
        self.name = name
        self._rowids = list(rowids)

    def search(self, query: RecallQuery) -> list[Candidate]:
        return [Candidate(r, 1.0 / (n + 1)) for n, r in enumerate(self._rowids)]


class FailingPath:
    name = "graph"

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error or ConnectionError("graph server went away")

    def search(self, query: RecallQuery) -> list[Candidate]:
        raise self.error


def _store(tmp_path, config: RecallConfig | None = None, **kwargs):  # type: ignore[no-untyped-def]
    cfg = DreamMemConfig(recall=config or RecallConfig())
    return DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=cfg, **kwargs)


def _rowids(memory: DreamMemory, records: Sequence[MemoryRecord]) -> list[int]:
    ids = memory.store.rowids(records[0].user_id, [r.id for r in records])
    return [ids[r.id] for r in records]


# -- fusion --------------------------------------------------------------------------------


def test_rrf_merges_dedupes_and_keeps_per_path_ranks() -> None:
    fused = reciprocal_rank_fusion(
        {
            "a": [Candidate(1, 0.9), Candidate(2, 0.8), Candidate(1, 0.1)],
            "b": [Candidate(2, 5.0), Candidate(3, 4.0)],
        },
        k=60,
    )
    assert [f.rowid for f in fused] == [2, 1, 3]
    top = fused[0]
    assert top.ranks == {"a": 2, "b": 1} and top.path_scores == {"a": 0.8, "b": 5.0}
    assert top.score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].ranks == {"a": 1}  # the duplicate in path a counted once, at its best rank


def test_rrf_weights_and_ceiling() -> None:
    fused = reciprocal_rank_fusion({"a": [Candidate(1, 1)], "b": [Candidate(2, 1)]}, k=10, weights={"b": 2})
    assert [f.rowid for f in fused] == [2, 1]
    assert fusion_ceiling({"a": 3, "b": 0, "c": 5}, k=10) == pytest.approx(2 / 11)
    assert fusion_ceiling({}, k=10) == 1.0


def test_rank_order_and_rerank_score_scale() -> None:
    assert rank_order([0.1, 0.9, 0.5]) == [3, 1, 2]
    assert rerank_score(1, 1, k=60, blend="rrf", weight=1.0) == pytest.approx(1.0)
    head_worst = rerank_score(30, 30, k=60, blend="rrf", weight=1.0)
    tail_best = rerank_score(31, None, k=60, blend="rrf", weight=1.0)
    assert tail_best < head_worst
    assert rerank_score(5, 1, k=60, blend="replace", weight=1.0) == pytest.approx(1.0)
    assert rerank_score(31, None, k=60, blend="replace", weight=1.0) < rerank_score(
        30, 30, k=60, blend="replace", weight=1.0
    )


# -- rerank ----------------------------------------------------------------------------------


def _three_fruits(memory: DreamMemory) -> list[MemoryRecord]:
    return memory.add_many(
        [
            {"content": "apple pie recipe from grandma", "user_id": "u1", "event_time": NOW},
            {"content": "apple orchard visit in autumn", "user_id": "u1", "event_time": NOW},
            {"content": "banana bread and apple pie tips", "user_id": "u1", "event_time": NOW},
        ]
    )


def test_rerank_rank_is_fused_with_first_stage_rank(tmp_path) -> None:  # type: ignore[no-untyped-def]
    reranker = OverlapReranker()
    with _store(tmp_path, reranker=reranker) as memory:
        _three_fruits(memory)
        result = memory.recall("banana bread tips", user_id="u1", k=3, now=NOW)
        assert reranker.calls == [3]
        top = result[0]
        assert top.record.content == "banana bread and apple pie tips"
        assert top.rerank_rank == 1 and top.rerank_score == pytest.approx(1.0)
        assert top.score == pytest.approx(rerank_score(top.fused_rank or 0, 1, k=60, blend="rrf", weight=1.0))
        assert all(h.rerank_rank is not None and h.fused_rank is not None for h in result)
        scores = [h.score for h in result]
        assert scores == sorted(scores, reverse=True)


def test_rerank_top_limits_the_reranked_head(tmp_path) -> None:  # type: ignore[no-untyped-def]
    reranker = OverlapReranker()
    with _store(tmp_path, RecallConfig(rerank_top=2), reranker=reranker) as memory:
        _three_fruits(memory)
        result = memory.recall("apple", user_id="u1", k=3, now=NOW)
        assert reranker.calls == [2]
        assert sum(h.rerank_rank is not None for h in result) == 2
        assert result[2].rerank_rank is None and result[2].score < result[1].score


def test_replace_blend_orders_by_reranker_alone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = RecallConfig(rerank_blend="replace")
    with _store(tmp_path, config, reranker=OverlapReranker()) as memory:
        _three_fruits(memory)
        result = memory.recall("banana bread tips recipe", user_id="u1", k=3, now=NOW)
        assert [h.rerank_rank for h in result] == [1, 2, 3]


@pytest.mark.parametrize("reranker", [BrokenReranker(), ShortReranker()])
def test_failing_reranker_degrades_to_fusion_order(tmp_path, reranker) -> None:  # type: ignore[no-untyped-def]
    with _store(tmp_path) as plain:
        _three_fruits(plain)
        expected = plain.recall("apple pie", user_id="u1", k=3, now=NOW).ids
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), reranker=reranker) as memory:
        result = memory.recall("apple pie", user_id="u1", k=3, now=NOW)
        assert "rerank" in result.degraded
        assert result.ids == expected
        assert all(h.rerank_score is None for h in result)


# -- degradation -------------------------------------------------------------------------------


def test_failing_path_is_listed_and_recall_still_answers(memory: DreamMemory) -> None:
    record = memory.add("The wifi password is hunter2", user_id="u1")
    memory.pipeline.paths["graph"] = FailingPath()
    result = memory.recall("wifi password", user_id="u1", paths=["vector", "keyword", "graph"])
    assert result.ids == [record.id]
    assert result.degraded == {"graph": "ConnectionError: graph server went away"}


def test_every_path_failing_is_an_error_not_an_empty_answer(memory: DreamMemory) -> None:
    """Issue 35 item 6: no path answered, so the recall raises (typed) instead of "no memory"."""
    memory.add("The wifi password is hunter2", user_id="u1")
    memory.pipeline.paths["graph"] = FailingPath()
    with pytest.raises(BackendError, match="every recall path failed") as caught:
        memory.recall("wifi", user_id="u1", paths=["graph"])
    assert caught.value.is_retryable and isinstance(caught.value.__cause__, ConnectionError)
    memory.pipeline.paths["temporal"] = FailingPath(GraphUnavailableError("Neo4j is unavailable"))
    with pytest.raises(GraphUnavailableError, match="Neo4j is unavailable"):  # a typed error as it came
        memory.recall("wifi", user_id="u1", paths=["graph", "temporal"])
    assert memory.recall("wifi", user_id="u1", paths=["graph", "keyword"]).hits  # one path answered


def test_unknown_path_name_is_a_clear_error(memory: DreamMemory) -> None:
    memory.add("hello", user_id="u1")
    with pytest.raises(ValidationError, match="unknown recall paths"):
        memory.recall("hello", user_id="u1", paths=["vector", "telepathy"])


# -- floors, decay, order ------------------------------------------------------------------------


def test_semantic_floor_is_separate_from_episodic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with _store(tmp_path) as memory:
        memory.add("I prefer green tea in the morning", user_id="u1", event_time=NOW)
        result = memory.recall("green tea morning", user_id="u1", k=5, now=NOW)
        layers = {h.record.layer for h in result}
        assert layers == {Layer.EPISODIC} or Layer.SEMANTIC in layers
        semantic = memory.get_all(user_id="u1", layer="semantic")
        assert semantic, "an explicit preference is written as a semantic record"
    strict = RecallConfig(min_score_semantic=1.01, min_score_episodic=0.0)
    with _store(tmp_path, strict) as memory:
        result = memory.recall("green tea morning", user_id="u1", k=5, now=NOW)
        assert result.hits and all(h.record.layer is Layer.EPISODIC for h in result)
        pinned = memory.remember("Always serve tea without sugar", user_id="u1")
        result = memory.recall("tea sugar", user_id="u1", k=5, now=NOW)
        assert result[0].id == pinned.id  # pinned memories are never floored out
    closed = RecallConfig(min_score_episodic=1.01)
    with _store(tmp_path, closed) as memory:
        assert all(
            h.record.layer is not Layer.EPISODIC for h in memory.recall("green tea", user_id="u1", now=NOW)
        )


def test_default_floors_keep_every_candidate(memory: DreamMemory) -> None:
    memory.add_many([{"content": f"note number {n} about tea", "user_id": "u1"} for n in range(8)])
    assert len(memory.recall("tea", user_id="u1", k=8)) == 8


def test_decay_lowers_old_episodic_memories_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = RecallConfig(episodic_half_life_days=30)
    with _store(tmp_path, config) as memory:
        old, new = memory.add_many(
            [
                {
                    "content": "trip to the coast with the kids",
                    "user_id": "u1",
                    "event_time": NOW - timedelta(days=60),
                },
                {"content": "trip to the coast with friends", "user_id": "u1", "event_time": NOW},
            ]
        )
        result = memory.recall("trip to the coast with the kids", user_id="u1", k=2, now=NOW)
        by_id = {h.id: h for h in result}
        assert by_id[old.id].decay == pytest.approx(0.25)
        assert by_id[new.id].decay == pytest.approx(1.0)
        assert result.ids[0] == new.id
        assert by_id[old.id].trace()["decay"] == pytest.approx(0.25)
    record = MemoryRecord(
        user_id="u", content="x", layer=Layer.SEMANTIC, event_time=NOW - timedelta(days=365)
    )
    assert decay_factor(record, NOW, 30) == 1.0
    future = MemoryRecord(user_id="u", content="x", event_time=NOW + timedelta(days=3))
    assert decay_factor(future, NOW, 30) == 1.0
    assert decay_factor(future, NOW, None) == 1.0


def test_equal_scores_come_newest_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with _store(tmp_path) as memory:
        older, newer = memory.add_many(
            [
                {"content": "first note", "user_id": "u1", "event_time": NOW - timedelta(days=2)},
                {"content": "second note", "user_id": "u1", "event_time": NOW},
            ]
        )
        a, b = _rowids(memory, [older, newer])
        paths = {"keyword": FixedPath("keyword", [a, b]), "temporal": FixedPath("temporal", [b, a])}
        # the first stage's tie rule (the learned rank stage, on by default, would break the tie)
        config = RecallConfig(paths=("keyword", "temporal"), learned_rank=False)
        pipeline = RecallPipeline(memory.store, paths, config)
        result = pipeline.run(RecallQuery(text="note", user_id="u1", limit=10, now=NOW), 2)
        assert result[0].score == result[1].score
        assert result.ids == [newer.id, older.id]


def test_core_memory_after_ranked_hits_and_budget_from_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = RecallConfig(model_window_tokens=1000, budget_fraction=0.1, relevance_floor=0.2)
    with _store(tmp_path, config) as memory:
        ranked = memory.add("The harbour was grey this morning", user_id="u1")
        pinned = memory.remember("Never book red-eye flights", user_id="u1")
        result = memory.recall("grey harbour", user_id="u1", k=3)
        assert result.ids == [ranked.id, pinned.id] and result[1].paths == ("pinned",)
        assert result.budget_tokens == 100
        packed = result.to_context()
        assert packed.tokens <= 100
        assert result.to_context(max_tokens=5).included == ()


# -- trace and bookkeeping ---------------------------------------------------------------------------


def test_trace_explains_every_hit(memory: DreamMemory) -> None:
    memory.add("Order #48213 ships on 2024-07-15", user_id="u1")
    result = memory.recall("when does order #48213 ship", user_id="u1", now=NOW)
    trace = result[0].trace()
    assert set(trace) >= {
        "id",
        "paths",
        "ranks",
        "path_scores",
        "fused_score",
        "fused_rank",
        "rerank_score",
        "rerank_rank",
        "decay",
        "score",
        "pinned",
    }
    assert trace["id"] == result[0].id and trace["fused_rank"] == 1
    assert set(trace["paths"]) >= {"vector", "keyword"}
    assert 0 < trace["score"] <= 1
    assert {"embed", "vector", "keyword", "fuse", "load", "order", "touch", "total"} <= set(result.timings_ms)


def test_recall_touches_only_access_fields(memory: DreamMemory) -> None:
    hit, miss = memory.add_many(
        [
            {"content": "kayak rental in Oslo", "user_id": "u1"},
            {"content": "completely unrelated memory", "user_id": "u1"},
        ]
    )
    before = memory.get(hit.id, user_id="u1")
    result = memory.recall("kayak Oslo", user_id="u1", k=1, now=NOW)
    assert result.ids == [hit.id]
    after = memory.get(hit.id, user_id="u1")
    assert after.access_count == before.access_count + 1 and after.last_accessed_at == NOW
    assert (after.confidence, after.importance, after.content) == (
        before.confidence,
        before.importance,
        before.content,
    )
    assert memory.get(miss.id, user_id="u1").access_count == 0


@pytest.mark.parametrize("removed", ["session", "feedback", "vector_feedback", "index"])
def test_the_removed_recall_paths_are_gone(memory: DreamMemory, removed: str) -> None:
    """Measured as not helping on both LoCoMo and LongMemEval, these paths were removed."""
    assert removed not in memory.pipeline.paths
    with pytest.raises(ValidationError, match="unknown recall paths"):
        memory.recall("hello", user_id="u1", paths=["vector", removed])
