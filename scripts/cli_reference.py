"""Render the command-line reference (docs/cli.md) from the ``dreammem`` typer app.

The docs build calls :func:`render` through ``scripts/docs_hooks.py``, so a new command
is on the page the day it is added. ``python scripts/cli_reference.py`` prints it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

from dreammem.cli import app

INTRO = """# Command line

Generated from the `dreammem` command when the docs are built. `python -m dreammem`
works too. The store comes from `--path` (a directory, a `.db` file or a `bolt://` /
`neo4j://` URI), else `$DREAMMEM_PATH`, else `./.dreammem`; only `add`, `import` and
`demo` create one. Ids may be any unique prefix of 4+ characters. An error is one
`error: <Type>: ...` line with exit code 2 (an unknown `--user` included). Piped
output is never wrapped, so ids stay whole for `grep` and `cut`.
"""


def commands(group: Any = None, prefix: str = "dreammem") -> Iterator[tuple[str, Any]]:
    """Every command of the CLI as ``("dreammem dream undo", command)``, depth first.

    Commands are typer's (its own vendored click), so groups are told by ``list_commands``.
    """
    group = group or typer.main.get_group(app)
    ctx = group.context_class(group, info_name=prefix)
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}"
        yield path, command
        if hasattr(command, "list_commands"):
            yield from commands(command, path)


def _options(command: Any, ctx: Any) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or param.name == "help":
            continue
        name, text = record
        rows.append(f"| `{name}` | {' '.join(text.split()).replace('|', '/')} |")
    return rows


def render() -> str:
    """The whole page as Markdown."""
    parts = [INTRO]
    for path, command in commands():
        ctx = command.context_class(command, info_name=path)
        usage = command.get_usage(ctx).removeprefix("Usage:").strip()
        usage = re.sub(r"\{(\w+)\}", lambda m: m.group(1).upper(), usage)  # typer's {memory_id}
        summary = (command.help or command.short_help or "").strip().split("\n\n")[0]
        parts.append(f"## `{path}`\n\n{' '.join(summary.split())}\n\n```text\n{usage}\n```\n")
        options = _options(command, ctx)
        if options:
            parts.append("| option | what it does |\n|---|---|\n" + "\n".join(options) + "\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(render())
