"""The bench commands that train or run on torch, end to end, with the real MiniLM, on the tiny fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parents[1] / "fixtures" / "locomo_tiny.json"
runner = CliRunner()


def test_train_reranker_then_bench_with_it(tmp_path: Path) -> None:
    model = tmp_path / "reranker"
    trained = runner.invoke(
        app,
        ["train-reranker", "--data", str(FIXTURE), "--out", str(model), "--epochs", "1", "--num-layers", "1"],
    )
    assert trained.exit_code == 0, trained.output
    out = tmp_path / "report.json"
    args = ["bench", "locomo", "--data", str(FIXTURE), "--methods", "dreammem", "--reranker", str(model)]
    result = runner.invoke(app, [*args, "--rerank-quantize", "--json", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["reranker"] == str(model)
    assert report["methods"]["dreammem"]["overall"]["n"] == 6


def test_bench_throughput_small(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    args = ["bench", "throughput", "--memories", "200", "--queries", "10", "--batch-size", "100"]
    result = runner.invoke(app, [*args, "--runtime-texts", "8", "--json", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert set(report["systems"]) == {"dreammem", "faiss+encoder"}
    # the packaged MiniLM on both runtimes, short and long texts side by side
    assert set(report["runtimes"]) == {"numpy short", "torch short", "numpy long", "torch long"}
    assert report["runtimes"]["numpy long"]["texts"] == 2
    assert "numpy / torch: short" in result.output


def test_bench_locomo_folds_trains_without_the_scored_conversation(tmp_path: Path) -> None:
    out = tmp_path / "folds.json"
    args = ["bench", "locomo", "--data", str(FIXTURE), "--methods", "dreammem,bm25", "--folds", "2"]
    args += ["--train-layers", "1", "--train-epochs", "1", "--rerank-max-length", "32", "--json", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["reranker"].startswith("2 folds")
    assert report["training"]["num_layers"] == 1
    # every scored question of both conversations is counted once
    assert report["methods"]["dreammem"]["overall"]["n"] == 6
    assert report["methods"]["bm25"]["overall"]["n"] == 6


def test_bench_locomo_folds_with_blend_weights_chosen_by_folds(tmp_path: Path) -> None:
    out = tmp_path / "blend.json"
    args = ["bench", "locomo", "--data", str(FIXTURE), "--methods", "dreammem", "--folds", "2"]
    args += ["--train-layers", "1", "--train-epochs", "1", "--rerank-max-length", "32", "--json", str(out)]
    result = runner.invoke(app, [*args, "--rerank-weights", "0.5,1"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert len(report["pairs"]) == 2
    assert {"dreammem-rerank-w0.5", "dreammem-rerank-w1", "dreammem-no-rerank"} <= set(report["methods"])
    assert [f["held_out"] for f in report["blend_by_folds"]] == ["tiny-1", "tiny-2"]
    assert "chosen by folds" in result.output
