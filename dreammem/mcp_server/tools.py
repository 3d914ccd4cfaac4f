"""The MCP tools over one :class:`~dreammem.DreamMemory`: each a thin call of its public API.

Every tool acts for the user of the call (:class:`~dreammem.mcp_server.users.UserBinding`);
none takes a user id. A DreamMem error becomes a typed tool error: an ``is_error`` result
whose text is ``"<ErrorClass>: <message>"`` and whose structured content is an
:class:`~dreammem.mcp_server.outputs.ErrorOutput`, so the model can read and correct it
and a client can branch on the class. Arguments that do not fit a tool's input schema
are refused the same way by the SDK, before the tool runs.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Annotated, Literal, ParamSpec

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from dreammem.agent_api import FORGET_DESCRIPTION, SAVE_DESCRIPTION, save_memory, saved_text
from dreammem.errors import BackendError, DreamMemError, ValidationError
from dreammem.mcp_server.outputs import (
    Dreamed,
    ErrorOutput,
    History,
    Page,
    Purged,
    Recalled,
    RecordOutput,
    Saved,
)
from dreammem.mcp_server.users import UserBinding
from dreammem.memory import DreamMemory

__all__ = ["MemoryTools", "failed", "register_tools"]

log = logging.getLogger(__name__)

P = ParamSpec("P")

MemoryId = Annotated[str, Field(description="A memory's full id (as returned by recall, list, remember).")]
StatusArg = Literal["active", "superseded", "archived", "deleted", "all"]
LayerArg = Literal["working", "episodic", "semantic", "procedural"]

_READ = ToolAnnotations(read_only_hint=True)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
_ERASE = ToolAnnotations(read_only_hint=False, destructive_hint=True)


class MemoryTools:
    """The tools' bodies: DreamMemory calls for the bound user, returning output models.

    Args:
        memory: The store.
        users: Who the user of a call is.
    """

    def __init__(self, memory: DreamMemory, users: UserBinding) -> None:
        self.memory = memory
        self.users = users

    def remember(
        self,
        content: Annotated[str, Field(description="The fact, preference or constraint, in one sentence.")],
        pin: Annotated[bool, Field(description="Keep it in every recall (core memory).")] = False,
    ) -> Saved:
        """Save a fact, preference or constraint about the user to long-term memory."""
        record = save_memory(self.memory, content, user_id=self.users.current(), pin=pin)
        return Saved.of(record, saved_text(record))

    def add(
        self,
        content: Annotated[str, Field(description="The turn's text.")],
        role: Annotated[
            Literal["user", "assistant", "tool", "system"], Field(description="Who spoke.")
        ] = "user",
        session_id: Annotated[str | None, Field(description="The conversation it belongs to.")] = None,
    ) -> Saved:
        """Store one conversation turn; explicit preferences and corrections in it are remembered at once."""
        record = self.memory.add(content, user_id=self.users.current(), role=role, session_id=session_id)
        return Saved.of(record, f"Stored turn {record.id}.")

    def recall(
        self,
        query: Annotated[str, Field(description="What to recall for: a question or the user's message.")],
        k: Annotated[int, Field(description="How many memories at most.")] = 5,
    ) -> Recalled:
        """Recall the user's memories for a query: an escaped memory block for the prompt and each hit's id, date and source."""  # noqa: E501 - the tool's description
        return Recalled.of(self.memory.recall(query, user_id=self.users.current(), k=k))

    def get(self, memory_id: MemoryId) -> RecordOutput:
        """One memory of the user, every field, whatever its status."""
        return RecordOutput.of(self.memory.get(memory_id, user_id=self.users.current()))

    def list_memories(
        self,
        layer: Annotated[LayerArg | None, Field(description="Only this layer.")] = None,
        status: Annotated[StatusArg, Field(description="Only this status, or 'all'.")] = "active",
        limit: Annotated[int, Field(description="Page size, 1 to 10,000.")] = 20,
        offset: Annotated[int, Field(description="Where the page starts: next_offset of the last one.")] = 0,
    ) -> Page:
        """The user's memories, newest first, a page at a time."""
        page = self.memory.get_all(
            user_id=self.users.current(),
            layer=layer,
            status=None if status == "all" else status,
            limit=limit,
            offset=offset,
        )
        return Page.of(page)

    def history(self, memory_id: MemoryId) -> History:
        """Every version of a memory, oldest first: earlier texts and the values it replaced."""
        return History.of(self.memory.history(memory_id, user_id=self.users.current()))

    def update(
        self, memory_id: MemoryId, content: Annotated[str, Field(description="The memory's new text.")]
    ) -> RecordOutput:
        """Change the text of an active memory; the earlier text stays in its history."""
        return RecordOutput.of(self.memory.update(memory_id, content, user_id=self.users.current()))

    def forget(self, memory_id: MemoryId) -> RecordOutput:
        """Forget (soft-delete) one memory by its id, e.g. when the user asks to forget it."""
        return RecordOutput.of(self.memory.forget(memory_id, user_id=self.users.current()))

    def purge(
        self,
        memory_id: Annotated[
            str | None, Field(description="Erase this memory and what was made from it.")
        ] = None,
        everything: Annotated[bool, Field(description="Erase every memory of the user instead.")] = False,
        dry_run: Annotated[bool, Field(description="Only say what would be erased.")] = False,
    ) -> Purged:
        """Erase a memory (or, with everything, all of the user's) from every place it lives; irreversible."""
        if (memory_id is None) == (not everything):
            raise ValidationError("purge needs exactly one of memory_id or everything=true")
        user = self.users.current()
        return Purged.of(self.memory.purge(memory_id, user_id=user, dry_run=dry_run))

    def dream(
        self,
        dry_run: Annotated[bool, Field(description="Compute the report, write nothing.")] = False,
        level: Annotated[Literal[1, 2], Field(description="1: consolidate the queue; 2: housekeeping.")] = 1,
    ) -> Dreamed:
        """Consolidate the user's recent memories now (score, distill, migrate, forget) and report."""
        return Dreamed.of(self.memory.dream(user_id=self.users.current(), dry_run=dry_run, level=level))


