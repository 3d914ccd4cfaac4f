"""``dreammem bench latency``: recall latency per stage, with each path switched off in turn."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from dreammem.config import DreamMemConfig, EmbeddingConfig, RecallConfig, VectorIndexConfig
from dreammem.embed.base import Embedder
from dreammem.embed.models import resolve_embedder
from dreammem.engine import is_server_uri
from dreammem.memory import DreamMemory
from dreammem_bench.latency import (
    STAGES,
    TOTALS,
    LatencyReport,
    MainSentenceEmbedder,
    build_store,
    measure_latency,
)
from dreammem_bench.suite import load_reranker

__all__ = ["bench_latency"]

console = Console()
if not console.is_terminal:
    console = Console(width=200)  # a report piped to a file keeps every column
err_console = Console(stderr=True)


def bench_latency(
    memories: Annotated[int, typer.Option(help="Memories in the store (all users).", min=1)] = 3000,
    users: Annotated[int, typer.Option(help="Users the memories are spread over.", min=1)] = 5,
    queries: Annotated[int, typer.Option(help="Queries measured per configuration.", min=1)] = 200,
    k: Annotated[int, typer.Option(help="Hits per recall.", min=1)] = 5,
    model: Annotated[str, typer.Option(help="Embedding model (minilm, e5, or a path).")] = "minilm",
    distinct: Annotated[
        int,
        typer.Option(
            help="Embed only this many distinct main sentences (real model vectors, reused); "
            "0 embeds every turn in full. Makes 100k stores build in minutes.",
            min=0,
        ),
    ] = 0,
    store: Annotated[
        str | None,
        typer.Option(
            help="Keep/reuse the built store here: a folder, or a bolt:// / neo4j:// URI for the "
            "Neo4j backend (default: a temporary dir)."
        ),
    ] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the numbers as JSON.")] = None,
    reranker: Annotated[
        str | None, typer.Option(help="Cross-encoder over the top candidates: hub name or local path.")
    ] = None,
    rerank_max_length: Annotated[
        int | None, typer.Option(help="Tokens per reranked pair (default: as trained, else 128).", min=8)
    ] = None,
    rerank_quantize: Annotated[bool, typer.Option(help="Dynamic int8 quantisation of the reranker.")] = False,
    rerank_threads: Annotated[
        int | None, typer.Option(help="torch threads while reranking (default: torch's setting).", min=1)
    ] = None,
    rerank_top: Annotated[
        int, typer.Option(help="Fused candidates given to the reranker.", min=1)
    ] = RecallConfig().rerank_top,
    ann_threshold: Annotated[
        int, typer.Option(help="A user's vectors from which FAISS search is IVF (0: always exact).", min=0)
    ] = VectorIndexConfig().ann_threshold,
    nprobe: Annotated[
        int, typer.Option(help="The fewest IVF lists probed per query.", min=1)
    ] = VectorIndexConfig().nprobe,
    probe_share: Annotated[
        float,
        typer.Option(
            help="Share of a user's IVF lists probed per query (at least --nprobe).", min=0.0, max=1.0
        ),
    ] = VectorIndexConfig().probe_share,
    ablate: Annotated[bool, typer.Option(help="Also run with each recall path switched off in turn.")] = True,
    keyword_max_term_share: Annotated[
        float,
        typer.Option(
            help="Keyword path: drop terms in more than this share of memories (1: keep all).",
            min=0.0,
            max=1.0,
        ),
    ] = RecallConfig().keyword_max_term_share or 1.0,
) -> None:
    """Recall latency p50/p95 per stage (embed, paths, load, touch) with and without each path."""
    target: str | Path = Path(store or tempfile.mkdtemp(prefix="dreammem-latency-"))
    if store is not None and is_server_uri(store):
        target = store
    embedder: Embedder = resolve_embedder(model)
    recall = RecallConfig(
        keyword_max_term_share=None if keyword_max_term_share >= 1 else keyword_max_term_share,
        rerank_top=rerank_top,
    )
    if distinct:
        embedder = MainSentenceEmbedder(embedder)
        recall = recall.model_copy(update={"context_window_turns": 0})
    config = DreamMemConfig(
        embedding=EmbeddingConfig(model=model),
        recall=recall,
        vector_index=VectorIndexConfig(ann_threshold=ann_threshold, nprobe=nprobe, probe_share=probe_share),
    )
    rr = load_reranker(
        reranker, max_length=rerank_max_length, quantize=rerank_quantize, threads=rerank_threads
    )
    with DreamMemory(target, config=config, embedder=embedder, reranker=rr) as memory:
        if memory.store.count() not in (0, memories):
            raise typer.BadParameter(f"{target} holds {memory.store.count()} memories, not {memories}")
        with Progress(
            TextColumn("building store"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            task = bar.add_task("build", total=memories)
            rate = build_store(
                memory, memories, users, distinct=distinct, progress=lambda n: bar.advance(task, n)
            )
        configurations = 1 + len(memory.config.recall.active_paths) if ablate else 1
        err_console.print(f"measuring {queries} queries x {configurations} configurations")
        report = measure_latency(memory, users=users, queries=queries, k=k, ingest_per_s=rate, ablate=ablate)
    load = os.getloadavg()[0]
    _print(report, target, distinct, load, reranker)
    if json_out is not None:
        extra = {
            "store": str(target),
            "distinct": distinct,
            "model": model,
            "load_avg_1m": load,
            "reranker": reranker,
            "rerank_top": rerank_top,
            "rerank_threads": rerank_threads,
            "vector_index": config.vector_index.model_dump(),
            "keyword_max_term_share": keyword_max_term_share,
        }
        json_out.write_text(json.dumps({**report.to_dict(), **extra}, indent=2))


def _print(
    report: LatencyReport, target: str | Path, distinct: int, load: float, reranker: str | None
) -> None:
    ingest = f"{report.ingest_per_s:.0f} turns/s" if report.ingest_per_s else "reused store"
    vectors = f"{distinct} distinct main sentences embedded" if distinct else "every turn embedded"
    console.print(
        f"recall latency: {report.memories} memories over {report.users} user(s) ({vectors}), "
        f"{report.queries} queries per configuration, ingest {ingest}, "
        f"machine: {os.cpu_count()} cores, load average {load:.1f}, store {target}, "
        f"reranker {reranker or 'none'}"
    )
    stages = [s for s in (*STAGES, *TOTALS) if any(s in run for run in report.runs.values())]
    table = Table(title="p50 / p95 ms per stage")
    table.add_column("configuration")
    for stage in stages:
        table.add_column(stage, justify="right")
    for name, run in report.runs.items():
        cells = [f"{run[s].p50:.1f}/{run[s].p95:.1f}" if s in run else "-" for s in stages]
        table.add_row(name, *cells)
    console.print(table)
    base = Table(title="baselines in the same run (p50 / p95 ms)")
    base.add_column("baseline")
    base.add_column("p50 / p95", justify="right")
    for name, stats in report.baselines.items():
        base.add_row(name, f"{stats.p50:.2f} / {stats.p95:.2f}")
    console.print(base)
    if report.ann_recall_at_10 is not None:
        console.print(f"vector index recall@10 against exact search: {report.ann_recall_at_10:.3f}")
    if (ratio := report.over_encoder()) is not None:
        console.print(
            f"recall with every path over the bare encoder: p50 {ratio['p50']:.2f}x, p95 {ratio['p95']:.2f}x"
            " (encoder timed beside each recall)"
        )
