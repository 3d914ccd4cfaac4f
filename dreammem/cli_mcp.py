"""``dreammem mcp``: serve a store to MCP hosts (Claude Desktop, Cursor, IDE agents).

::

    dreammem mcp --user U [--path P] [--config C] [--llm PROVIDER:MODEL]          (stdio)
    dreammem mcp --transport http [--host H] [--port N] --tokens FILE              (one user per token)
    dreammem mcp --transport http --user U                                         (loopback only)

Over stdio the host starts the server and it serves one user. Over streamable HTTP it
serves the user each bearer token is bound to (``--tokens`` or ``[mcp]`` in the config),
or one user on a loopback address. The server lives in :mod:`dreammem.mcp_server`,
imported when the command runs: without the ``mcp`` extra the command says what to
install. The store is created if there is none, as ``dreammem add`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from dreammem.cli_common import ConfigOpt, LLMOpt, PathOpt, open_store
from dreammem.llm import configured_llm

__all__ = ["INSTALL_HINT", "mcp_command"]

INSTALL_HINT = "pip install 'dreammem[mcp]'"
"""How to install the MCP SDK."""


def mcp_command(
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="The one user served (default: mcp.user of --config).")
    ] = None,
    transport: Annotated[
        Literal["stdio", "http"], typer.Option(help="stdio (a host starts the server) or http (streamable).")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP: the address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP: the port to listen on.")] = 8000,
    tokens: Annotated[
        Path | None,
        typer.Option(
            "--tokens",
            help="HTTP: a TOML/JSON file of bearer token = user id (default: mcp.tokens_file of --config).",
        ),
    ] = None,
    llm: LLMOpt = None,
    path: PathOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve a store's memory as MCP tools over stdio or streamable HTTP (see docs/guides/mcp.md)."""
    try:
        from dreammem import mcp_server  # noqa: PLC0415 - the mcp extra is optional
    except ImportError as exc:
        typer.echo(f"error: `dreammem mcp` needs the MCP SDK: {INSTALL_HINT} ({exc})", err=True)
        raise typer.Exit(1) from exc
    with open_store(path, config, create=True) as memory:
        users = mcp_server.binding_for(memory.config.mcp, http=transport == "http", user=user, tokens=tokens)
        memory.llm = configured_llm(memory.config.llm, llm)
        server = mcp_server.build_server(memory, users, host=host, port=port)
        if transport == "stdio":
            mcp_server.run_stdio(server)
        else:
            mcp_server.run_http(server, users, host=host, port=port)