def failed(exc: DreamMemError) -> CallToolResult:
    """A DreamMem error as a typed tool error."""
    retryable = isinstance(exc, BackendError) and exc.is_retryable
    out = ErrorOutput(error=type(exc).__name__, message=str(exc), retryable=retryable)
    return CallToolResult(
        content=[TextContent(type="text", text=f"{out.error}: {out.message}")],
        structured_content=out.model_dump(),
        is_error=True,
    )


def _text(out: BaseModel) -> list[TextContent]:
    if isinstance(out, Recalled):
        # The block for the prompt, then the ids and where each memory came from.
        keys = ("id", "event_time", "source", "role")
        hits = [{key: hit[key] for key in keys} for hit in out.hits]
        return [TextContent(type="text", text=out.block), TextContent(type="text", text=json.dumps(hits))]
    return [TextContent(type="text", text=out.model_dump_json())]


def _as_tool(body: Callable[P, BaseModel]) -> Callable[P, CallToolResult]:
    """A tool body as an MCP tool: its signature and output schema, DreamMem errors typed."""

    @functools.wraps(body)
    def tool(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            out = body(*args, **kwargs)
        except DreamMemError as exc:
            log.info("MCP tool %s refused: %s", body.__name__, type(exc).__name__)
            return failed(exc)
        return CallToolResult(content=list(_text(out)), structured_content=out.model_dump(mode="json"))

    return tool


def register_tools(server: MCPServer, tools: MemoryTools) -> None:
    """Add every tool of ``tools`` to ``server``."""
    table: list[tuple[str, Callable[..., BaseModel], ToolAnnotations, str | None]] = [
        ("remember", tools.remember, _WRITE, SAVE_DESCRIPTION),
        ("add", tools.add, _WRITE, None),
        ("recall", tools.recall, _READ, None),
        ("get", tools.get, _READ, None),
        ("list", tools.list_memories, _READ, None),
        ("history", tools.history, _READ, None),
        ("update", tools.update, _WRITE, None),
        ("forget", tools.forget, _WRITE, FORGET_DESCRIPTION),
        ("purge", tools.purge, _ERASE, None),
        ("dream", tools.dream, _WRITE, None),
    ]
    for name, body, hints, description in table:
        server.add_tool(_as_tool(body), name=name, annotations=hints, description=description)
