"""The ``dreammem bench dream`` command: dream quality and speed on synthetic streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dreammem_bench.dream import METRIC_KEYS, run_benchmark, summary_rows

__all__ = ["bench_dream"]

console = Console()


def bench_dream(
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write {rules, scripted_llm} metrics here.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Stream seed.")] = 0,
    dreams: Annotated[int, typer.Option(help="Dreams (batches) per stream.")] = 10,
    per_dream: Annotated[int, typer.Option(help="Turns per dream.")] = 200,
) -> None:
    """Dream benchmark: synthetic English and Chinese streams, real MiniLM; rules, scripted LLM, no dream."""
    result = run_benchmark(seed=seed, batches=dreams, per_batch=per_dream, progress=console.log)
    table = Table(title=f"dream benchmark: {dreams} dreams x {per_dream} turns per language, seed {seed}")
    columns = ["mode", "language", *METRIC_KEYS, "dream_cpu_seconds", "active", "guard_kept", "llm_rejected"]
    for column in columns:
        table.add_column(column.replace("_", " "), justify="right")
    rows = summary_rows(result)
    for mode in ("rules", "scripted_llm", "no_dream"):
        rows.append({"mode": mode, "language": "all", **result.metrics(mode)})
    for row in rows:
        table.add_row(*(str(row.get(c, "")) for c in columns))
    console.print(table)
    console.print(
        "targets: constraint_survival 1.0, newest_wins 1.0, compression 8-12, invented_numbers 0, "
        f"llm_calls_per_200 <= 12, dream_seconds_200 <= 1 (rules); total {result.seconds:.1f}s"
    )
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_json(), indent=2))
        console.print(f"wrote {json_out}")
