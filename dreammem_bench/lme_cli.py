"""``dreammem bench longmemeval``: DreamMem beside BM25, MiniLM and their fusion on LongMemEval.

See :mod:`dreammem_bench.longmemeval` for the data, :mod:`dreammem_bench.lme_metrics` for
the metrics and :mod:`dreammem_bench.lme_run` for the folds.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dreammem.config import DreamMemConfig, load_config
from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem_bench.lme_methods import (
    BM25Turns,
    DreamMemHaystack,
    FusionTurns,
    LmeMethod,
    MiniLMSessions,
    MiniLMTurns,
    RecallVariant,
)
from dreammem_bench.lme_metrics import LmeOutcome, mean_by_type
from dreammem_bench.lme_run import choose_by_folds, run_lme
from dreammem_bench.longmemeval import QUESTION_TYPES, LmeQuestion, load_longmemeval
from dreammem_bench.variants import parse_variants
from dreammem_bench.vector_cache import DiskCachedEmbedder

__all__ = ["SPLITS", "bench_longmemeval", "split_questions"]

console = Console(width=200)
SPENT_HELD = 140
"""How many of the held questions (in file order) have been scored: sessions 23 and 24 scored
the first 140 once each; they are training data now, and only the rest are still unseen."""


def _held_place(i: int) -> int:
    """The 0-based place of the file's ``i``-th question among the held questions."""
    return i - i // 4 - 1


SPLITS: dict[str, Callable[[int], bool]] = {
    "all": lambda i: True,
    "dev": lambda i: i % 4 == 0,
    "held": lambda i: i % 4 != 0,
    "train": lambda i: i % 4 == 0 or _held_place(i) < SPENT_HELD,
    "fresh": lambda i: i % 4 != 0 and _held_place(i) >= SPENT_HELD,
}
"""Which questions of the file a split holds, by position: ``dev`` (every 4th) tuned on, ``held``
the others; ``train`` is dev plus the held questions already scored (:data:`SPENT_HELD`),
``fresh`` the held questions never scored (to be scored once)."""


def split_questions(data: Path, split: str, *, skip: int = 0, limit: int | None = None) -> list[LmeQuestion]:
    """The questions of ``split`` in file order, the first ``skip`` left out, at most ``limit``.

    Raises:
        typer.BadParameter: Not a split of :data:`SPLITS`.
    """
    if split not in SPLITS:
        raise typer.BadParameter(f"--split must be one of {sorted(SPLITS)}, got {split!r}")
    chosen = [q for i, q in enumerate(load_longmemeval(data)) if SPLITS[split](i)][skip:]
    return chosen[:limit]


DEFAULT_CACHE = Path(".bench/lme-vectors.bin")
DEFAULT_DATA = Path("../shared/data/longmemeval/longmemeval_s_dev240.json.gz")
_SHOWN = ("s_any@5", "s_all@10", "ndcg@10", "t_any@5", "t_any@10")
_FOLD_METRICS = ("t_any@5", "ndcg@10", "s_any@5")


def _table(title: str, outcomes: dict[str, list[LmeOutcome]]) -> Table:
    table = Table(title=title)
    table.add_column("method")
    table.add_column("type")
    for key in (*_SHOWN, "n"):
        table.add_column(key, justify="right")
    for name, found in outcomes.items():
        by_type = mean_by_type(found)
        for kind in ("all", *QUESTION_TYPES):
            row = by_type.get(kind)
            if row is None:
                continue
            cells = ["-" if math.isnan(row[k]) else f"{row[k]:.3f}" for k in _SHOWN]
            table.add_row(name, kind, *cells, str(int(row["n"])))
        abstain = by_type.get("abstention")
        if abstain is not None:
            table.add_row(
                name, f"abstention: mean returned {abstain['returned']:.1f}, empty {abstain['empty']:.2f}"
            )
    return table


