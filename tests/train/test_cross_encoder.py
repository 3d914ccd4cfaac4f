"""The real CrossEncoder code path: train a tiny model here, load it by path, score, rerank."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem.errors import ConfigError, ValidationError
from dreammem.rerank import CrossEncoderReranker
from dreammem.rerank.training import (
    METADATA_FILE,
    QueryGroup,
    TrainingConfig,
    TrainingPair,
    mine_pairs,
    train_cross_encoder,
)
from dreammem_bench import latency_cli

GROUPS = [
    QueryGroup(
        "What pet does Ava have?",
        ("Ava: I adopted a grey cat named Pixel.",),
        ("Ben: I play the cello.", "Ava: I adopted a grey cat named Pixel.", "Ben: The bakery closed."),
    ),
    QueryGroup(
        "Which instrument does Ben learn?",
        ("Ben: I play the cello.",),
        ("Ben: The bakery closed.", "Ava: I adopted a grey cat named Pixel.", "Ben: I play the cello."),
    ),
    QueryGroup(
        "What happened to the bakery?",
        ("Ben: The bakery closed.",),
        ("Ben: I play the cello.", "Ava: I adopted a grey cat named Pixel."),
    ),
]


def test_mine_pairs_is_seeded_and_never_labels_a_positive_negative() -> None:
    first = mine_pairs(GROUPS, negatives=1, seed=7)
    assert first == mine_pairs(GROUPS, negatives=1, seed=7)
    assert sum(p.label == 1.0 for p in first) == 3
    assert sum(p.label == 0.0 for p in first) == 3
    positives = {(g.query, t) for g in GROUPS for t in g.positives}
    assert all((p.query, p.text) not in positives for p in first if p.label == 0.0)
    assert len(mine_pairs(GROUPS, negatives=5, seed=7)) == 3 + 2 + 2 + 2


def test_training_needs_both_labels(tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        train_cross_encoder([TrainingPair("q", "t", 1.0)], tmp_path / "m")
    with pytest.raises(ValidationError):
        train_cross_encoder([], tmp_path / "m")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer cross-encoder fine-tuned from the packaged MiniLM on a few pairs."""
    pairs = mine_pairs(GROUPS * 4, negatives=2, seed=1)
    config = TrainingConfig(epochs=3, batch_size=8, max_length=32, num_layers=1, learning_rate=1e-4, seed=1)
    return train_cross_encoder(pairs, tmp_path_factory.mktemp("ce") / "model", config=config)


def test_trained_model_is_saved_with_its_settings(tiny_model: Path) -> None:
    assert (tiny_model / METADATA_FILE).exists()
    assert '"num_layers": 1' in (tiny_model / METADATA_FILE).read_text()


def test_loads_by_path_and_scores(tiny_model: Path) -> None:
    reranker = CrossEncoderReranker(tiny_model)
    assert reranker.name == str(tiny_model)
    assert reranker.max_length == 32  # what it was trained with
    texts = ["Ben: The bakery closed.", "Ava: I adopted a grey cat named Pixel."]
    scores = reranker.score("What pet does Ava have?", texts)
    assert len(scores) == 2 and all(isinstance(s, float) for s in scores)
    assert scores == reranker.score("What pet does Ava have?", texts)  # deterministic
    assert scores[1] > scores[0]  # it learned the training pairs
    assert reranker.score("anything", []) == []


def test_quantised_model_scores_close_to_fp32(tiny_model: Path) -> None:
    fp32 = CrossEncoderReranker(tiny_model, max_length=32)
    int8 = CrossEncoderReranker(tiny_model, max_length=32, quantize=True)
    texts = ["Ben: I play the cello.", "Ben: The bakery closed.", "Ava: I adopted a grey cat named Pixel."]
    a = fp32.score("Which instrument does Ben learn?", texts)
    b = int8.score("Which instrument does Ben learn?", texts)
    assert int8.quantized
    assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 0.5


def test_bad_model_path_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError):
        CrossEncoderReranker(tmp_path / "empty")
    with pytest.raises(ConfigError):
        CrossEncoderReranker(tmp_path / "empty", max_length=2)


def test_recall_with_the_reranker_traces_rerank_scores(tiny_model: Path) -> None:
    reranker = CrossEncoderReranker(tiny_model, max_length=32)
    with DreamMemory(embedder=HashingEmbedder(), reranker=reranker) as memory:
        for text in ("I adopted a grey cat named Pixel.", "I play the cello.", "The bakery closed."):
            memory.add(text, user_id="u1")
        result = memory.recall("pet cat", user_id="u1", k=3)
    assert len(result.hits) == 3
    assert all(hit.rerank_score is not None for hit in result.hits)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_latency_bench_times_the_reranker(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes: list[int] = []
    real = latency_cli.load_reranker

    def counting(*args: Any, **kwargs: Any) -> Any:
        reranker = real(*args, **kwargs)
        assert isinstance(reranker, CrossEncoderReranker) and reranker.quantized and reranker.threads == 2
        score = reranker.score

        def spy(query: str, texts: Sequence[str]) -> list[float]:
            sizes.append(len(texts))
            return score(query, texts)

        reranker.score = spy  # type: ignore[method-assign]
        return reranker

    monkeypatch.setattr(latency_cli, "load_reranker", counting)
    out = tmp_path / "lat.json"
    args = ["bench", "latency", "--memories", "60", "--users", "2", "--queries", "4", "--model", "hashing"]
    rerank = ["--reranker", str(tiny_model), "--rerank-quantize", "--rerank-top", "7"]
    rerank += ["--rerank-threads", "2"]
    result = CliRunner().invoke(
        app, [*args, *rerank, "--no-ablate", "--json", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["reranker"] == str(tiny_model) and data["rerank_top"] == 7
    assert data["runs"]["all"]["rerank"]["p50"] > 0
    assert set(data["runs"]) == {"all"}  # --no-ablate: no path switched off
    assert sizes and max(sizes) == 7  # the reranker saw the top 7 only


def test_scoring_uses_its_thread_count_and_restores_torch(tiny_model: Path) -> None:
    before = torch.get_num_threads()
    seen: list[int] = []
    reranker = CrossEncoderReranker(tiny_model, threads=1)
    inner = reranker._model.predict  # noqa: SLF001 - white-box: spies on the wrapped model to see its thread setting

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return inner(*args, **kwargs)

    reranker._model.predict = spy  # noqa: SLF001 - white-box: spies on the wrapped model to see its thread setting
    assert len(reranker.score("What pet does Ava have?", ["Ben: I play the cello."])) == 1
    assert seen == [1] and torch.get_num_threads() == before
    with pytest.raises(ConfigError):
        CrossEncoderReranker(tiny_model, threads=0)
