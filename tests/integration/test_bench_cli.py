"""The bench and train-reranker commands end to end, with the real MiniLM, on the tiny fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.config import DreamMemConfig
from dreammem_bench.metrics import METRIC_KEYS

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parents[1] / "fixtures" / "locomo_tiny.json"
runner = CliRunner()


def test_bench_locomo_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["bench", "locomo", "--data", str(FIXTURE), "--json", str(out), "--ablate"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    ablations = {f"dreammem-no-{path}" for path in DreamMemConfig().recall.active_paths}
    assert set(report["methods"]) == {"dreammem", *ablations, "vector", "bm25", "fusion", "recency"}
    assert report["reranker"] is None and report["data"] == str(FIXTURE)
    for entry in report["methods"].values():
        assert set(entry["overall"]) == set(METRIC_KEYS)
    # On six turns, meaning-based recall finds Ava's cat at once.
    assert report["methods"]["dreammem"]["by_category"]["4"]["hit@5"] == 1.0
    assert "LoCoMo retrieval" in result.output


def test_bench_locomo_rejects_unknown_methods() -> None:
    result = runner.invoke(app, ["bench", "locomo", "--data", str(FIXTURE), "--methods", "dense"])
    assert result.exit_code != 0


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


def test_bench_locomo_loco_reports_held_out_folds_beside_the_default(tmp_path: Path) -> None:
    plain, loco = tmp_path / "plain.json", tmp_path / "loco.json"
    base = ["bench", "locomo", "--data", str(FIXTURE)]
    assert runner.invoke(app, [*base, "--methods", "dreammem", "--json", str(plain)]).exit_code == 0
    result = runner.invoke(app, [*base, "--loco", "--json", str(loco)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "leave-one-conversation-out" in result.output and "median" in result.output
    report = json.loads(loco.read_text())["loco"]
    assert [f["held_out"] for f in report["folds"]] == ["tiny-1", "tiny-2"]
    assert report["settings_searched"] == 72
    # The default setting, scored through the cached paths, is exactly the plain run.
    shipped = json.loads(plain.read_text())["methods"]["dreammem"]["overall"]
    assert report["pooled_held_out"]["default"]["overall"] == shipped
    assert report["pooled_held_out"]["tuned"]["overall"]["n"] == shipped["n"] == 6


def test_bench_locomo_levers_scores_each_family_beside_the_shipped_pipeline(tmp_path: Path) -> None:
    plain, levers = tmp_path / "plain.json", tmp_path / "levers.json"
    base = ["bench", "locomo", "--data", str(FIXTURE)]
    assert runner.invoke(app, [*base, "--methods", "dreammem", "--json", str(plain)]).exit_code == 0
    args = [*base, "--loco", "--levers", "graph_named,e5", "--lever-weights", "0,1", "--json", str(levers)]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    report = json.loads(levers.read_text())["levers"]
    assert len(report["settings"]) == 4 and set(report["families"]) == {"graph_named", "e5", "all"}
    # Every family's baseline is the all-off setting: exactly the plain run.
    shipped = json.loads(plain.read_text())["methods"]["dreammem"]["overall"]
    assert {f["baseline hit@5"] for f in report["families"].values()} == {shipped["hit@5"]}