def bench_longmemeval(
    data: Annotated[Path, typer.Option(help="LongMemEval JSON (.json or .json.gz).")] = DEFAULT_DATA,
    split: Annotated[
        str,
        typer.Option(
            help="all, dev (every 4th question of the file: tuned on), held (the others), "
            "train (dev + the held questions already scored) or fresh (held, never scored)."
        ),
    ] = "all",
    limit: Annotated[int | None, typer.Option(help="At most this many questions.", min=1)] = None,
    skip: Annotated[
        int, typer.Option(help="Leave out the split's first N questions (to score a later part once).", min=0)
    ] = 0,
    config: Annotated[Path | None, typer.Option(help="DreamMem TOML config.")] = None,
    variants: Annotated[str, typer.Option(help="Recall variants separated by ';' (see parse_variant).")] = "",
    folds: Annotated[
        int, typer.Option(help="Folds (by question) to choose among default + variants.", min=2)
    ] = 5,
    baselines: Annotated[bool, typer.Option(help="Run BM25, MiniLM, fusion and session baselines.")] = True,
    dreamed: Annotated[
        bool, typer.Option(help="Also run dreammem+dream: the same store after one rules dream.")
    ] = False,
    cache: Annotated[Path | None, typer.Option(help="File of vectors kept across runs.")] = DEFAULT_CACHE,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the numbers here.")] = None,
) -> None:
    """Session and turn recall of DreamMem on LongMemEval, beside baselines on the same turns."""
    questions = split_questions(data, split, skip=skip, limit=limit)
    cfg = load_config(config) if config is not None else DreamMemConfig()
    embedder = DiskCachedEmbedder(NumpyBertEmbedder(), cache)
    dream = DreamMemHaystack(cfg, embedder)
    methods: list[LmeMethod] = []
    if baselines:
        bm25, minilm = BM25Turns(), MiniLMTurns(embedder)
        methods += [bm25, minilm, FusionTurns(bm25, minilm), MiniLMSessions(embedder)]
    methods.append(dream)
    chosen = parse_variants(variants, cfg.recall)
    named = [name for name, _ in chosen]
    methods += [RecallVariant(dream, recall, name) for name, recall in chosen]
    after_dream = DreamMemHaystack(cfg, embedder, "dreammem+dream", dream=True) if dreamed else None
    methods += [after_dream] if after_dream is not None else []
    start = time.perf_counter()

    def step(number: int) -> None:
        if number % 10 == 0 or number == len(questions):
            console.print(f"... {number}/{len(questions)} questions, {time.perf_counter() - start:.0f} s")

    outcomes = run_lme(questions, methods, on_question=step)
    dream.close()
    if after_dream is not None:
        after_dream.close()
    console.print(_table(f"LongMemEval: {len(questions)} questions ({split}) of {data.name}, k=10", outcomes))
    report: dict[str, object] = {
        "data": str(data),
        "split": split,
        "questions": [q.question_id for q in questions],
        "methods": {n: mean_by_type(o) for n, o in outcomes.items()},
        "seconds": time.perf_counter() - start,
        "encoded": embedder.misses,
        "pinned_hit_questions": sorted(dream.pinned_hits),
    }
    if named:
        folds_table = Table(title=f"{folds} folds by question over dreammem + {', '.join(named)}")
        for column in (
            "metric",
            "held out (pooled)",
            "min/median/max",
            "chosen",
            "each variant, all questions",
        ):
            folds_table.add_column(column)
        chosen_by_folds: dict[str, object] = {}
        report["folds"] = chosen_by_folds
        for metric in _FOLD_METRICS:
            choice = choose_by_folds(outcomes, ["dreammem", *named], metric, folds=folds)
            low, mid, high = choice.spread
            each = ", ".join(f"{v} {s:.3f}" for v, s in choice.per_variant.items())
            folds_table.add_row(
                metric,
                f"{choice.pooled:.3f}",
                f"{low:.3f}/{mid:.3f}/{high:.3f}",
                " ".join(choice.chosen),
                each,
            )
            chosen_by_folds[metric] = {
                "pooled": choice.pooled,
                "held_out": choice.held_out,
                "chosen": choice.chosen,
            }  # type: ignore[index]
        console.print(folds_table)
    console.print(f"{len(dream.pinned_hits)} questions recalled a pinned memory")
    console.print(f"{time.perf_counter() - start:.0f} s, {embedder.misses} texts encoded")
    embedder.close()
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_out}")
