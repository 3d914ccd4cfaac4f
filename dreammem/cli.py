"""The ``dreammem`` command line (built on typer; tables by rich).

Commands: ``demo``, ``add``, ``recall``, ``inspect``, ``forget``, ``stats``,
``reindex``, ``dream``; ``list``, ``history``, ``export``, ``import``, ``purge``
(:mod:`dreammem.cli_crud`); ``migrate`` (:mod:`dreammem.cli_migrate`); ``mcp``
(:mod:`dreammem.cli_mcp`); ``bench`` and
``train-reranker`` come from the benchmark harness, imported when used
(:mod:`dreammem.cli_harness`). The store path comes from ``--path`` or ``$DREAMMEM_PATH``
(default ``./.dreammem``); only ``add`` and ``demo`` create a store (see
:mod:`dreammem.cli_common`). Ids may be given as unique prefixes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table

from dreammem import __version__
from dreammem.cli_common import (
    CliConsole,
    ConfigOpt,
    PathOpt,
    UserOpt,
    open_store,
    require_user,
    resolve_memory_id,
)
from dreammem.cli_crud import export_command, history_command, import_command, list_command, purge_command
from dreammem.cli_dream import dream_app
from dreammem.cli_harness import register_harness
from dreammem.cli_mcp import mcp_command
from dreammem.cli_migrate import migrate_command
from dreammem.cli_progress import CountingEmbedder, progress_bar
from dreammem.embed.models import resolve_embedder
from dreammem.errors import DreamMemError
from dreammem.memory import DreamMemory
from dreammem.recall.packing import OUTDATED_TAG
from dreammem.recall.result import RecallResult
from dreammem.types import Status

__all__ = ["app", "main"]

app = typer.Typer(help="DreamMem: long-term memory for LLM agents.", no_args_is_help=True)
console = CliConsole()
app.add_typer(dream_app, name="dream")
register_harness(app)
app.command("list")(list_command)
app.command("history")(history_command)
app.command("export")(export_command)
app.command("import")(import_command)
app.command("purge")(purge_command)
app.command("migrate")(migrate_command)
app.command("mcp")(mcp_command)


def _print_version(value: bool) -> None:
    if value:
        console.print(f"dreammem {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """DreamMem: long-term memory for LLM agents."""


def print_result(result: RecallResult) -> None:
    """Render a recall result as a table with its trace."""
    table = Table(title=f"recall: {result.query!r}", show_lines=False)
    for column in ("#", "score", "paths (rank)", "layer", "content", "trace id"):
        table.add_column(column, overflow="fold", no_wrap=column == "trace id")
    for n, hit in enumerate(result, 1):
        ranks = ", ".join(f"{p}#{r}" for p, r in hit.ranks.items()) or ",".join(hit.paths)
        label = ("📌 " if hit.record.pinned else "") + hit.record.layer.value
        content = escape(("[" + OUTDATED_TAG + "] " if hit.outdated_by else "") + hit.record.content)
        table.add_row(str(n), f"{hit.score:.4f}", ranks, label, content, hit.record.id[:12])
    console.print(table)
    if result.degraded:
        console.print(f"[yellow]degraded paths: {dict(result.degraded)}[/yellow]")


@app.command()
def add(
    content: str,
    user: UserOpt,
    session: Annotated[str | None, typer.Option(help="Session id.")] = None,
    role: Annotated[str, typer.Option(help="user, assistant, tool or system.")] = "user",
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Store one turn (creates the store if there is none)."""
    with open_store(path, config, create=True) as memory:
        record = memory.add(content, user_id=user, session_id=session, role=role)
        console.print(f"stored {record.id} ({record.layer.value}/{record.kind.value})")


@app.command()
def recall(
    query: str,
    user: UserOpt,
    k: Annotated[int, typer.Option(help="How many hits.")] = 5,
    path: PathOpt = None,
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON traces.")] = False,
) -> None:
    """Recall memories for a query, with the trace of every hit."""
    with open_store(path, config) as memory:
        result = memory.recall(query, user_id=require_user(memory, user), k=k)
        if as_json:
            out = [{**h.trace(), "content": h.record.content} for h in result]
            console.print_json(json.dumps(out, ensure_ascii=False))
        else:
            print_result(result)


@app.command()
def inspect(memory_id: str, user: UserOpt, path: PathOpt = None, config: ConfigOpt = None) -> None:
    """Show one record and its history (MEMORY_ID: the full id or a unique prefix)."""
    with open_store(path, config) as memory:
        memory_id = resolve_memory_id(memory, memory_id, user)
        record = memory.get(memory_id, user_id=user)
        console.print_json(json.dumps(record.to_dict(), ensure_ascii=False))
        chain = memory.history(memory_id, user_id=user)
        if len(chain) > 1:
            console.print("history (oldest first):")
            for item in chain:
                console.print(f"  {item.id[:12]} {item.status.value:<10} {escape(item.content)}")


@app.command()
def forget(memory_id: str, user: UserOpt, path: PathOpt = None, config: ConfigOpt = None) -> None:
    """Soft-delete a record (kept for audit, out of recall); MEMORY_ID may be a unique prefix."""
    with open_store(path, config) as memory:
        record = memory.forget(resolve_memory_id(memory, memory_id, user), user_id=user)
        console.print(f"{record.id} is now {record.status.value}")


