"""``dreammem dream``: run, inspect and undo dreams.

::

    dreammem dream --user U [--dry-run] [--level 2] [--llm PROVIDER:MODEL] [--json]
    dreammem dream undo DREAM_ID [--user U]
    dreammem dream log --user U
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dreammem.cli_common import (
    CliConsole,
    ConfigOpt,
    LLMOpt,
    PathOpt,
    open_store,
    require_user,
    resolve_dream_id,
)
from dreammem.cli_progress import progress_bar
from dreammem.dream.report import DreamReport
from dreammem.llm import configured_llm

__all__ = ["dream_app", "print_report"]

console = CliConsole()
dream_app = typer.Typer(
    help="Consolidate a user's short-term memory (or undo / list dreams).", invoke_without_command=True
)

_CONTENT_CHARS = 70
_COUNT_COLUMNS = (
    "queued",
    "kept",
    "compressed",
    "merged",
    "migrated",
    "superseded",
    "archived",
    "guard_kept",
)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _CONTENT_CHARS else flat[: _CONTENT_CHARS - 1] + "…"


def print_report(report: DreamReport) -> None:
    """Render a dream report: counts, then every record it touched."""
    title = (
        f"dream {report.dream_id} (level {report.level}, {report.mode}"
        f"{', DRY RUN: nothing written' if report.dry_run else ''})"
    )
    counts = Table(title=title)
    for key in _COUNT_COLUMNS:
        counts.add_column(key.replace("_", " "), justify="right")
    c = report.counts
    counts.add_row(*(str(c[key]) for key in _COUNT_COLUMNS))
    console.print(counts)
    console.print(
        f"new records: {c['new_records']} ({c['patterns']} patterns, {c['summaries']} summaries)  "
        f"LLM: {c['llm_calls']} calls, {c['llm_tokens']} tokens  time: {report.duration_seconds:.3f}s  "
        f"trigger: {report.trigger}"
    )
    details = Table(show_lines=False)
    for column in ("action", "id", "detail"):
        details.add_column(column, overflow="fold", no_wrap=column == "id")
    for made in report.distilled:
        label = f"new {made.kind}" + ("" if made.status == "active" else f" ({made.status})")
        detail = f"{_short(made.content)}  <- {len(made.sources)} records"
        details.add_row(label, made.id[:12], escape(detail))
    for record_id in report.kept:
        details.add_row("kept", record_id[:12], "")
    for name in ("migrated", "superseded", "merged", "archived"):
        for change in getattr(report, name):
            target = f" -> {change.to[:12]}" if change.to else ""
            details.add_row(name, change.id[:12], escape(f"{change.reason}{target}"))
    for kept in report.guard_kept:
        detail = f"{kept.stage} would lose {list(kept.missing)}"
        details.add_row("guard kept", kept.record_id[:12], escape(detail))
    if details.row_count:
        console.print(details)
    for note in report.degraded:
        console.print(f"[yellow]degraded:[/yellow] {escape(note)}")


@dream_app.callback()
def dream(
    ctx: typer.Context,
    user: Annotated[str | None, typer.Option("--user", "-u", help="The user id (scope).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Compute the report, write nothing.")] = False,
    level: Annotated[int, typer.Option(help="1: consolidate the queue; 2: long-term housekeeping.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    llm: LLMOpt = None,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Dream now for one user and print the report."""
    if ctx.invoked_subcommand is not None:
        return
    if user is None:
        raise typer.BadParameter("--user is required", param_hint="--user")
    with open_store(path, config) as memory:
        memory.llm = configured_llm(memory.config.llm, llm)
        with progress_bar(f"dreaming for {user}", None):
            report = memory.dream(user_id=user, dry_run=dry_run, level=level)
    if as_json:
        console.print_json(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print_report(report)


@dream_app.command()
def undo(
    dream_id: str,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="The dream's user (looked up if omitted).")
    ] = None,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Restore the state before a dream (undo newer dreams first); DREAM_ID may be a unique prefix."""
    with open_store(path, config) as memory:
        dream_id, owner = resolve_dream_id(memory, dream_id, user)
        result = memory.undo_dream(dream_id, user_id=owner)
    console.print(
        f"undid {result.dream_id}: {len(result.deleted)} records deleted, {len(result.restored)} restored, "
        f"{result.requeued} queued again"
    )
    if result.skipped:
        console.print(f"[yellow]left as they are (changed since the dream):[/yellow] {list(result.skipped)}")


@dream_app.command("log")
def log_(
    user: Annotated[str, typer.Option("--user", "-u", help="The user id (scope).")],
    limit: Annotated[int, typer.Option(help="How many dreams.")] = 20,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """List a user's dreams, newest first."""
    with open_store(path, config) as memory:
        reports = memory.dreams(user_id=require_user(memory, user), limit=limit)
    table = Table(title=f"dreams of {user}")
    for column in ("dream id", "level", "finished", "trigger", "mode", "queued", "new", "archived"):
        table.add_column(column, no_wrap=column == "dream id")
    for r in reports:
        c = r.counts
        table.add_row(
            r.dream_id,
            str(r.level),
            r.finished_at[:19],
            r.trigger,
            r.mode,
            str(c["queued"]),
            str(c["new_records"]),
            str(c["archived"]),
        )
    console.print(table)
