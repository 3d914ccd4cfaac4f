from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import dreammem_bench.dream as bench
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem_bench.dream import METRIC_KEYS, run_benchmark
from dreammem_bench.streams import make_stream


def test_streams_are_deterministic_and_bilingual() -> None:
    a, b = make_stream("en", seed=3, batches=3), make_stream("en", seed=3, batches=3)
    assert a == b
    assert make_stream("en", seed=4, batches=3) != a
    zh = make_stream("zh", batches=3)
    assert zh.turns == 600 and all(len(batch) == 200 for batch in zh.batches)
    assert any("预算不超过人民币五万元" in t.content for t in zh.batches[0])
    assert len({t.session_id for t in a.batches[0]}) == 4


def test_benchmark_meets_its_targets_on_a_short_run() -> None:
    result = run_benchmark(batches=5, per_batch=120, embedder=HashingEmbedder())
    assert all(r.changes > 0 for r in result.results)
    out = result.to_json()
    assert set(out) == {"rules", "scripted_llm"}
    for metrics in out.values():
        assert tuple(metrics) == METRIC_KEYS
        assert metrics["constraint_survival"] == 1.0
        assert metrics["newest_wins"] == 1.0
        assert metrics["invented_numbers"] == 0
    assert out["rules"]["llm_calls_per_200"] == 0
    assert 0 < out["scripted_llm"]["llm_calls_per_200"] <= 12
    assert out["rules"]["compression_ratio"] > 4
    baseline = result.metrics("no_dream")
    assert baseline["compression_ratio"] < 1.2
    rejected = sum(r.llm_rejected for r in result.results if r.mode == "scripted_llm")
    assert rejected > 0  # the scripted LLM's invented numbers were caught


def test_cli_bench_dream_writes_the_json(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = bench.run_benchmark
    monkeypatch.setattr(
        bench,
        "run_benchmark",
        lambda **kw: real(**{**kw, "embedder": HashingEmbedder(), "languages": ("en",)}),
    )
    out = tmp_path / "m.json"
    args = ["bench", "dream", "--json", str(out), "--dreams", "5", "--per-dream", "100"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert set(data) == {"rules", "scripted_llm"} and tuple(data["rules"]) == METRIC_KEYS
    assert "constraint survival" in result.output