@app.command()
def stats(
    user: Annotated[str | None, typer.Option("--user", "-u", help="One user only.")] = None,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Counts by status, the embedding model, the queue."""
    with open_store(path, config) as memory:
        if user is not None:
            require_user(memory, user)
        console.print_json(json.dumps(memory.stats(user_id=user)))


@app.command()
def reindex(
    path: PathOpt = None,
    config: ConfigOpt = None,
    model: Annotated[str | None, typer.Option(help="Re-embed everything with this model.")] = None,
    graph: Annotated[bool, typer.Option("--graph", help="Rebuild only the graph.")] = False,
) -> None:
    """Rebuild the vector index (and graph) from SQLite, the source of truth."""
    with open_store(path, config) as memory:
        if graph:
            with progress_bar("rebuilding the graph", None):
                count = memory.reindex_graph()
            console.print_json(json.dumps({"graph_records": count}))
            return
        if model is None:
            with progress_bar("rebuilding the indexes", None):
                counts = memory.reindex()
        else:
            embedder = resolve_embedder(model)
            # A new model re-embeds every active record (the stored vectors are dropped).
            total = memory.store.count(status=Status.ACTIVE)
            with progress_bar(f"re-embedding with {embedder.name}", total) as advance:
                counts = memory.reindex(embedder=CountingEmbedder(embedder, advance))
        console.print_json(json.dumps(counts))


DEMO_SESSIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "monday",
        (
            ("user", "Hi! I'm Mia, I run the data team at Northwind."),
            ("user", "Remember: our Q3 analytics budget must not exceed 50,000 USD."),
            ("user", "I prefer Excel reports over PDF, please."),
            ("assistant", "Noted: Excel reports, and a 50,000 USD cap for Q3."),
            ("user", "Order #48213 for the new GPU server was placed today."),
            ("user", "My manager is Tom Becker; he signs off anything above 10k."),
        ),
    ),
    (
        "wednesday",
        (
            ("user", "The vendor says order #48213 ships on 2024-07-15."),
            ("user", "Tom Becker wants the pipeline migrated to the open-source stack only."),
            ("user", "Actually, my favorite report format is now CSV, Excel is too slow."),
            ("tool", "ERROR: dashboard export timed out after 30s"),
        ),
    ),
)
DEMO_QUESTIONS = (
    "How much can we spend on analytics this quarter?",
    "When does the GPU server arrive?",
    "Who approves large purchases?",
    "Which report format should I send?",
)


@app.command()
def demo(
    path: PathOpt = None,
    keep: Annotated[bool, typer.Option(help="Keep the temporary demo store (with no --path).")] = False,
) -> None:
    """Run a scripted two-session conversation on the embedded store and show recall."""
    target = Path(path) if path else Path(tempfile.mkdtemp(prefix="dreammem-demo-"))
    try:
        _demo(target)
    finally:
        if path is None and not keep:
            shutil.rmtree(target, ignore_errors=True)
    if path is None and keep:
        console.print(f"[dim]demo store kept at {target}[/dim]")


def _rule(title: str) -> None:
    """A rule across the terminal (at most 100 columns when piped, where the console is unbounded)."""
    console.print(Rule(title), width=min(console.width, 100))


def _demo(target: Path) -> None:
    _rule("[bold]DreamMem demo[/bold]: embedded store, real MiniLM embeddings, no server, no key")
    console.print(f"store: {target}")
    start = datetime(2024, 7, 1, 9, 0, tzinfo=UTC)
    for day, (session, turns) in enumerate(DEMO_SESSIONS):
        with DreamMemory(target) as memory:
            _rule(f"session {session!r}")
            for n, (role, text) in enumerate(turns):
                record = memory.add(
                    text,
                    user_id="mia",
                    session_id=session,
                    role=role,
                    event_time=start + timedelta(days=2 * day, minutes=n),
                )
                console.print(f"  {role:>9}: {escape(text)}  [dim]-> {record.id[:12]}[/dim]")
        console.print("[dim]  (store closed)[/dim]")
    with DreamMemory(target) as memory:
        _rule("reopened: what does DreamMem recall?")
        memory.add("I like long walks with my dog Rex.", user_id="someone-else")
        for question in DEMO_QUESTIONS:
            print_result(memory.recall(question, user_id="mia", k=3))
        for record in memory.get_all(user_id="mia", layer="semantic", status="superseded"):
            chain = memory.history(record.id, user_id="mia")
            console.print(
                "history of a changed preference: "
                + " -> ".join(escape(f"{r.content!r} [{r.status.value}]") for r in chain if r.slot)
            )
        console.print(f"stats for mia: {memory.stats(user_id='mia')}")
        other = memory.recall("dog", user_id="mia", k=3)
        leaked = any("Rex" in h.record.content for h in other)
        console.print(f"isolation: recall 'dog' for mia finds someone-else's memory: {leaked}")


def main() -> None:
    """Entry point: run the CLI, turning library errors into one ``error:`` line and exit code 2."""
    try:
        app()
    except DreamMemError as exc:
        console.print(f"[red]error:[/red] {type(exc).__name__}: {escape(str(exc))}", soft_wrap=True)
        raise SystemExit(2) from exc


if __name__ == "__main__":  # `python -m dreammem.cli ...`
    main()
