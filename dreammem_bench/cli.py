"""``dreammem bench ...``: the LoCoMo, throughput and Chinese benchmarks.

The other benchmarks join this sub-app in :mod:`dreammem_bench.app`.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from dreammem.config import DreamMemConfig, load_config
from dreammem.embed.base import Embedder
from dreammem.embed.models import E5Embedder, resolve_embedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem.errors import ConfigError
from dreammem.recall.pipeline import Reranker
from dreammem.rerank.training import TrainingConfig, mine_pairs, train_cross_encoder
from dreammem_bench.chinese import TOKENIZERS, load_pairs, score_embedder, score_tokenizer
from dreammem_bench.encoders import (
    CHUNK,
    EncoderResult,
    compare_encoders,
    encoder_table,
    ratio_line,
    runtime_embedders,
    runtime_sets,
)
from dreammem_bench.loco_cli import parse_depths, parse_levers, run_loco_command
from dreammem_bench.locomo import LocomoConversation, load_locomo
from dreammem_bench.methods import BenchMethod
from dreammem_bench.pairs import locomo_query_groups
from dreammem_bench.report import build_report, render_table
from dreammem_bench.rerank_folds import CachedReranker, WeightFold, choose_weight_by_folds
from dreammem_bench.runner import MethodRun, merge_runs, run_benchmark, total_steps
from dreammem_bench.suite import (
    build_methods,
    close_methods,
    load_reranker,
    parse_methods,
    weight_method_name,
)
from dreammem_bench.throughput import run_throughput
from dreammem_bench.variants import parse_variants

__all__ = ["bench_app"]

bench_app = typer.Typer(
    name="bench",
    help="Benchmarks: retrieval quality, throughput and latency.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
if not console.is_terminal:
    console = Console(width=200)  # a report piped to a file keeps every column
err_console = Console(stderr=True)


def _progress(total: int, desc: str) -> tuple[Callable[[str], None], Callable[[], None]]:
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[method]}"),
        console=err_console,
    )
    task = bar.add_task(desc, total=total, method="")
    bar.start()

    def step(method: str) -> None:
        bar.update(task, advance=1, method=method)

    return step, bar.stop


def _run(
    conversations: Sequence[LocomoConversation],
    make_methods: Callable[[], list[BenchMethod]],
    k: int,
    desc: str,
) -> dict[str, MethodRun]:
    methods = make_methods()
    step, done = _progress(total_steps(conversations, methods), desc)
    try:
        return run_benchmark(conversations, methods, k=k, on_step=step)
    finally:
        done()
        close_methods(methods)


@bench_app.command("locomo")
def locomo(
    data: Annotated[Path, typer.Option("--data", help="A LoCoMo JSON file.", exists=True, dir_okay=False)],
    methods: Annotated[
        str, typer.Option(help="Comma-separated methods.")
    ] = "dreammem,vector,bm25,fusion,recency",
    reranker: Annotated[
        str | None, typer.Option(help="Cross-encoder for dreammem: hub name or local path.")
    ] = None,
    k: Annotated[int, typer.Option(help="Memories recalled per question.", min=1, max=100)] = 10,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the report here.")] = None,
    limit_conversations: Annotated[
        int | None, typer.Option(help="Use only the first N conversations.", min=1)
    ] = None,
    ablate: Annotated[bool, typer.Option(help="Also run dreammem with each recall path off.")] = False,
    variants: Annotated[
        str, typer.Option(help="';'-separated recall variants of dreammem (dreammem_bench.variants).")
    ] = "",
    embedder: Annotated[
        str | None, typer.Option(help="Embedder of the dreammem method (minilm, e5, a name or path).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="A DreamMem config file for the dreammem method.")
    ] = None,
    rerank_max_length: Annotated[
        int | None, typer.Option(help="Tokens per reranked pair (default: as trained, else 128).", min=8)
    ] = None,
    rerank_quantize: Annotated[bool, typer.Option(help="Dynamic int8 quantisation of the reranker.")] = False,
    rerank_blend: Annotated[
        str | None,
        typer.Option(help="rrf: fuse the reranker's rank with the first stage; replace: reranker alone."),
    ] = None,
    folds: Annotated[
        int,
        typer.Option(
            help="Cross-validate a fine-tuned reranker: split the conversations into N folds and "
            "score each fold with a reranker trained on the others (0: off).",
            min=0,
        ),
    ] = 0,
    train_layers: Annotated[int | None, typer.Option(help="With --folds: layers kept.", min=1)] = None,
    train_epochs: Annotated[float, typer.Option(help="With --folds: training epochs.")] = 2.0,
    train_observations: Annotated[
        bool, typer.Option(help="With --folds: also train on the annotated observations.")
    ] = True,
    rerank_weights: Annotated[
        str | None,
        typer.Option(
            help="With --folds: comma-separated rerank_weight values, each a variant sharing the "
            "reranker's scores; the folds choose among them and no rerank."
        ),
    ] = None,
    only_fold: Annotated[
        int | None, typer.Option(help="With --folds: run this fold only (1-based).", min=1)
    ] = None,
    loco: Annotated[
        bool,
        typer.Option(
            "--loco",
            help="Leave-one-conversation-out: choose the fusion settings (rrf_k, path weights) on the "
            "other conversations and score each held-out one; per-fold numbers and their spread, "
            "beside the shipped settings (dreammem only; --methods, --ablate and --folds do not apply).",
        ),
    ] = False,
    levers: Annotated[
        str | None,
        typer.Option(
            help="With --loco: comma-separated recall levers (graph_named, e5, speaker, "
            "naming, person, unnamed, reply) fused beside the shipped paths; every combination of "
            "--lever-weights is scored once and the "
            "folds choose per lever and for all together (instead of the fusion grid).",
        ),
    ] = None,
    lever_weights: Annotated[
        str, typer.Option(help="With --levers: comma-separated fusion weights tried per lever (0 = off).")
    ] = "0,0.5,1",
    depths: Annotated[
        str | None,
        typer.Option(
            help="With --levers: comma-separated candidates-per-path values scored beside the "
            "configuration's; the folds choose the depth with the lever weights.",
        ),
    ] = None,
) -> None:
    """LoCoMo retrieval quality of DreamMem against baselines, in one run."""
    if loco and (folds or ablate):
        raise ConfigError("--loco runs alone: leave out --folds and --ablate")
    if levers is not None and not loco:
        raise ConfigError("--levers needs --loco")
    if depths is not None and levers is None:
        raise ConfigError("--depths needs --levers")
    names = parse_methods(methods)
    cfg = load_config(config) if config else DreamMemConfig()
    if rerank_blend is not None:
        recall = cfg.recall.model_validate({**cfg.recall.model_dump(), "rerank_blend": rerank_blend})
        cfg = cfg.model_copy(update={"recall": recall})
    if embedder is not None:
        cfg = cfg.model_copy(update={"embedding": cfg.embedding.model_copy(update={"model": embedder})})
    conversations = load_locomo(data, limit=limit_conversations)
    baseline = NumpyBertEmbedder()
    own = _dreammem_embedder(cfg, baseline)

    weights = _parse_weights(rerank_weights)

    def methods_with(rr: Reranker | None) -> Callable[[], list[BenchMethod]]:
        return lambda: build_methods(
            names,
            baseline_embedder=baseline,
            config=cfg,
            dreammem_embedder=own,
            reranker=rr,
            ablate=ablate,
            rerank_variants=ablate or bool(folds),  # folds measure the reranker: keep its baseline
            rerank_weights=weights,
            variants=parse_variants(variants, cfg.recall),
        )

    extra: dict[str, Any] = {"embedder": own.name, "recall_config": cfg.recall.model_dump(mode="json")}
    if loco:
        rr = load_reranker(reranker, max_length=rerank_max_length, quantize=rerank_quantize)
        extra.update(data=str(data), k=k, conversations=[c.sample_id for c in conversations])
        extra["reranker"] = None if rr is None else rr.name
        run_loco_command(
            conversations,
            config=cfg,
            embedder=own,
            reranker=rr,
            k=k,
            progress=_progress,
            console=console,
            report=extra,
            json_out=json_out,
            levers=parse_levers(levers, lever_weights),
            depths=parse_depths(depths),
        )
        return
    if folds:
        train_cfg = TrainingConfig(
            num_layers=train_layers, epochs=train_epochs, max_length=rerank_max_length or 64
        )
        plan = FoldPlan(
            folds=folds,
            only=only_fold,
            train=train_cfg,
            observations=train_observations,
            max_length=rerank_max_length,
            quantize=rerank_quantize,
            cache=bool(weights),
        )
        runs, conversations = _run_folds(conversations, methods_with, k, plan)
        extra["training_observations"] = train_observations
        extra["pairs"] = plan.pairs
        label: str | None = (
            f"{folds} folds: MiniLM cross-encoder trained without the scored conversations' questions"
        )
        extra["training"] = dataclasses.asdict(train_cfg)
        if weights:
            candidates = ["dreammem-no-rerank", *(weight_method_name(w) for w in weights)]
            chosen = choose_weight_by_folds(runs, conversations, candidates)
            console.print(_weight_table(chosen))
            extra["blend_by_folds"] = [dataclasses.asdict(f) for f in chosen]
    else:
        rr = load_reranker(reranker, max_length=rerank_max_length, quantize=rerank_quantize)
        runs = _run(conversations, methods_with(rr), k, "locomo")
        label = None if rr is None else rr.name
    extra["rerank"] = {"max_length": rerank_max_length, "quantize": rerank_quantize}
    report = build_report(runs, data=str(data), reranker=label, k=k, conversations=conversations, extra=extra)
    console.print(render_table(report))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_out}")


def _dreammem_embedder(cfg: DreamMemConfig, baseline: NumpyBertEmbedder) -> Embedder:
    model = cfg.embedding.model
    if model in {"auto", "minilm", baseline.name}:
        return baseline  # English data: auto picks MiniLM; share the loaded model
    return resolve_embedder(model, batch_size=cfg.embedding.batch_size)


@dataclasses.dataclass(slots=True)
class FoldPlan:
    """How ``--folds`` trains and loads each fold's reranker (``pairs``: filled per fold)."""

    folds: int
    only: int | None
    train: TrainingConfig
    observations: bool
    max_length: int | None
    quantize: bool
    cache: bool
    pairs: list[int] = dataclasses.field(default_factory=list)


