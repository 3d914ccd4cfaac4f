"""The learned rank stage: features of fused candidates, the shipped model, the pipeline hook."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import ConfigError
from dreammem.recall.base import RecallQuery
from dreammem.recall.fusion import Fused
from dreammem.recall.learned_rank import FEATURES, LearnedRank, candidate_features, packaged_model
from dreammem.recall.scored import Scored
from dreammem.text.tokenize import query_terms, tokenize
from dreammem.types import MemoryRecord, Role
from dreammem_bench.rank_fit import fit_logistic, fit_weights, top_hit_rate

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def _model(**weights: float) -> LearnedRank:
    """A model with these weights (per raw unit: mean 0, scale 1) and none on other features."""
    names = tuple(weights)
    return LearnedRank(names, (0.0,) * len(names), (1.0,) * len(names), tuple(weights.values()), 0.0)


def _memory(tmp_path: Path, **recall: object) -> DreamMemory:
    config = DreamMemConfig(recall=RecallConfig.model_validate({"relevance_floor": None, **recall}))
    return DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=config)


def _chat(memory: DreamMemory) -> None:
    start = NOW - timedelta(days=3)
    memory.add_many(
        [
            {
                "content": "my sister's wedding is in Lisbon in October",
                "user_id": "u",
                "session_id": "s1",
                "role": "user",
                "event_time": start,
            },
            {
                "content": "congratulations! Lisbon in October is lovely for a wedding",
                "user_id": "u",
                "session_id": "s1",
                "role": "assistant",
                "event_time": start + timedelta(seconds=1),
            },
        ]
    )


def test_learned_rank_reorders_recall_by_its_model(tmp_path: Path) -> None:
    on = {"learned_rank": True, "learned_rank_weight": None}  # the model's order alone
    with _memory(tmp_path, learned_rank=False) as plain, _memory(tmp_path / "on", **on) as learned:
        for memory in (plain, learned):
            _chat(memory)
        learned.pipeline.learned = _model(role_assistant=5.0)
        query = "where is my sister's wedding"
        before = plain.recall(query, user_id="u", k=2, now=NOW)
        after = learned.recall(query, user_id="u", k=2, now=NOW)
    assert [h.record.role for h in before] == [Role.USER, Role.ASSISTANT]
    assert [h.record.role for h in after] == [Role.ASSISTANT, Role.USER]
    assert after.hits[0].score == pytest.approx(1.0)
    assert "learned_rank" in after.timings_ms and not after.degraded


@pytest.mark.parametrize(("weight", "first"), [(0.5, Role.USER), (2.0, Role.ASSISTANT)])
def test_a_weighted_model_rank_is_fused_with_the_first_stage(
    tmp_path: Path, weight: float, first: Role
) -> None:
    with _memory(tmp_path, learned_rank=True, learned_rank_weight=weight) as memory:
        _chat(memory)
        memory.pipeline.learned = _model(role_assistant=5.0)
        found = memory.recall("where is my sister's wedding", user_id="u", k=2, now=NOW)
    assert found.hits[0].record.role is first


def test_shipped_model_runs_in_recall(tmp_path: Path) -> None:
    model = packaged_model()
    assert set(model.features) <= set(FEATURES) and any(model.weights)
    with _memory(tmp_path, learned_rank=True) as memory:
        _chat(memory)
        found = memory.recall("Lisbon wedding", user_id="u", k=2, now=NOW)
    assert len(found) == 2 and not found.degraded
    assert all(0.0 < h.score <= 1.0 for h in found)


def test_a_failing_model_keeps_the_fused_order(tmp_path: Path) -> None:
    with (
        _memory(tmp_path, learned_rank=False) as plain,
        _memory(tmp_path / "on", learned_rank=True) as broken,
    ):
        for memory in (plain, broken):
            _chat(memory)
        broken.pipeline.learned = _Raising()
        want = [h.record.content for h in plain.recall("Lisbon wedding", user_id="u", k=2, now=NOW)]
        got = broken.recall("Lisbon wedding", user_id="u", k=2, now=NOW)
    assert [h.record.content for h in got] == want
    assert "learned_rank" in got.degraded


def test_the_shipped_model_is_on_by_default_and_a_reranker_takes_its_place(tmp_path: Path) -> None:
    assert RecallConfig().learned_rank
    with _memory(tmp_path) as memory:
        _chat(memory)
        assert "learned_rank" in memory.recall("Lisbon wedding", user_id="u", k=2, now=NOW).timings_ms
        memory.pipeline.reranker = _Constant()
        found = memory.recall("Lisbon wedding", user_id="u", k=2, now=NOW)
    assert "rerank" in found.timings_ms and "learned_rank" not in found.timings_ms


class _Constant:
    """A scripted cross-encoder: every text scores the same."""

    name = "constant"

    def score(self, query: str, texts: object) -> list[float]:
        return [0.5] * len(texts)  # type: ignore[arg-type]


class _Raising:
    def order(self, query: RecallQuery, scored: object, config: RecallConfig) -> None:
        raise RuntimeError("model file is corrupt")


def _scored(
    rowid: int, ranks: dict[str, int], *, similarity: float | None, role: Role, age_days: float
) -> Scored:
    record = MemoryRecord(
        user_id="u", content="the wedding is in Lisbon", role=role, event_time=NOW - timedelta(days=age_days)
    )
    fused = Fused(rowid, 0.1, dict(ranks), dict.fromkeys(ranks, 1.0), similarity=similarity)
    return Scored(fused, record, fused_rank=rowid, score=0.5)


def test_candidate_features_read_ranks_cosines_roles_and_age() -> None:
    query = RecallQuery("where is the wedding in Porto", "u", 10, NOW)
    items = [
        _scored(1, {"vector": 2, "keyword": 1}, similarity=0.6, role=Role.USER, age_days=1.0),
        _scored(2, {"unnamed": 4}, similarity=None, role=Role.ASSISTANT, age_days=9.0),
        _scored(3, {"reply": 1}, similarity=0.2, role=Role.ASSISTANT, age_days=3.0),
    ]
    rows = candidate_features(query, items)
    at = {name: rows[:, i] for i, name in enumerate(FEATURES)}
    assert at["rr:vector"].tolist() == [0.5, 0.25, 0.0]  # the stand-in's rank counts as the vector path's
    assert at["in:keyword"].tolist() == [1.0, 0.0, 0.0]
    assert at["similarity_gap"].tolist() == pytest.approx([0.0, -0.4, -0.4])
    assert at["no_similarity"].tolist() == [0.0, 1.0, 0.0]
    assert at["beside_only"].tolist() == [0.0, 0.0, 1.0]
    assert at["role_user"].tolist() == [1.0, 0.0, 0.0]
    assert at["recency_place"].tolist() == pytest.approx([0.0, 2 / 3, 1 / 3])
    assert at["term_share"].tolist() == pytest.approx([0.5, 0.5, 0.5])  # "wedding" of "wedding", "porto"


def test_model_json_round_trips_and_rejects_unknown_features() -> None:
    model = _model(similarity=2.0, role_user=-1.0)
    assert LearnedRank.from_json(model.to_json()) == model
    with pytest.raises(ConfigError, match="unknown features"):
        _model(cross_encoder=1.0)
    with pytest.raises(ConfigError, match="not a learned rank model"):
        LearnedRank.from_json('{"features": ["similarity"]}')


def test_fit_logistic_learns_the_feature_that_marks_evidence() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(FEATURES)))
    y = (x[:, FEATURES.index("term_share")] > 0.8).astype(np.float64)
    groups = [f"q{i // 20}" for i in range(400)]
    model = fit_logistic(x, y, groups, l2=1.0)
    weights = dict(zip(model.features, model.weights, strict=True))
    assert max(weights, key=lambda f: abs(weights[f])) == "term_share" and weights["term_share"] > 0
    scores = [model.probabilities(x[i : i + 20]) for i in range(0, 400, 20)]
    labels = [y[i : i + 20] for i in range(0, 400, 20)]
    assert top_hit_rate(scores, labels, k=1) == 1.0


@pytest.mark.parametrize(
    "content",
    [
        "My sister's wedding",
        "my sister’s WEDDING in porto",
        "sisters weddings portos",
        "the sister-in-law: wedding, Porto!",
        "婚礼在波尔图 wedding",
        "",
    ],
)
def test_term_share_counts_whole_words_as_the_keyword_index_cuts_them(content: str) -> None:
    query = RecallQuery("my sister's wedding in Porto?", "u", 10, NOW)
    item = _scored(1, {"vector": 1}, similarity=0.5, role=Role.USER, age_days=1.0)
    item.record = MemoryRecord(user_id="u", content=content)
    terms = set(query_terms(query.text))
    want = len(terms & set(tokenize(content))) / len(terms)
    assert candidate_features(query, [item])[0, FEATURES.index("term_share")] == pytest.approx(want)


def test_fit_weights_fits_columns_that_are_no_shipped_feature() -> None:
    """The offline session-context study fits columns the model has no name for."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, len(FEATURES)))
    y = (x[:, FEATURES.index("term_share")] > 0.8).astype(np.float64)
    groups = [f"q{i // 20}" for i in range(400)]
    extra = np.column_stack([x[:, FEATURES.index("term_share")] * 3.0, rng.normal(size=400)])
    _, scale, beta = fit_weights(extra, y, groups, l2=1.0)
    assert abs(beta[0]) > 5 * abs(beta[1]) and beta[0] > 0
    assert scale[0] == pytest.approx(3 * x[:, FEATURES.index("term_share")].std())
    model = fit_logistic(x, y, groups, l2=1.0, features=("term_share",))
    alone = fit_weights(extra[:, :1], y, groups, l2=1.0)[2]
    assert model.weights[0] == pytest.approx(alone[0])  # a scaled column: the same standardised fit
