"""DreamMem as a memory block of LlamaIndex's ``Memory``."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory import BaseMemoryBlock

from dreammem.agent_api import ChatTurn, history_block, ingest_turns, with_memory_block
from dreammem.errors import ValidationError
from dreammem.memory import DreamMemory
from dreammem.validation import check_id, check_k, check_user_id
from llamaindex_dreammem._shared import check_budget, check_memory, to_turns

__all__ = ["DreamMemBlock"]

# The name becomes an XML tag in the prompt (<memory><name>...</name></memory>).
_TAG = re.compile(r"[A-Za-z_][\w-]{0,63}")


class DreamMemBlock(BaseMemoryBlock[str]):
    """Recalled long-term memories as a block of ``Memory.from_defaults(memory_blocks=[...])``.

    Reading (``_aget``) recalls for the last user message of the current messages and
    returns the packed memory text, which ``Memory`` renders inside
    ``<memory><{name}>...</{name}></memory>``. Writing (``_aput``) stores the messages
    ``Memory`` flushes out of its short-term history, idempotently. Because ``Memory``
    flushes only when its history passes ``token_limit * chat_history_token_ratio``
    (21k tokens by default), the block also writes the current messages on each read
    (``ingest_on_read=True``), so every turn reaches long-term memory; both writes skip
    what is already stored. Messages put after the last read (such as the final reply
    of a session) are written at the next read or flush; use :class:`DreamMemMemory`
    when every ``put`` must be written at once. A message repeated verbatim in the same
    session after an earlier copy was flushed may be taken for that copy and not stored
    again.

    Priority (LlamaIndex semantics): when blocks plus history exceed ``Memory.token_limit``,
    blocks are truncated in ascending priority, and ``0`` means **never truncated**;
    ``1`` is truncated (here: dropped whole) first, larger numbers are kept longer.
    The default is ``0``, since the block is already bounded by ``max_tokens``.

    Attributes:
        user_id: Whose memory this is.
        k: How many memories to recall at most (pinned ones from their budget).
        max_tokens: Token budget of the block (default: the DreamMem config's share of the window).
        session_id: Session to file writes under when ``Memory`` gives none (it gives its own).
        ingest_on_read: Also write the current messages on each read.
    """

    name: str = Field(default="dreammem", description="Block name; also its XML tag in the prompt.")
    priority: int = Field(default=0, ge=0, description="0 = never truncated; 1 = truncated first.")
    user_id: str
    k: int = Field(default=5, ge=1, le=1000)
    max_tokens: int | None = Field(default=None, ge=1)
    session_id: str | None = None
    ingest_on_read: bool = True

    _memory: DreamMemory = PrivateAttr()

    def __init__(
        self,
        *,
        memory: DreamMemory,
        user_id: str,
        name: str = "dreammem",
        priority: int = 0,
        k: int = 5,
        max_tokens: int | None = None,
        **data: Any,
    ) -> None:
        """Build the block; ``memory`` is the DreamMem store, ``user_id`` is required.

        Raises:
            ScopeError: ``user_id`` is missing or malformed.
            ValidationError: ``memory``, ``name`` (not tag-safe), ``k`` or ``max_tokens``
                is invalid.
        """
        if not isinstance(name, str) or not _TAG.fullmatch(name):
            raise ValidationError(f"name must be tag-safe ([A-Za-z_][A-Za-z0-9_-]*), got {name!r}")
        super().__init__(
            name=name,
            priority=priority,
            user_id=check_user_id(user_id),
            k=check_k(k),
            max_tokens=check_budget(max_tokens),
            **data,
        )
        check_id(self.session_id, "session_id")
        self._memory = check_memory(memory)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        session_id = block_kwargs.get("session_id") or self.session_id
        return await asyncio.to_thread(self._read, list(messages or []), session_id)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        if not messages:
            return
        session_id = messages[0].additional_kwargs.get("session_id") or self.session_id
        await asyncio.to_thread(self._write, to_turns(messages), session_id)

    def _write(self, turns: list[ChatTurn], session_id: str | None) -> None:
        # Memory hands over its history on its own: one unstorable message must not
        # fail every later read and flush of the session.
        ingest_turns(self._memory, turns, user_id=self.user_id, session_id=session_id, skip_unstorable=True)

    def _read(self, messages: list[ChatMessage], session_id: str | None) -> str:
        turns = to_turns(messages)
        if self.ingest_on_read:
            self._write(turns, session_id)
        block = history_block(
            self._memory,
            turns,
            user_id=self.user_id,
            k=self.k,
            max_tokens=self.max_tokens,
            session_id=session_id,
        )
        return with_memory_block(None, block) or ""
