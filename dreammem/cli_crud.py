"""``dreammem list | history | export | import | purge``: page through, move and erase memories.

::

    dreammem list --user U [--layer L] [--status S|all] [--limit N] [--offset N] [--json]
    dreammem history MEMORY_ID --user U [--json]       (ids may be unique prefixes)
    dreammem export --user U [--out FILE]
    dreammem import FILE --user U
    dreammem purge (MEMORY_ID | --all) --user U [--dry-run] [--yes]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dreammem.cli_common import (
    CliConsole,
    ConfigOpt,
    PathOpt,
    UserOpt,
    open_store,
    require_user,
    resolve_memory_id,
)
from dreammem.errors import ValidationError
from dreammem.types import MemoryRecord

__all__ = ["export_command", "history_command", "import_command", "list_command", "purge_command"]

console = CliConsole()
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _table(title: str, records: list[MemoryRecord], twins: dict[str, str]) -> Table:
    table = Table(title=title)
    for column in ("id", "layer/kind", "status", "event time", "content", "twin of"):
        table.add_column(column, overflow="fold", no_wrap=column in ("id", "twin of"))
    for record in records:
        table.add_row(
            record.id,
            f"{record.layer.value}/{record.kind.value}",
            record.status.value,
            record.event_time.strftime("%Y-%m-%d %H:%M"),
            escape(record.content),
            twins.get(record.id, ""),
        )
    return table


def list_command(
    user: UserOpt,
    layer: Annotated[str | None, typer.Option(help="Only this layer.")] = None,
    status: Annotated[str, typer.Option(help="Only this status, or 'all'.")] = "active",
    limit: Annotated[int, typer.Option(help="Page size (1-10000).")] = 20,
    offset: Annotated[int, typer.Option(help="Skip this many (the next page's offset).")] = 0,
    as_json: JsonOpt = False,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """List a user's memories, newest first, a page at a time; twins are marked."""
    with open_store(path, config) as memory:
        page = memory.get_all(
            user_id=require_user(memory, user), layer=layer, status=status, limit=limit, offset=offset
        )
    if as_json:
        out = {
            "records": [r.to_dict() for r in page],
            "twins": page.twins,
            "next_offset": page.next_offset,
        }
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    console.print(_table(f"memories of {user!r}", list(page), page.twins))
    if page.next_offset is not None:
        console.print(f"next page: --offset {page.next_offset}")


def history_command(
    memory_id: str, user: UserOpt, as_json: JsonOpt = False, path: PathOpt = None, config: ConfigOpt = None
) -> None:
    """Every version of a memory, oldest first (edits, superseded values)."""
    with open_store(path, config) as memory:
        chain = memory.history(resolve_memory_id(memory, memory_id, user), user_id=user)
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in chain], ensure_ascii=False))
        return
    console.print(_table(f"history of {memory_id}", chain, {}))


def export_command(
    user: UserOpt,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here (default: stdout).")] = None,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Export a user's memory as JSON Lines (every field, history, queue, task state)."""
    with open_store(path, config) as memory:
        text = memory.export(user_id=require_user(memory, user))
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"cannot write {out}: {exc}") from exc
    typer.echo(f"exported {text.count(chr(10)) - 1} lines to {out}")


def import_command(file: Path, user: UserOpt, path: PathOpt = None, config: ConfigOpt = None) -> None:
    """Import an export file as this user's memory (records already there are skipped)."""
    with open_store(path, config, create=True) as memory:
        result = memory.import_(file, user_id=user)
    typer.echo(
        f"imported {result.imported} records ({result.skipped} already there), "
        f"{result.task_states} task states"
    )


def purge_command(
    user: UserOpt,
    memory_id: Annotated[str | None, typer.Argument(help="The memory to erase.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Erase everything of the user.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would be erased.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Erase a memory (with its twin, history and what was derived from it), or a whole user.

    Irreversible, unlike ``forget``: the content leaves every file of the store.
    """
    if (memory_id is None) == (not everything):
        raise ValidationError("give a MEMORY_ID or --all (not both)")
    with open_store(path, config) as memory:
        require_user(memory, user)
        if memory_id is not None:
            memory_id = resolve_memory_id(memory, memory_id, user)
        preview = memory.purge(memory_id, user_id=user, dry_run=True)
        if dry_run or not preview.purged:
            typer.echo(f"would erase {len(preview.purged)} records: {', '.join(preview.purged)}")
            return
        if not yes:
            typer.confirm(f"erase {len(preview.purged)} records of {user!r} for good?", abort=True)
        result = memory.purge(memory_id, user_id=user)
    typer.echo(
        f"erased {len(result.purged)} records; dream-log entries cleaned: {result.dreams_scrubbed}; "
        f"graph removals pending: {result.graph_pending}; file compacted: {result.compacted}"
    )
