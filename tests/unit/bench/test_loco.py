"""The leave-one-conversation-out fold protocol (hashing embedder: no model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import ConfigError
from dreammem_bench.loco import (
    DEFAULT_GRID,
    FusionGrid,
    FusionSetting,
    fold_rows,
    leave_one_out,
    run_loco,
    score_settings,
)
from dreammem_bench.locomo import LocomoConversation, load_locomo
from dreammem_bench.methods import DreamMemMethod
from dreammem_bench.metrics import QuestionOutcome

FIXTURE = Path(__file__).parents[2] / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def conversations() -> list[LocomoConversation]:
    return load_locomo(FIXTURE)


def _outcome(hit: bool) -> QuestionOutcome:
    # One question whose gold turn is first (a hit at rank 1) or absent.
    return QuestionOutcome(1, frozenset({"g"}), (frozenset({"g" if hit else "x"}),))


def _scores(hits: dict[str, list[bool]]) -> dict[str, list[QuestionOutcome]]:
    return {conversation: [_outcome(h) for h in row] for conversation, row in hits.items()}


def test_the_grid_starts_with_the_default_and_holds_each_setting_once() -> None:
    default = FusionSetting.of(RecallConfig())
    settings = DEFAULT_GRID.settings(default)
    assert settings[0] == default
    # The shipped default is a grid point (keyword/temporal unnamed = 1.0), so it is not repeated.
    assert len(settings) == 4 * 3 * 2 * 3
    assert len({s.label for s in settings}) == len(settings)
    off_grid = FusionSetting(7, (("vector", 0.3),))
    assert len(DEFAULT_GRID.settings(off_grid)) == 4 * 3 * 2 * 3 + 1


def test_a_setting_applies_to_a_copy_and_keeps_the_other_fields() -> None:
    base = RecallConfig(rerank_top=12)
    tuned = FusionSetting(20, (("graph", 0.0), ("vector", 1.0))).apply(base)
    assert (tuned.rrf_k, tuned.path_weights, tuned.rerank_top) == (20, {"graph": 0.0, "vector": 1.0}, 12)
    assert base.rrf_k == RecallConfig().rrf_k and base.path_weights == RecallConfig().path_weights


def test_each_fold_chooses_on_the_other_conversations_and_scores_the_held_out_one() -> None:
    default = _scores({"a": [True, False], "b": [True, False], "c": [True, True]})
    # Setting 1 wins on a and b (2/2 each) and loses half of c.
    other = _scores({"a": [True, True], "b": [True, True], "c": [True, False]})
    folds = {f.held_out: f for f in leave_one_out([default, other])}
    # Holding out c: trained on a and b, setting 1 is chosen and then scores 1/2 on c.
    assert folds["c"].chosen == 1
    assert folds["c"].tuned["overall"]["hit@5"] == 0.5 and folds["c"].default["overall"]["hit@5"] == 1.0
    assert folds["c"].train["hit@5"] == 1.0
    # Holding out a: on b and c the two tie (3/4 hit@5 and MRR each), so the default is kept.
    assert folds["a"].chosen == 0 and folds["a"].tuned["overall"]["hit@5"] == 0.5


@pytest.mark.usefixtures("counted_ids")
def test_scoring_with_cached_paths_matches_plain_recall_and_restores_the_pipeline(
    conversations: list[LocomoConversation],
) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    plain = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    pipeline = method.memory.pipeline
    before = dict(pipeline.paths), pipeline.embedder, pipeline.config
    try:
        settings = [FusionSetting.of(pipeline.config), FusionSetting(60, (("vector", 1.0),))]
        scores = score_settings(method, conversations, settings, k=5)
        assert (pipeline.paths, pipeline.embedder, pipeline.config) == before
        for conversation in conversations:
            plain.index(conversation)
            expected = [
                tuple(plain.search(conversation, q.question, 5))
                for q in conversation.questions
                if q.category != 5
            ]
            assert [o.retrieved for o in scores[0][conversation.sample_id]] == expected
            assert len(scores[1][conversation.sample_id]) == len(expected)
    finally:
        method.close()
        plain.close()


def test_run_loco_reports_folds_spread_and_pooled_held_out(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        grid = FusionGrid(rrf_k=(10, 60), vector=(1.0,), temporal=(1.0,), graph=(0.25,))
        result = run_loco(method, conversations, grid=grid, k=5)
    finally:
        method.close()
    report = result.to_dict()
    assert report["settings_searched"] == 2
    assert report["default"] == FusionSetting.of(RecallConfig()).to_dict()
    assert [f["held_out"] for f in report["folds"]] == [c.sample_id for c in conversations]
    held_out_n = sum(f["tuned"]["overall"]["n"] for f in report["folds"])
    assert report["pooled_held_out"]["tuned"]["overall"]["n"] == held_out_n == 6
    spread = report["spread"]["tuned"]["hit@5"]
    assert spread["min"] <= spread["median"] <= spread["max"]
    rows = fold_rows(result)
    assert [r["held out"] for r in rows] == ["tiny-1", "tiny-2", "min", "median", "max", "pooled"]


def test_run_loco_needs_two_conversations(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        with pytest.raises(ValueError, match="two conversations"):
            run_loco(method, conversations[:1])
    finally:
        method.close()


def test_the_loco_flag_runs_alone() -> None:
    result = CliRunner().invoke(app, ["bench", "locomo", "--data", str(FIXTURE), "--loco", "--folds", "2"])
    assert isinstance(result.exception, ConfigError) and "--loco runs alone" in str(result.exception)
