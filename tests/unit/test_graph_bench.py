"""The graph benchmark's data, measurement and command (embedded only: no sockets here)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dreammem.cli import app
from dreammem_bench.graph import GraphBenchConfig, make_items, make_queries, run_graph_bench


def test_synthetic_data_is_deterministic_and_shaped_like_conversation_memory() -> None:
    items = make_items(2000, seed=3)
    assert items == make_items(2000, seed=3)
    assert len({i.memory_id for i in items}) == 2000
    hub_share = sum(any(e.key == "mia" for e in i.entities) for i in items) / len(items)
    assert 0.25 < hub_share < 0.35
    assert 0.05 < sum(bool(i.relations) for i in items) / len(items) < 0.15
    queries = make_queries(items, 50, seed=3)
    assert len(queries) == 50 and all(1 <= len(q) <= 2 and "mia" not in q for q in queries)


def test_run_measures_every_number() -> None:
    (result,) = run_graph_bench(GraphBenchConfig(sizes=(1500,), queries=20))
    assert result.backend == "embedded" and result.size == 1500
    assert result.write_per_s > 0
    for numbers in (result.one_hop_ms, result.two_hop_ms):
        assert 0 < numbers["p50"] <= numbers["p95"]
    assert result.mean_hits_two_hop > 0
    assert result.agreement is None


def test_bench_graph_command_writes_json(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("NEO4J_URI", raising=False)
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(
        app, ["bench", "graph", "--sizes", "800", "--queries", "10", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "embedded" in result.output and "2-hop p95" in result.output
    payload = json.loads(out.read_text())
    assert payload["neo4j"] is None and [r["size"] for r in payload["results"]] == [800]
