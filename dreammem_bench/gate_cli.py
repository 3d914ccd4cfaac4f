"""The ``dreammem bench gate`` command (registered on the ``bench`` sub-app in :mod:`dreammem.cli`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dreammem.recall.gate import CALIBRATED_FLOORS
from dreammem_bench.gate import FloorFold, collect_locomo, leave_one_out, load_absent, spread, zh_folds
from dreammem_bench.locomo import load_locomo

__all__ = ["bench_gate"]

console = Console(stderr=True)


def _table(title: str, folds: list[FloorFold], what: str) -> Table:
    table = Table(title=title)
    for column in ("held out", "floor chosen", f"{what} no floor", f"{what} with floor", "absent injected"):
        table.add_column(column, justify="right")
    for f in folds:
        table.add_row(
            f.held_out,
            f"{f.floor:.3f}",
            f"{f.hit5_without:.3f}",
            f"{f.hit5_with:.3f}",
            f"{f.absent_injected:.3f}",
        )
    table.add_row(
        "mean (min-max)",
        spread([f.floor for f in folds]),
        spread([f.hit5_without for f in folds]),
        spread([f.hit5_with for f in folds]),
        spread([f.absent_injected for f in folds]),
    )
    return table


def bench_gate(
    data: Annotated[Path, typer.Option(help="A LoCoMo JSON file (English calibration).")],
    tolerance: Annotated[float, typer.Option(help="hit@5 a floor may cost on the training folds.")] = 0.002,
    keep: Annotated[float, typer.Option(help="Chinese: share of own memories a floor must keep.")] = 0.95,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the folds as JSON.")] = None,
) -> None:
    """Calibrate the recall relevance floor: leave-one-conversation-out (MiniLM), 5 folds (e5)."""
    from dreammem.embed.models import E5Embedder, SentenceTransformerEmbedder  # noqa: PLC0415 - loads torch only when the command runs

    absent = load_absent()
    minilm = SentenceTransformerEmbedder()
    queries = collect_locomo(load_locomo(data), absent["en"], embedder=minilm)
    english = leave_one_out(queries, tolerance=tolerance)
    chinese = zh_folds(E5Embedder(), keep=keep)
    console.print(_table(f"{minilm.name}: LoCoMo hit@5 and absent-topic injection", english, "hit@5"))
    console.print(_table("multilingual-e5-small: shipped Chinese pairs", chinese, "own kept"))
    console.print(f"shipped floors: {dict(CALIBRATED_FLOORS)}")
    if json_out is not None:
        report = {
            "english": [dataclasses.asdict(f) for f in english],
            "chinese": [dataclasses.asdict(f) for f in chinese],
            "tolerance": tolerance,
            "keep": keep,
            "shipped": dict(CALIBRATED_FLOORS),
        }
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
