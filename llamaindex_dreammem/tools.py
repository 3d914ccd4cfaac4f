"""Save, search and forget memories: ``FunctionTool`` objects for LlamaIndex agents."""

# No `from __future__ import annotations`: FunctionTool reads the tool signatures at run time.

import asyncio
from collections.abc import Callable
from typing import Annotated

from llama_index.core.bridge.pydantic import Field
from llama_index.core.tools import FunctionTool

from dreammem.agent_api import (
    FORGET_DESCRIPTION,
    SAVE_DESCRIPTION,
    SEARCH_DESCRIPTION,
    forget_memory,
    save_memory,
    saved_text,
    search_memory,
)
from dreammem.memory import DreamMemory
from dreammem.validation import check_id, check_k, check_user_id
from llamaindex_dreammem._shared import check_memory

__all__ = ["create_memory_tools"]


def create_memory_tools(
    memory: DreamMemory, *, user_id: str, session_id: str | None = None, k: int = 5
) -> list[FunctionTool]:
    """Three tools bound to one user: ``save_memory``, ``search_memory``, ``forget_memory``.

    The model never chooses the user: ``user_id`` is fixed here. Each tool has an async
    twin that runs in a worker thread. Errors are DreamMem's typed errors (for example
    ``NotFoundError`` for an unknown id), which LlamaIndex agents report to the model.

    Args:
        memory: The DreamMem store.
        user_id: Whose memory the tools read and write; required.
        session_id: Session to file saved memories under.
        k: How many memories a search returns.

    Raises:
        ScopeError: ``user_id`` is missing or malformed.
        ValidationError: ``memory``, ``session_id`` or ``k`` is invalid.
    """
    store = check_memory(memory)
    user = check_user_id(user_id)
    session = check_id(session_id, "session_id")
    limit = check_k(k)

    def save(
        content: Annotated[str, Field(description="The fact, preference or constraint, in full.")],
        pin: Annotated[bool, Field(description="True for core memories that must always be shown.")] = False,
    ) -> str:
        record = save_memory(store, content, user_id=user, pin=pin, session_id=session)
        return saved_text(record)

    def search(query: Annotated[str, Field(description="What to look for, in natural language.")]) -> str:
        return search_memory(store, query, user_id=user, k=limit).text

    def forget(memory_id: Annotated[str, Field(description="The id shown in search results.")]) -> str:
        return forget_memory(store, memory_id, user_id=user)

    return [
        _tool(save, "save_memory", SAVE_DESCRIPTION),
        _tool(search, "search_memory", SEARCH_DESCRIPTION),
        _tool(forget, "forget_memory", FORGET_DESCRIPTION),
    ]


def _tool(fn: Callable[..., str], name: str, description: str) -> FunctionTool:
    async def run_in_thread(**kwargs: object) -> str:
        return await asyncio.to_thread(fn, **kwargs)

    return FunctionTool.from_defaults(fn=fn, async_fn=run_in_thread, name=name, description=description)
