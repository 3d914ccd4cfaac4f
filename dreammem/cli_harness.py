"""Commands that live in the benchmark harness (:mod:`dreammem_bench`), imported when used.

``dreammem bench ...`` and ``dreammem train-reranker`` come from the harness, which ships in
the same distribution but needs the ``bench`` extra. The core CLI never imports it at
start-up: each harness command is a thin forwarder that imports the harness when it runs
and hands it the rest of the command line; without the extra it fails with a one-line
error that says what to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import typer

__all__ = ["HARNESS_COMMANDS", "INSTALL_HINT", "register_harness"]

HARNESS_COMMANDS = {
    "bench": "Benchmarks: retrieval quality, throughput and latency (dreammem bench --help).",
    "train-reranker": "Fine-tune the offline cross-encoder on LoCoMo-style data or a store's own turns "
    "(--help for options).",
}
"""Top-level command names served by the harness, with their one-line help."""
INSTALL_HINT = "pip install 'dreammem[bench]'"
"""How to install the harness's dependencies."""

# Every argument, --help included, goes to the harness's own parser.
_FORWARD_ALL = {"allow_extra_args": True, "ignore_unknown_options": True}


def register_harness(app: typer.Typer) -> None:
    """Add the harness's commands to ``app`` as forwarders."""
    for name, summary in HARNESS_COMMANDS.items():
        forwarder = _forwarder(name)
        app.command(name, help=summary, context_settings=_FORWARD_ALL, add_help_option=False)(forwarder)


def _forwarder(name: str) -> Callable[[typer.Context], None]:
    def forward(ctx: typer.Context) -> None:
        try:
            harness = importlib.import_module("dreammem_bench.app")
        except ImportError as exc:
            typer.echo(
                f"error: `dreammem {name}` needs the benchmark extra: {INSTALL_HINT} ({exc})", err=True
            )
            raise typer.Exit(1) from exc
        code: int = harness.run(name, list(ctx.args), prog_name=ctx.command_path)
        if code:
            raise typer.Exit(code)

    return forward
