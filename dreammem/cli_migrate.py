"""``dreammem migrate SRC DST``: copy a whole store between backends.

::

    dreammem migrate ./.dreammem bolt://127.0.0.1:7687 [--user U ...] [--config FILE]
    dreammem migrate neo4j://db.internal:7687 ./copy

``SRC`` and ``DST`` are store paths (a directory or ``.db`` file) or Neo4j URIs;
credentials and timeouts come from the config file's ``[store]`` section. The
copy is the one of :func:`dreammem.migration.migrate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dreammem.cli_common import ConfigOpt, open_store
from dreammem.config import DreamMemConfig, load_config
from dreammem.engine import is_server_uri
from dreammem.memory import DreamMemory
from dreammem.migration import migrate

__all__ = ["migrate_command"]


def migrate_command(
    source: Annotated[str, typer.Argument(help="The store to copy: a path or a bolt:// / neo4j:// URI.")],
    target: Annotated[str, typer.Argument(help="Where to copy it: a path or a bolt:// / neo4j:// URI.")],
    user: Annotated[
        list[str] | None, typer.Option("--user", "-u", help="Only these users (repeatable).")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Copy every record (history, provenance, queue), task state and dream log."""
    settings = load_config(config) if config else DreamMemConfig()
    with open_store(source, config) as src:
        embedder = src.embedder  # the target embeds with the source's model
        destination: str | Path = target if is_server_uri(target) else Path(target)
        with DreamMemory(destination, config=settings, embedder=embedder) as dst:
            report = migrate(src, dst, user)
    typer.echo(
        f"migrated {report.users} users: {report.records} records ({report.skipped} already there), "
        f"{report.task_states} task states, {report.dreams} dreams"
    )
