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
from dreammem.errors import ConfigError
from dreammem.recall.pipeline import Reranker
from dreammem_bench.levers import (
    LEVERS,
    LeverRun,
    family_row,
    lever_settings,
    other_depths,
    run_levers,
    setup_levers,
    with_second_model,
)
from dreammem_bench.loco import DEFAULT_GRID, FusionSetting, fold_rows, run_loco
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import DreamMemMethod

__all__ = ["lever_table", "loco_table", "parse_depths", "parse_levers", "run_loco_command"]

Levers = tuple[tuple[str, ...], tuple[float, ...]]
"""Lever names and the weights tried for each."""

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


def parse_levers(levers: str | None, weights: str) -> Levers | None:
    """``--levers`` and ``--lever-weights`` as names and weights (None: no levers).

    Raises:
        ConfigError: an unknown lever, a weight that is not a number >= 0, or no weight above 0.
    """
    if levers is None:
        return None
    names = tuple(dict.fromkeys(n.strip() for n in levers.split(",") if n.strip()))
    unknown = sorted(set(names) - set(LEVERS))
    if not names or unknown:
        raise ConfigError(f"--levers: unknown {unknown or 'none given'}; known: {', '.join(LEVERS)}")
    try:
        values = tuple(dict.fromkeys(float(w) for w in weights.split(",") if w.strip()))
    except ValueError as exc:
        raise ConfigError(f"--lever-weights: not numbers: {weights!r}") from exc
    if any(v < 0 for v in values) or not any(v > 0 for v in values):
        raise ConfigError("--lever-weights: numbers >= 0, at least one above 0")
    return names, (0.0, *sorted(v for v in values if v > 0))


def parse_depths(depths: str | None) -> tuple[int, ...]:
    """``--depths`` as candidates-per-path values (empty: only the configuration's).

    Raises:
        ConfigError: a value that is not a whole number >= 1.
    """
    if depths is None:
        return ()
    try:
        values = tuple(dict.fromkeys(int(d) for d in depths.split(",") if d.strip()))
    except ValueError as exc:
        raise ConfigError(f"--depths: not whole numbers: {depths!r}") from exc
    if not values or any(v < 1 for v in values):
        raise ConfigError("--depths: whole numbers >= 1, at least one")
    return values


def lever_table(run: LeverRun) -> Table:
    """Pooled held-out numbers per lever family beside the all-off setting, and the fold spread."""
    table = Table(title=f"LoCoMo leave-one-conversation-out: levers, {len(run.settings)} settings scored")
    columns = ("family", "hit@5", "MRR", "hit@1", "base hit@5", "base MRR", "1 / 2 / 3 / 4 hit@5")
    for column in (*columns, "fold min / med / max", "fold minus base"):
        table.add_column(column, justify="left" if column == "family" else "right")
    for name, result in run.results.items():
        row = family_row(name, result)
        categories = " / ".join(f"{v:.3f}" for v in row["by category hit@5"].values())
        spread = row["fold hit@5"]
        table.add_row(
            name,
            *(f"{row[c]:.3f}" for c in ("hit@5", "mrr", "hit@1", "baseline hit@5", "baseline mrr")),
            categories,
            f"{spread['min']:.3f} / {spread['median']:.3f} / {spread['max']:.3f}",
            " ".join(f"{d:+.3f}" for d in row["fold hit@5 minus baseline"]),
        )
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
    levers: Levers | None = None,
    depths: tuple[int, ...] = (),
) -> None:
    """Run the fold protocol with the dreammem method, print its table, write the JSON report.

    With ``levers``, the lever settings are scored instead of the fusion grid, at each
    of ``depths`` too (candidates per path, beside the configuration's).
    """
    if levers is not None and len(conversations) < 2:
        raise ConfigError("--loco needs at least two conversations")
    if levers is not None:
        config = with_second_model(config, levers[0])  # the e5 lever: the store keeps a second index
    method = DreamMemMethod(config, embedder=embedder, reranker=reranker)
    if levers is None:
        settings = len(DEFAULT_GRID.settings(FusionSetting.of(config.recall)))
    else:
        tried = other_depths(config.recall.candidates_per_path, depths)
        settings = len(lever_settings(*levers)) * len(tried)
    step, done = progress(settings * len(conversations), "loco")
    try:
        if levers is None:
            result = run_loco(method, conversations, k=k, on_step=step)
        else:
            names, weights = levers
            setup = setup_levers(names, method=method)
            run = run_levers(
                method, conversations, names, weights=weights, depths=depths, setup=setup, k=k, on_step=step
            )
    finally:
        done()
        method.close()
    if levers is None:
        console.print(loco_table(fold_rows(result), settings=len(result.settings)))
        report["loco"] = result.to_dict()
    else:
        console.print(lever_table(run))
        report["levers"] = run.to_dict()
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_out}")