def _run_folds(
    conversations: Sequence[LocomoConversation],
    methods_with: Callable[[Reranker | None], Callable[[], list[BenchMethod]]],
    k: int,
    plan: FoldPlan,
) -> tuple[dict[str, MethodRun], list[LocomoConversation]]:
    runs: dict[str, MethodRun] = {}
    order: list[LocomoConversation] = []
    for fold in range(min(plan.folds, len(conversations))):
        if plan.only is not None and fold + 1 != plan.only:
            continue
        scored = [c for i, c in enumerate(conversations) if i % plan.folds == fold]
        rest = [c for i, c in enumerate(conversations) if i % plan.folds != fold]
        groups = locomo_query_groups(rest, depth=plan.train.depth, observations=plan.observations)
        pairs = mine_pairs(groups, negatives=plan.train.negatives, seed=plan.train.seed)
        plan.pairs.append(len(pairs))
        names = ",".join(c.sample_id for c in scored)
        err_console.print(f"fold {fold + 1}/{plan.folds} ({names}): training on {len(pairs)} pairs")
        with tempfile.TemporaryDirectory(prefix="dreammem-fold-") as out:
            train_cross_encoder(pairs, out, config=plan.train)
            rr = load_reranker(out, max_length=plan.max_length, quantize=plan.quantize)
            if rr is not None and plan.cache:
                rr = CachedReranker(rr)
            merge_runs(runs, _run(scored, methods_with(rr), k, f"fold {fold + 1}"))
        order += scored
    return runs, order


