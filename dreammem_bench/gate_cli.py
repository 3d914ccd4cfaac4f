"""The ``dreammem bench gate`` command (registered on the ``bench`` sub-app in :mod:`dreammem.cli`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dreammem.recall.gate import CALIBRATED_FLOORS, MUTUAL_FLOORS, RELATIVE_FLOORS
from dreammem_bench.gate import FloorFold, collect_locomo, leave_one_out, load_absent, spread, zh_folds
from dreammem_bench.locomo import load_locomo
from dreammem_bench.relative_gate import choose, collect
from dreammem_bench.relative_gate import scores as relative_scores
from dreammem_bench.relative_gate import spread as relative_spread
from dreammem_bench.updates import build_conversations, load_suite

__all__ = ["bench_gate", "bench_relative_gate"]

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
    from dreammem.embed.models import E5Embedder  # noqa: PLC0415 - the models load only when the command runs
    from dreammem.embed.numpy_bert import NumpyBertEmbedder  # noqa: PLC0415 - the models load only when the command runs

    absent = load_absent()
    minilm = NumpyBertEmbedder()
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


def _mutual(m: float | None) -> str:
    return "off" if m is None else f"{m:.2f}"


def bench_relative_gate(
    lang: Annotated[str, typer.Option(help="Language of the update suite's conversations (zh, en).")] = "zh",
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the folds as JSON.")] = None,
) -> None:
    """Choose the relative and mutual floors by leave-one-conversation-out on the update suite's dev split."""
    from dreammem.embed.models import E5Embedder  # noqa: PLC0415 - the models load only when the command runs
    from dreammem.embed.numpy_bert import NumpyBertEmbedder  # noqa: PLC0415 - the models load only when the command runs

    embedder = E5Embedder() if lang == "zh" else NumpyBertEmbedder()
    convs = [c for c in build_conversations(load_suite()) if c.lang == lang]
    questions = collect(convs, embedder)
    report: dict[str, object] = {"lang": lang}
    floor = CALIBRATED_FLOORS.get(embedder.name, -1.0)
    for both in (False, True):
        folds = choose(questions, embedder.name, mutual=both)
        what = "relative and mutual floors" if both else "relative floor alone"
        table = Table(title=f"{embedder.name}: {what}, leave one {lang} dev conversation out")
        for column in (
            "held out",
            "z chosen",
            "mutual chosen",
            "precision",
            "coverage",
            "unrelated injection",
        ):
            table.add_column(column, justify="right")
        for fold in folds:
            found = fold.found
            cells = [f"{found[m]:.3f}" if m in found else "-" for m in ("precision", "coverage", "injection")]
            table.add_row(fold.held_out, f"{fold.z:.2f}", _mutual(fold.mutual), *cells)
        mutuals = [f.mutual for f in folds if f.mutual is not None]
        table.add_row(
            "mean (min-max)",
            relative_spread([f.z for f in folds]),
            relative_spread(mutuals) if mutuals else "off",
            *(
                relative_spread([f.found[m] for f in folds if m in f.found])
                for m in ("precision", "coverage", "injection")
            ),
        )
        console.print(table)
        report["both" if both else "relative"] = [dataclasses.asdict(f) for f in folds]
    shipped_z, shipped_m = RELATIVE_FLOORS.get(embedder.name), MUTUAL_FLOORS.get(embedder.name)
    if shipped_z is not None:
        for split in ("dev", "held"):
            part = [q for q in questions if q.split == split]
            for m in (None, shipped_m):
                found = relative_scores(part, shipped_z, floor, m)
                console.print(f"{split} split, z {shipped_z:.2f}, mutual {_mutual(m)}: {found}")
    console.print(f"shipped relative floors: {dict(RELATIVE_FLOORS)}; mutual floors: {dict(MUTUAL_FLOORS)}")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
