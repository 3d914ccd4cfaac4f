"""``dreammem bench moves``: people who move often (see :mod:`dreammem_bench.moves`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dreammem.embed.models import resolve_embedder
from dreammem_bench.moves import run_moves

__all__ = ["bench_moves"]

console = Console(width=160)


def bench_moves(
    memories: Annotated[int, typer.Option(help="Turns in each store.", min=100)] = 3000,
    seeds: Annotated[str, typer.Option(help="One store per seed, comma-separated.")] = "7,8,9",
    embedder: Annotated[str, typer.Option(help="Embedder (minilm, e5, a name or path).")] = "minilm",
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the numbers here.")] = None,
) -> None:
    """Who moved to a place, where someone lives now: DreamMem beside a plain vector top 10."""
    try:
        picked = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        raise typer.BadParameter(f"seeds must be whole numbers, got {seeds!r}") from None
    if not picked:
        raise typer.BadParameter("give at least one seed")
    model = resolve_embedder(embedder)
    results = run_moves(model, memories=memories, seeds=picked, on_step=lambda s: console.print(f"... {s}"))
    table = Table(title=f"moves: {len(picked)} store(s) of {memories} turns, {model.name}, top 10")
    for column in ("system", "found@10 (who moved to P)", "current@3 (where does N live)", "pulled@10", "n"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for r in results:
        cells = (f"{r.found_at_10:.3f}", f"{r.current_at_3:.3f}", f"{r.pulled_at_10:.2f}", str(r.questions))
        table.add_row(r.system, *cells)
    console.print(table)
    if json_out is not None:
        report = {"memories": memories, "seeds": picked, "embedder": model.name}
        report["systems"] = {r.system: r.to_dict() for r in results}
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_out}")
