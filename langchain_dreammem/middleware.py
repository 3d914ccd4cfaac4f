"""Agent middleware: recall before each model call, write the turns after the run.

::

    agent = create_agent(model, tools, middleware=[DreamMemMiddleware(memory)])
    agent.invoke({"messages": [...]}, context={"user_id": "alice"},
                 config={"configurable": {"thread_id": "s1"}})
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from dreammem.agent_api import ingest_turns, last_user_text, memory_block, with_memory_block
from dreammem.memory import DreamMemory
from dreammem.recall.packing import PackedContext
from langchain_dreammem._common import message_turns, resolve_user_id, thread_id

__all__ = ["DreamMemMiddleware"]

log = logging.getLogger(__name__)

Handler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class DreamMemMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Long-term memory for a LangChain v1 agent.

    Before every model call, recalls for the latest user message and appends the
    packed ``<memory>`` block to the system message of that call only (nothing enters
    the thread state). After the agent run, writes the user and assistant turns
    through DreamMem's write path (idempotently, so a checkpointed thread may be
    passed whole each time), with the ``thread_id`` of the run's config as session.

    Args:
        memory: The DreamMem store.
        user_id_key: Where the user id lives in the agent's runtime context (a dict
            or an object with that attribute). It is never guessed: a missing one
            raises :class:`~dreammem.errors.ScopeError`.
        k: How many memories to recall at most (pinned ones from their budget).
        max_tokens: Token budget of the block (default: the core's recall budget).
        dream_on_end: After the run, run the dreams that are due
            (``memory.maybe_dream(user_id)``: the queue-size, time and second-level
            triggers decide; nothing runs when none is due).
    """

    def __init__(
        self,
        memory: DreamMemory,
        *,
        user_id_key: str = "user_id",
        k: int = 5,
        max_tokens: int | None = None,
        dream_on_end: bool = False,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.user_id_key = user_id_key
        self.k = k
        self.max_tokens = max_tokens
        self.dream_on_end = dream_on_end
        self.tools = []

    # -- before the model: inject recall ------------------------------------------------

    def _with_memory(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        user_id = resolve_user_id(request.runtime.context, self.user_id_key)
        query = last_user_text(message_turns(request.messages, roles=frozenset({"user"})))
        block = memory_block(self.memory, query, user_id=user_id, k=self.k, max_tokens=self.max_tokens)
        if block is None:
            return request
        return request.override(system_message=_system_with(request.system_message, block))

    def wrap_model_call(self, request: ModelRequest[Any], handler: Handler) -> ModelResponse[Any]:
        """Run the model with the recalled memory in its system message."""
        return handler(self._with_memory(request))

    async def awrap_model_call(self, request: ModelRequest[Any], handler: AsyncHandler) -> ModelResponse[Any]:
        """Async twin of :meth:`wrap_model_call` (recall runs in a worker thread)."""
        return await handler(await asyncio.to_thread(self._with_memory, request))

    # -- after the run: write back ------------------------------------------------------

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Write the run's user and assistant turns to memory."""
        self._after(state, runtime, _session_id(runtime))
        return None

    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        session = _session_id(runtime)  # read here: the run's config is bound to this task
        return await asyncio.to_thread(self._after, state, runtime, session)

    def _after(self, state: AgentState[Any], runtime: Runtime[Any], session: str | None) -> None:
        user_id = resolve_user_id(runtime.context, self.user_id_key)
        written = ingest_turns(
            self.memory,
            message_turns(state["messages"]),
            user_id=user_id,
            session_id=session,
            skip_unstorable=True,  # one unstorable message must not fail every later run
        )
        log.debug("wrote %d turns for session %s", len(written), session)
        if self.dream_on_end:
            self._dream(user_id)

    def _dream(self, user_id: str) -> None:
        reports = self.memory.maybe_dream(user_id)
        log.debug("dream_on_end: %d dream(s) ran", len(reports))


def _system_with(system: SystemMessage | None, block: PackedContext) -> SystemMessage:
    """The system message with the memory block appended (its other blocks kept)."""
    if system is None:
        return SystemMessage(with_memory_block(None, block) or "")
    if isinstance(system.content, str):
        return SystemMessage(with_memory_block(system.content, block) or "", id=system.id)
    memory_part = with_memory_block(None, block) or ""
    return SystemMessage([*system.content, {"type": "text", "text": memory_part}], id=system.id)


def _session_id(runtime: Runtime[Any]) -> str | None:
    info = runtime.execution_info
    if info is not None and info.thread_id is not None:
        return info.thread_id
    try:
        return thread_id(get_config())
    except RuntimeError:  # called outside a graph run
        return None
