"""The ``dreammem bench graph`` command (registered on the ``bench`` sub-app in :mod:`dreammem_bench.app`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from dreammem.embed.models import resolve_embedder
from dreammem.stores.base import GraphStore
from dreammem_bench.graph import BackendResult, GraphBenchConfig, run_graph_bench
from dreammem_bench.graph_locomo import load_locomo, run_locomo_graph, summary

__all__ = ["bench_graph"]

console = Console(stderr=True)


def _table(results: list[BackendResult]) -> Table:
    table = Table(title="graph backends: same synthetic data, same queries (neighbors, limit 30)")
    for column in ("backend", "memories", "writes/s", "1-hop p50", "1-hop p95", "2-hop p50", "2-hop p95"):
        table.add_column(column, justify="right")
    table.add_column("2-hop hits", justify="right")
    table.add_column("same as embedded", justify="right")
    for r in results:
        table.add_row(
            r.backend,
            f"{r.size:,}",
            f"{r.write_per_s:,.0f}",
            f"{r.one_hop_ms['p50']:.2f} ms",
            f"{r.one_hop_ms['p95']:.2f} ms",
            f"{r.two_hop_ms['p50']:.2f} ms",
            f"{r.two_hop_ms['p95']:.2f} ms",
            f"{r.mean_hits_two_hop:.1f}",
            "-" if r.agreement is None else f"{r.agreement:.1%}",
        )
    return table


def _locomo(path: Path, uri: str | None, progress: Callable[[str], None]) -> list[dict[str, Any]]:
    graphs: dict[str, Callable[[], GraphStore] | None] = {"embedded": None}
    if uri is not None:
        from dreammem.stores.neo4j import Neo4jGraphStore  # noqa: PLC0415 - the neo4j extra is optional

        graphs["neo4j"] = lambda: Neo4jGraphStore(uri)
    rows = summary(run_locomo_graph(load_locomo(path), resolve_embedder("minilm"), graphs, progress=progress))
    table = Table(
        title=f"LoCoMo {path.name}: hit@5 by question category (1 = multi-hop), MiniLM, no reranker"
    )
    for column in rows[0]:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
    Console(width=150).print(table)
    return rows


def bench_graph(
    sizes: Annotated[str, typer.Option(help="Comma-separated graph sizes (memories).")] = "10000,100000",
    queries: Annotated[int, typer.Option(help="Queries timed per hop count.")] = 200,
    neo4j_uri: Annotated[
        str | None,
        typer.Option(
            "--neo4j-uri", help="Bolt URI of a Neo4j 5 server (default $NEO4J_URI; none: embedded only)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the data and queries.")] = 0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the numbers to this file.")
    ] = None,
    locomo: Annotated[
        Path | None,
        typer.Option(help="Also run LoCoMo hit@5 with/without the graph path per backend on this file."),
    ] = None,
) -> None:
    """Embedded graph vs Neo4j: write throughput, 1-hop and 2-hop latency p50/p95."""
    uri = neo4j_uri or os.environ.get("NEO4J_URI") or None
    config = GraphBenchConfig(
        sizes=tuple(int(s) for s in sizes.split(",") if s.strip()), queries=queries, seed=seed
    )
    if uri is None:
        console.print("[yellow]no --neo4j-uri / $NEO4J_URI: measuring the embedded graph only[/yellow]")
    progress = lambda m: console.print(f"[dim]{m}...[/dim]")  # noqa: E731
    results = run_graph_bench(config, neo4j_uri=uri, progress=progress)
    Console(width=150).print(_table(results))
    locomo_rows = _locomo(locomo, uri, progress) if locomo is not None else []
    if json_out is not None:
        payload: dict[str, Any] = {
            "config": {"sizes": list(config.sizes), "queries": queries, "seed": seed},
            "neo4j": uri,
            "results": [r.to_dict() for r in results],
            "locomo": locomo_rows,
        }
        json_out.write_text(json.dumps(payload, indent=2))
