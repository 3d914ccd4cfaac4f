"""The harness's commands, assembled for :mod:`dreammem.cli` (which imports this module when one runs).

``bench`` is the typer sub-app with every benchmark; ``train-reranker`` fine-tunes the
offline cross-encoder on LoCoMo-style data (it reads LoCoMo through the harness).
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

from dreammem_bench.cli import bench_app
from dreammem_bench.dream_cli import bench_dream
from dreammem_bench.gate_cli import bench_gate, bench_relative_gate
from dreammem_bench.graph_cli import bench_graph
from dreammem_bench.latency_cli import bench_latency
from dreammem_bench.lme_cli import bench_longmemeval
from dreammem_bench.moves_cli import bench_moves
from dreammem_bench.reference_gate_cli import bench_reference_gate
from dreammem_bench.train_cli import train_reranker
from dreammem_bench.updates_cli import bench_updates

__all__ = ["COMMANDS", "run"]

bench_app.command("graph")(bench_graph)
bench_app.command("dream")(bench_dream)
bench_app.command("latency")(bench_latency)
bench_app.command("updates")(bench_updates)
bench_app.command("moves")(bench_moves)
bench_app.command("longmemeval")(bench_longmemeval)
bench_app.command("gate")(bench_gate)
bench_app.command("relative-gate")(bench_relative_gate)
bench_app.command("reference-gate")(bench_reference_gate)
_train_app = typer.Typer(add_completion=False)
_train_app.command("train-reranker")(train_reranker)

COMMANDS = {"bench": bench_app, "train-reranker": _train_app}
"""The top-level commands the harness adds to ``dreammem``."""


def run(name: str, args: Sequence[str], *, prog_name: str) -> int:
    """Run one of :data:`COMMANDS` on ``args``; its exit code (library errors propagate)."""
    command = typer.main.get_command(COMMANDS[name])
    code = command.main(args=list(args), prog_name=prog_name, standalone_mode=False)
    return code if isinstance(code, int) else 0
