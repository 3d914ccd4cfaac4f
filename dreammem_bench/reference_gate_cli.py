"""The ``dreammem bench reference-gate`` command (registered in :mod:`dreammem_bench.app`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dreammem.recall.reference import MINILM_FLOORS, REFERENCE_FLOORS
from dreammem_bench.reference_gate import Asked, choose, collect, scores
from dreammem_bench.updates import build_conversations, load_suite

__all__ = ["bench_reference_gate"]

console = Console(stderr=True)
_SPLITS = {"shipped": ("dev",), "independent": ("indep",)}


def bench_reference_gate(
    lang: Annotated[str, typer.Option(help="Language of the update suites' conversations (en, zh).")] = "en",
    model: Annotated[
        str, typer.Option(help="Embedder: minilm or e5 (default: minilm for en, e5 for zh).")
    ] = "",
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the folds as JSON.")] = None,
) -> None:
    """Choose the reference gate's thresholds by five folds over the update suites' dev parts."""
    from dreammem.embed.models import E5Embedder  # noqa: PLC0415 - the models load only when the command runs
    from dreammem.embed.numpy_bert import NumpyBertEmbedder  # noqa: PLC0415 - the models load only when the command runs

    use_e5 = model == "e5" or (not model and lang == "zh")
    embedder = E5Embedder() if use_e5 else NumpyBertEmbedder()
    questions: list[Asked] = []
    for source, splits in _SPLITS.items():
        for per_user in (6, 2):
            prefix = f"{source}{per_user}-"
            convs = build_conversations(load_suite(source), per_user=per_user, prefix=prefix)
            questions += collect([c for c in convs if c.lang == lang], embedder, splits)
    table = Table(title=f"{embedder.name}, {lang}: five folds by conversation")
    for column in ("fold", "query side", "memory side", "precision", "coverage", "unrelated injection"):
        table.add_column(column, justify="right")
    folds = choose(questions)
    for n, (q, m, found) in enumerate(folds):
        cells = [f"{found[k]:.3f}" if k in found else "-" for k in ("precision", "coverage", "injection")]
        table.add_row(str(n), f"{q:.2f}", f"{m:.2f}", *cells)
    console.print(table)
    shipped = REFERENCE_FLOORS.get(embedder.name, None if use_e5 else MINILM_FLOORS)
    if shipped is not None:
        console.print(f"shipped {shipped}: {scores(questions, shipped.query, shipped.memory)}")
    console.print(f"no gate: {scores(questions, -99.0, -99.0)}")
    if json_out is not None:
        json_out.write_text(json.dumps([{"query": q, "memory": m, **f} for q, m, f in folds], indent=2))
