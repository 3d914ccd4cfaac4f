"""The bench commands end to end with the real MiniLM (numpy) on the tiny fixture; training: tests/train."""

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


def test_bench_throughput_small_times_numpy_and_names_the_torch_install(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    args = ["bench", "throughput", "--memories", "200", "--queries", "10", "--batch-size", "100"]
    result = runner.invoke(app, [*args, "--runtime-texts", "8", "--json", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert set(report["systems"]) == {"dreammem", "faiss+encoder"}
    # the packaged MiniLM on numpy; torch is not installed here (make test-train times both)
    assert set(report["runtimes"]) == {"numpy short", "numpy long"}
    assert report["runtimes"]["numpy long"]["texts"] == 2
    assert "runtime torch not timed" in result.output and "dreammem[torch]" in result.output


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
