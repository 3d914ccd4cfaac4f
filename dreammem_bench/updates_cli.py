"""``dreammem bench updates``: does recall show the current value? (see :mod:`dreammem_bench.updates_run`)."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from dreammem.embed.caching import CachingEmbedder
from dreammem.embed.models import E5Embedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem_bench.lme_cli import DEFAULT_CACHE, DEFAULT_DATA
from dreammem_bench.updates import SOURCES, Conversation, Suite, build_conversations, load_suite
from dreammem_bench.updates_lme import LME_SOURCE, LME_SPLIT, load_lme_updates, run_lme_updates
from dreammem_bench.updates_run import METRICS, CaseResult, Row, run_updates
from dreammem_bench.vector_cache import DiskCachedEmbedder

__all__ = ["bench_updates"]

console = Console(width=200)
_TARGETS = {
    "current@3": ">= 0.95",
    "stale_suppressed": ">= 0.90",
    "false_supersede": "<= 0.02",
    "filler_top3": "= 0",
    "unrelated_injection": "<= 0.10",
    "precision": ">= 0.80",
    "coverage": ">= 0.90",
}


_TITLES = {
    "dev": "shipped cases, dev split",
    "held": "shipped cases, held-back split",
    "indep": "independent cases (written before tuning, issue 34)",
    "indep-held": "independent cases, HELD-BACK part (score once)",
    LME_SPLIT: "LongMemEval dev knowledge-update questions (latest evidence turn current)",
}


def _table(rows: list[Row], split: str) -> Table:
    table = Table(title=f"update benchmark: {_TITLES.get(split, split)}")
    table.add_column("method / phase / lang")
    for metric in METRICS:
        table.add_column(f"{metric} ({_TARGETS[metric]})", justify="right")
    keys = sorted({(r.method, r.phase, r.lang) for r in rows if r.split == split})
    for method, phase, lang in keys:
        cells = {
            r.metric: r for r in rows if (r.method, r.phase, r.lang, r.split) == (method, phase, lang, split)
        }
        table.add_row(
            f"{method} / {phase} / {lang}",
            *(f"{cells[m].value:.3f} (n={cells[m].n})" if m in cells else "-" for m in METRICS),
        )
    return table


def bench_updates(
    langs: Annotated[str, typer.Option(help="Languages to run, comma-separated (en, zh).")] = "en,zh",
    split: Annotated[str, typer.Option(help="Splits to print: dev, held, indep, indep-held or all.")] = "all",
    sources: Annotated[
        str,
        typer.Option(
            help=f"Case sources, comma-separated ({', '.join([*SOURCES, LME_SOURCE])}); independent-held "
            f"is scored once, at the end of a change, so it is only run when named; {LME_SOURCE} reads "
            "the dev knowledge-update questions of --lme-data."
        ),
    ] = "shipped,independent",
    lme_data: Annotated[Path, typer.Option(help="LongMemEval JSON of the lme source.")] = DEFAULT_DATA,
    lme_cache: Annotated[
        Path | None, typer.Option(help="Vector cache of the lme source (bench longmemeval's).")
    ] = DEFAULT_CACHE,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write every row as JSON.")] = None,
    cases_out: Annotated[
        Path | None,
        typer.Option(
            "--cases", help="Also write every question's injected block and metrics, per phase, as JSON."
        ),
    ] = None,
    zh_model: Annotated[
        Literal["e5", "minilm"],
        typer.Option(
            "--zh-model",
            help="Model of the Chinese cases: e5 (what model='auto' picks for a store that starts in "
            "Chinese) or minilm (a store that started in English, or named MiniLM).",
        ),
    ] = "e5",
) -> None:
    """Natural-language updates: current value first, stale ones suppressed, compatible ones kept."""
    wanted = [lang.strip() for lang in langs.split(",") if lang.strip()]
    models = {"en": NumpyBertEmbedder, "zh": E5Embedder if zh_model == "e5" else NumpyBertEmbedder}
    embedders = {
        lang: CachingEmbedder(models[lang](), cache_queries=False) for lang in wanted if lang in models
    }
    cases: list[CaseResult] | None = [] if cases_out is not None else None
    rows: list[Row] = []
    for source in [s.strip() for s in sources.split(",") if s.strip()]:
        if source == LME_SOURCE:
            rows += _lme_rows(lme_data, lme_cache, cases)
            continue
        if source not in SOURCES:
            known = ", ".join([*SOURCES, LME_SOURCE])
            raise typer.BadParameter(f"unknown source {source!r}; known: {known}")
        suite = load_suite(source)
        convs = build_conversations(suite, prefix="" if source == "shipped" else f"{source}-")
        with tempfile.TemporaryDirectory() as tmp:
            rows += run_updates(
                suite,
                convs,
                embedders,
                Path(tmp),
                progress=_progress(source),
                cases=cases,
            )
        _summary(source, suite, convs)
    for name in sorted({r.split for r in rows}) if split == "all" else (split,):
        console.print(_table(rows, name))
    if json_out is not None:
        json_out.write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=2))
    if cases_out is not None and cases is not None:
        text = json.dumps([dataclasses.asdict(c) for c in cases], ensure_ascii=False, indent=1)
        cases_out.write_text(text, encoding="utf-8")


def _lme_rows(data: Path, cache: Path | None, cases: list[CaseResult] | None) -> list[Row]:
    """The lme source's rows; the vectors come from (and go to) ``bench longmemeval``'s cache."""
    updates = load_lme_updates(data)
    console.print(f"{LME_SOURCE}: {len(updates)} knowledge-update questions of the dev split of {data.name}")
    embedder = DiskCachedEmbedder(NumpyBertEmbedder(), cache)
    try:
        return run_lme_updates(updates, embedder, progress=_progress(LME_SOURCE), cases=cases)
    finally:
        embedder.close()


def _progress(source: str) -> Callable[[str], None]:
    return lambda step: console.print(f"... {source}: {step}")


def _summary(source: str, suite: Suite, convs: list[Conversation]) -> None:
    updates = sum(c.kind == "update" for c in suite.cases)
    keeps = sum(c.kind == "keep" for c in suite.cases)
    echoes = sum(c.echo is not None for c in suite.cases)
    console.print(
        f"{source}: {updates} update cases ({echoes} with an assistant echo), {keeps} keep cases, "
        f"{len(suite.unrelated)} no-memory questions, "
        f"{len({c.family for c in suite.cases if c.kind == 'update'})} families; {len(convs)} conversations"
    )