def _parse_weights(spec: str | None) -> list[float]:
    if spec is None:
        return []
    try:
        weights = [float(w) for w in spec.split(",") if w.strip()]
    except ValueError as exc:
        raise ConfigError(f"--rerank-weights must be numbers, got {spec!r}") from exc
    if not weights or any(w <= 0 for w in weights):
        raise ConfigError("--rerank-weights must be positive numbers")
    return weights


def _weight_table(folds: Sequence[WeightFold]) -> Table:
    table = Table(title="rerank_weight chosen by folds (on the other conversations), held out")
    columns = [
        "held out",
        "chosen",
        "train hit@5",
        "hit@5",
        "MRR",
        "hit@1",
        "no-rerank hit@5",
        "MRR",
        "hit@1",
        "n",
    ]
    for column in columns:
        table.add_column(column, justify="left" if column in ("held out", "chosen") else "right")
    for f in folds:
        row = [f.held_out, f.chosen, f"{f.train_hit5:.3f}"]
        row += [f"{m[key]:.3f}" for m in (f.held, f.baseline) for key in ("hit@5", "mrr", "hit@1")]
        table.add_row(*row, str(f.held["n"]))
    return table


@bench_app.command("throughput")
def throughput(
    memories: Annotated[int, typer.Option(help="Store size.", min=100)] = 10_000,
    queries: Annotated[int, typer.Option(help="Recalls to time.", min=10)] = 200,
    batch_size: Annotated[int, typer.Option(help="Turns per add_many call.", min=1)] = 256,
    embedder: Annotated[str, typer.Option(help="Embedder (minilm, e5, a name or path).")] = "minilm",
    config: Annotated[Path | None, typer.Option(help="A DreamMem config file.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the numbers here.")] = None,
    runtimes: Annotated[
        str, typer.Option(help="MiniLM runtimes timed side by side ('' for none).")
    ] = "numpy,torch",
    runtime_texts: Annotated[
        int, typer.Option(help="Short texts per runtime (and a quarter as many long).", min=1)
    ] = 512,
) -> None:
    """add_many throughput and recall p50/p95 at a store size, beside bare FAISS + encoder.

    Then the packaged MiniLM on each of ``--runtimes``, short and long texts side by side.
    """
    cfg = load_config(config) if config else DreamMemConfig()
    model = resolve_embedder(embedder, batch_size=cfg.embedding.batch_size)
    batches = -(-memories // batch_size)
    step, done = _progress(2 * batches + 2, "throughput")
    try:
        results = run_throughput(
            model, memories=memories, queries=queries, batch_size=batch_size, config=cfg, on_step=step
        )
    finally:
        done()
    table = Table(title=f"{memories} memories, {model.name}, batches of {batch_size}, one query at a time")
    for column in ("system", "ingest turns/s", "ingest turns/CPU-s", "recall p50 ms", "recall p95 ms"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for r in results:
        table.add_row(
            r.name, f"{r.ingest_per_s:.1f}", f"{r.ingest_per_cpu_s:.1f}", f"{r.p50_ms:.1f}", f"{r.p95_ms:.1f}"
        )
    console.print(table)
    ours, bare = results
    console.print(
        f"ingest ratio: {ours.ingest_per_s / bare.ingest_per_s:.2f}x wall clock, "
        f"{ours.ingest_per_cpu_s / bare.ingest_per_cpu_s:.2f}x CPU"
    )
    encoders = compare_runtimes(
        [r for r in runtimes.split(",") if r], runtime_texts, cfg.embedding.batch_size
    )
    if json_out is not None:
        report: dict[str, Any] = {"embedder": model.name, "batch_size": batch_size, "queries": queries}
        report["systems"] = {r.name: r.to_dict() for r in results}
        report["runtimes"] = {f"{r.runtime} {r.texts}": r.to_dict() for r in encoders}
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_out}")


def compare_runtimes(runtimes: Sequence[str], count: int, batch_size: int) -> list[EncoderResult]:
    """Time the packaged MiniLM on each runtime that loads, print the table; the results."""
    embedders, missing = runtime_embedders(runtimes, batch_size=batch_size)
    for runtime, reason in missing.items():
        console.print(f"runtime {runtime} not timed: {escape(reason)}")  # keeps "dreammem[torch]"
    if not embedders:
        return []
    sets = runtime_sets(count)
    step, done = _progress(len(embedders) * sum(-(-len(t) // CHUNK) for t in sets.values()), "runtimes")
    try:
        encoders = compare_encoders(embedders, sets, on_step=step)
    finally:
        done()
    console.print(encoder_table(encoders))
    if line := ratio_line(encoders):
        console.print(line)
    return encoders


@bench_app.command("chinese")
def chinese() -> None:
    """Chinese recall: MiniLM vs multilingual e5, and jieba vs character n-gram BM25."""
    pairs = load_pairs()
    rows = [score_embedder(NumpyBertEmbedder(), pairs), score_embedder(E5Embedder(), pairs)]
    rows += [score_tokenizer(name, pairs) for name in TOKENIZERS]
    table = Table(title=f"Chinese recall on {len(pairs)} shipped question/memory pairs")
    for column in ("system", "hit@1", "hit@3", "index docs/s"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for r in rows:
        speed = "" if r.docs_per_s is None else f"{r.docs_per_s:.0f}"
        table.add_row(r.name, f"{r.hit_at_1:.2f}", f"{r.hit_at_3:.2f}", speed)
    console.print(table)
