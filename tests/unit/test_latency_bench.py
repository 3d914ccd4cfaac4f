"""The latency benchmark: deterministic data, per-stage numbers, every path switched off in turn."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dreammem import DreamMemConfig, DreamMemory
from dreammem.cli import app
from dreammem.config import RecallConfig
from dreammem.dates.parse import parse_time_query
from dreammem.embed import HashingEmbedder
from dreammem_bench.latency import (
    MainSentenceEmbedder,
    build_store,
    measure_latency,
    percentile,
    recall_at,
    synthetic_queries,
    synthetic_turns,
)


def test_synthetic_data_is_deterministic_and_spread() -> None:
    turns = list(synthetic_turns(100, 4))
    assert turns == list(synthetic_turns(100, 4))
    assert {t["user_id"] for t in turns} == {f"user-{n:03d}" for n in range(4)}
    times = [t["event_time"] for t in turns if t["user_id"] == "user-000"]
    assert times == sorted(times) and times[-1] > times[0]
    pooled = list(synthetic_turns(200, 1, distinct=5))
    assert len({t["content"].split(". ")[0].rstrip(".") for t in pooled}) <= 5
    queries = synthetic_queries(60)
    assert queries == synthetic_queries(60)
    dated = [q for q in queries if parse_time_query(q, turns[-1]["event_time"]) is not None]
    assert 0 < len(dated) < len(queries)


def test_recall_at_counts_ties_as_found() -> None:
    exact = np.array([0.9, 0.8, 0.8, 0.5], dtype=np.float32)
    assert recall_at([(1, 0.9), (2, 0.8), (3, 0.8)], exact, 3) == 1.0
    assert recall_at([(1, 0.9), (7, 0.8), (3, 0.5)], exact, 3) == pytest.approx(2 / 3)
    assert recall_at([], exact, 2) == 0.0
    assert recall_at([], exact[:0], 10) == 1.0


def test_percentile() -> None:
    assert percentile([], 0.5) == 0.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile(list(map(float, range(101))), 0.95) == pytest.approx(95.0)


def test_main_sentence_embedder_reuses_real_vectors() -> None:
    inner = HashingEmbedder()
    cached = MainSentenceEmbedder(inner)
    out = cached.embed_documents(
        ["Ana sold the bike in Oslo. It cost 300 dollars.", "Ana sold the bike in Oslo"]
    )
    expected = inner.embed_documents(["Ana sold the bike in Oslo"])[0]
    assert np.allclose(out[0], expected) and np.allclose(out[1], expected)
    assert np.allclose(cached.embed_query("bike Oslo"), inner.embed_query("bike Oslo"))
    assert cached.embed_documents([]).shape == (0, inner.dim)


def test_measure_reports_every_stage_and_configuration(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as memory:
        assert build_store(memory, 120, 3) is not None
        assert build_store(memory, 120, 3) is None  # a filled store is reused, not refilled
        report = measure_latency(memory, users=3, queries=12, warmup=2)
        # The synthetic store may hold statements that update others: count the active ones.
        flat = memory.vector_index.count(sorted(memory.store.users())[0])
    assert report.memories == 120 and report.queries == 12
    paths = [p for p in memory.config.recall.active_paths if p in memory.pipeline.paths]
    assert set(report.runs) == {"all", *(f"-{p}" for p in paths)}
    assert {"vector", "keyword", "temporal"} <= set(paths)
    assert {"embed", *paths, "load", "touch", "total", "total-embed"} <= set(report.runs["all"])
    assert "vector" not in report.runs["-vector"] and "embed" not in report.runs["-vector"]
    for run in report.runs.values():
        assert 0 < run["total"].p50 <= run["total"].p95
        assert run["total-embed"].p50 <= run["total"].p50
    assert set(report.baselines) == {
        "encoder only",  # timed beside each recall of "all"
        "encoder only (own loop)",
        f"bare faiss flat ({flat} vectors)",
        "store's vector index (exact)",
    }
    assert report.ann_recall_at_10 == 1.0  # an exact index misses nothing
    data = report.to_dict()
    assert data["runs"]["all"]["total"]["p95"] >= data["runs"]["all"]["total"]["p50"]
    ratio = report.over_encoder()
    assert ratio is not None
    assert ratio["p95"] == report.runs["all"]["total"].p95 / report.baselines["encoder only"].p95
    assert data["over_encoder"] == {k: round(v, 3) for k, v in ratio.items()}


def test_cli_prints_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "lat.json"
    store = tmp_path / "store"
    args = ["bench", "latency", "--memories", "80", "--users", "2", "--queries", "6", "--model", "hashing"]
    result = CliRunner().invoke(
        app, [*args, "--store", str(store), "--json", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "p50 / p95 ms per stage" in result.output and "encoder only" in result.output
    data = json.loads(out.read_text())
    assert data["memories"] == 80 and data["store"] == str(store) and data["distinct"] == 0
    assert data["ann_recall_at_10"] == 1.0 and data["reranker"] is None
    assert "recall@10 against exact search" in result.output
    assert "over the bare encoder: p50" in result.output and data["over_encoder"]["p95"] > 0
    again = CliRunner().invoke(app, [*args, "--store", str(store)], catch_exceptions=False)
    assert again.exit_code == 0 and "reused store" in again.output
    wrong = CliRunner().invoke(
        app, ["bench", "latency", "--memories", "81", "--model", "hashing", "--store", str(store)]
    )
    assert wrong.exit_code != 0


def test_distinct_pool_builds_with_context_window_off(tmp_path: Path) -> None:
    config = DreamMemConfig(recall=RecallConfig(context_window_turns=0))
    inner = HashingEmbedder()
    with DreamMemory(tmp_path / "p", embedder=MainSentenceEmbedder(inner), config=config) as memory:
        build_store(memory, 50, 1, distinct=4)
        assert memory.store.count() == 50
        assert memory.stats()["embedding_model"] == inner.name


def test_cli_index_past_the_threshold_reports_its_recall(tmp_path: Path) -> None:
    out = tmp_path / "lat.json"
    args = ["bench", "latency", "--memories", "400", "--users", "1", "--queries", "8", "--model", "hashing"]
    extra = [
        "--ann-threshold",
        "300",
        "--nprobe",
        "2",
        "--probe-share",
        "0",
        "--keyword-max-term-share",
        "0.2",
    ]
    result = CliRunner().invoke(
        app, [*args, *extra, "--store", str(tmp_path / "s"), "--json", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert any("ivf, nprobe 2" in name for name in data["baselines"])
    assert 0.0 <= data["ann_recall_at_10"] <= 1.0
    assert data["vector_index"]["ann_threshold"] == 300 and data["keyword_max_term_share"] == 0.2
