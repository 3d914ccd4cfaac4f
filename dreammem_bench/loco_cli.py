"""``dreammem bench locomo --loco``: the leave-one-conversation-out fold protocol, as a table and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.recall.pipeline import Reranker
from dreammem_bench.loco import DEFAULT_GRID, FusionSetting, fold_rows, run_loco
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import DreamMemMethod

__all__ = ["loco_table", "run_loco_command"]

_COLUMNS = ("held out", "chosen", "train hit@5", "hit@5", "MRR", "default hit@5", "default MRR", "n")


def loco_table(rows: list[dict[str, Any]], *, settings: int) -> Table:
    """Held-out numbers per fold (tuned on the other conversations) beside the shipped default."""
    table = Table(title=f"LoCoMo leave-one-conversation-out: fusion chosen among {settings} settings")
    for column in _COLUMNS:
        table.add_column(column, justify="left" if column in {"held out", "chosen"} else "right")
    for row in rows:
        cells = [row.get(c, "") for c in _COLUMNS]
        table.add_row(*(f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells))
    return table


def run_loco_command(
    conversations: list[LocomoConversation],
    *,
    config: DreamMemConfig,
    embedder: Embedder,
    reranker: Reranker | None,
    k: int,
    progress: Callable[[int, str], tuple[Callable[[str], None], Callable[[], None]]],
    console: Console,
    report: dict[str, Any],
    json_out: Path | None,
) -> None:
    """Run the fold protocol with the dreammem method, print its table, write the JSON report."""
    method = DreamMemMethod(config, embedder=embedder, reranker=reranker)
    settings = len(DEFAULT_GRID.settings(FusionSetting.of(config.recall)))
    step, done = progress(settings * len(conversations), "loco")
    try:
        result = run_loco(method, conversations, k=k, on_step=step)
    finally:
        done()
        method.close()
    console.print(loco_table(fold_rows(result), settings=len(result.settings)))
    report["loco"] = result.to_dict()
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_out}")
