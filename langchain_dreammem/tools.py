"""Memory tools for agents: save, search and forget.

Inside ``create_agent`` the tools read the user id from the runtime context
(``context={"user_id": ...}``) and the session from the run's ``thread_id``. Standalone
they take the user id as an argument hidden from the model::

    save, search, forget = create_memory_tools(memory)
    search.invoke({"query": "seat preference", "user_id": "alice"})

The user id is never an argument the model can fill in: a model cannot read or
write another user's memories.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool, ToolException

from dreammem.agent_api import (
    FORGET_DESCRIPTION,
    SAVE_DESCRIPTION,
    SEARCH_DESCRIPTION,
    forget_memory,
    save_memory,
    saved_text,
    search_memory,
)
from dreammem.errors import NotFoundError, ScopeError, ValidationError
from dreammem.memory import DreamMemory
from langchain_dreammem._common import context_user_id, resolve_user_id, thread_id

__all__ = ["create_memory_tools"]

T = TypeVar("T")
UserId = Annotated[str | None, InjectedToolArg]
"""An explicit user id for standalone calls; hidden from the model's schema."""


def _scope(runtime: ToolRuntime | None, user_id: str | None, key: str) -> tuple[str, str | None]:
    """The user id and session id of a call.

    Inside an agent (a runtime is injected) the user id must come from the runtime
    context; an explicit one may only repeat it. Standalone, the explicit one is used.
    """
    if runtime is None:
        return resolve_user_id(None, key, user_id), None
    if context_user_id(runtime.context, key) is None:
        raise ScopeError(f"inside an agent the user id must come from the runtime context key {key!r}")
    return resolve_user_id(runtime.context, key, user_id), thread_id(runtime.config)


def _as_tool_error(call: Callable[[], T]) -> T:
    """Run a memory call; errors the model can act on become a ToolException."""
    try:
        return call()
    except (NotFoundError, ValidationError) as exc:
        raise ToolException(str(exc)) from exc


def create_memory_tools(memory: DreamMemory, *, user_id_key: str = "user_id") -> list[BaseTool]:
    """Save, search and forget tools bound to one DreamMem store.

    Args:
        memory: The DreamMem store.
        user_id_key: Where the user id lives in the agent's runtime context.

    Returns:
        ``[save_memory, search_memory, forget_memory]``. Each returns text for the model
        and a structured artifact (``response_format="content_and_artifact"``).
    """

    def save(
        content: str,
        pin: bool = False,
        user_id: UserId = None,
        runtime: ToolRuntime[Any, Any] = None,  # type: ignore[assignment]
    ) -> tuple[str, dict[str, Any]]:
        """Save a memory."""
        user, session = _scope(runtime, user_id, user_id_key)
        record = _as_tool_error(
            lambda: save_memory(memory, content, user_id=user, pin=pin, session_id=session)
        )
        return saved_text(record), {"id": record.id, "pinned": record.pinned}

    def search(
        query: str,
        k: int = 5,
        user_id: UserId = None,
        runtime: ToolRuntime[Any, Any] = None,  # type: ignore[assignment]
    ) -> tuple[str, list[dict[str, Any]]]:
        """Search memories."""
        user, _ = _scope(runtime, user_id, user_id_key)
        found = _as_tool_error(lambda: search_memory(memory, query, user_id=user, k=k))
        return found.text, found.hits

    def forget(
        memory_id: str,
        user_id: UserId = None,
        runtime: ToolRuntime[Any, Any] = None,  # type: ignore[assignment]
    ) -> tuple[str, dict[str, Any]]:
        """Forget a memory."""
        user, _ = _scope(runtime, user_id, user_id_key)
        text = _as_tool_error(lambda: forget_memory(memory, memory_id, user_id=user))
        return text, {"id": memory_id, "status": "deleted"}

    return [
        _tool(save, "save_memory", SAVE_DESCRIPTION),
        _tool(search, "search_memory", SEARCH_DESCRIPTION),
        _tool(forget, "forget_memory", FORGET_DESCRIPTION),
    ]


def _tool(func: Callable[..., tuple[str, Any]], name: str, description: str) -> BaseTool:
    async def coroutine(*args: Any, **kwargs: Any) -> tuple[str, Any]:
        return await asyncio.to_thread(func, *args, **kwargs)

    return StructuredTool.from_function(
        func=func,
        coroutine=coroutine,
        name=name,
        description=description,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )
