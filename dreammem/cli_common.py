"""What every ``dreammem`` command shares: its options, opening a store, short ids.

A store is opened for writing only by commands that create memories (``add``,
``demo``); every other command refuses a path that holds no store, so a typo in
``--path`` is an error with a hint instead of a new empty store. ``--path`` may
also be a ``bolt://`` or ``neo4j://`` URI: the whole store on a Neo4j server
(credentials from ``--config``'s ``[store]`` section). Ids may be given
as any unique prefix of at least :data:`MIN_PREFIX` characters, as git does. A
``--user`` with no memory in the store is an error, not an empty table
(:func:`require_user`), and piped output is never wrapped (:class:`CliConsole`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, ConsoleDimensions

from dreammem.config import DreamMemConfig, load_config
from dreammem.dream.journal import dream_ids_with_prefix
from dreammem.engine import is_server_uri
from dreammem.errors import ConfigError, NotFoundError, ValidationError
from dreammem.memory import DreamMemory, store_files

__all__ = [
    "MIN_PREFIX",
    "PIPE_WIDTH",
    "CliConsole",
    "ConfigOpt",
    "LLMOpt",
    "PathOpt",
    "UserOpt",
    "open_store",
    "require_user",
    "resolve_dream_id",
    "resolve_memory_id",
    "store_path",
]

PathOpt = Annotated[
    str | None,
    typer.Option(
        "--path",
        "-p",
        help="Store dir, .db file or bolt:// / neo4j:// URI (default $DREAMMEM_PATH or ./.dreammem).",
    ),
]
UserOpt = Annotated[str, typer.Option("--user", "-u", help="The user id (scope).")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="A TOML or JSON config file.")]
LLMOpt = Annotated[
    str | None,
    typer.Option("--llm", help="Dream with this LLM, 'provider:model' (default: llm.model of --config)."),
]

MIN_PREFIX = 4
"""The shortest id prefix accepted (the tables show 12 characters)."""
_FULL_ID = 32
_HEX = re.compile(r"[0-9a-f]+")
PIPE_WIDTH = 10_000
"""The width of output that goes to a pipe or a file: wide enough that no line wraps."""


class CliConsole(Console):
    """A console that wraps nothing when stdout is not a terminal.

    On a terminal it is rich's console (the terminal's width); piped or redirected,
    its width is :data:`PIPE_WIDTH` unless ``$COLUMNS`` says otherwise, so table rows stay
    one line each and ids are never split for ``grep`` or ``cut``.
    """

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size, or :data:`PIPE_WIDTH` columns when piped (``$COLUMNS`` wins)."""
        size = super().size
        if self.is_terminal or os.environ.get("COLUMNS", "").isdigit():
            return size
        return ConsoleDimensions(PIPE_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def store_path(path: str | Path | None) -> str:
    """``--path``, else ``$DREAMMEM_PATH``, else ``./.dreammem``."""
    return str(path) if path else os.environ.get("DREAMMEM_PATH") or ".dreammem"


def open_store(path: str | Path | None, config: Path | None = None, *, create: bool = False) -> DreamMemory:
    """Open the store at ``path``: a folder, a .db file or a Neo4j URI.

    With ``create=False`` a local store must exist already (a server's is opened as is).

    Raises:
        ConfigError: no store there (with a hint), or the path is a file that is not
            a store, or it cannot be created or written.
        GraphUnavailableError: the Neo4j server at the URI cannot be reached.
    """
    cfg = load_config(config) if config else DreamMemConfig()
    if is_server_uri(store_path(path)):
        return DreamMemory(store_path(path), config=cfg)
    target = Path(store_path(path))
    database = store_files(target)[0]
    if target.exists() and not target.is_dir() and target != database:
        raise ConfigError(f"{target} is a file, not a store (give a directory or a .db file)")
    if not create and not database.is_file():
        raise ConfigError(
            f"no store at {target} (expected {database}); check --path or $DREAMMEM_PATH, "
            "or create one with `dreammem add`"
        )
    try:
        return DreamMemory(target, config=cfg)
    except OSError as exc:
        raise ConfigError(f"cannot open a store at {target}: {exc.strerror or exc}") from exc


def require_user(memory: DreamMemory, user_id: str) -> str:
    """``user_id`` if the store holds any record of that user, whatever its status.

    Raises:
        NotFoundError: the store has no memory of that user (a typo in ``--user``
            would otherwise print an empty table).
    """
    if memory.store.count(user_id) == 0:
        raise NotFoundError(
            f"no user {user_id!r} in this store: it holds no memory of that user "
            "(user ids are case-sensitive; `dreammem stats` counts the users)"
        )
    return user_id


def _checked_prefix(given: str, what: str, scope: str) -> str:
    prefix = given.strip().lower()
    if not _HEX.fullmatch(prefix) or len(prefix) > _FULL_ID:
        raise NotFoundError(f"no {what} {given!r}{scope} (ids are 32 hex characters, or a prefix)")
    if len(prefix) < MIN_PREFIX:
        raise ValidationError(f"{what} id prefix {given!r} is too short: need {MIN_PREFIX}+ characters")
    return prefix


def _one(matches: list[str], given: str, what: str, scope: str) -> str:
    if not matches:
        raise NotFoundError(f"no {what} {given!r}{scope}")
    if len(matches) > 1:
        shown = ", ".join(m[:12] for m in matches)
        raise ValidationError(f"{what} id prefix {given!r} is ambiguous ({shown}, ...): give more characters")
    return matches[0]


def resolve_memory_id(memory: DreamMemory, given: str, user_id: str) -> str:
    """The full id of this user's memory that ``given`` is a unique prefix of.

    Raises:
        ValidationError: the prefix is too short, or more than one memory matches.
        NotFoundError: no memory of this user matches (or it is not a hex id).
    """
    scope = f" for user {user_id!r}"
    prefix = _checked_prefix(given, "memory", scope)
    return _one(memory.store.ids_with_prefix(user_id, prefix), given, "memory", scope)


def resolve_dream_id(memory: DreamMemory, given: str, user_id: str | None = None) -> tuple[str, str]:
    """``(dream id, owner)`` of the dream that ``given`` is a unique prefix of.

    Raises:
        ValidationError: the prefix is too short, or more than one dream matches.
        NotFoundError: no dream (of this user, when given) matches (or it is not a hex id).
    """
    scope = "" if user_id is None else f" for user {user_id!r}"
    prefix = _checked_prefix(given, "dream", scope)
    owners = dict(dream_ids_with_prefix(memory.store, prefix))
    if user_id is not None:
        owners = {d: u for d, u in owners.items() if u == user_id}
    dream_id = _one(sorted(owners), given, "dream", scope)
    return dream_id, owners[dream_id]
