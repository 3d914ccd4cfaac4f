"""``BaseChatMessageHistory`` over DreamMem: a compatibility shim for LCEL users.

``BaseChatMessageHistory`` and ``RunnableWithMessageHistory`` are deprecated upstream
(langchain-core 1.6.4 / 1.3.3, removal in 2.0); new code should use
:class:`~langchain_dreammem.DreamMemMiddleware` with ``create_agent``. This shim
keeps older chains working: what they add goes through DreamMem's write path, so
it becomes long-term memory too.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from dreammem.agent_api import forget_session, ingest_turns, session_turns
from dreammem.memory import DreamMemory
from dreammem.validation import check_user_id, require_id
from langchain_dreammem._common import message_turns, turn_message

__all__ = ["DreamMemChatMessageHistory"]

_ALL_ROLES = frozenset({"user", "assistant", "system", "tool"})


class DreamMemChatMessageHistory(BaseChatMessageHistory):
    """The transcript of one session of one user, stored in DreamMem (deprecated upstream).

    Args:
        memory: The DreamMem store.
        user_id: The scope.
        session_id: The session (e.g. the ``session_id`` that
            ``RunnableWithMessageHistory`` passes to its factory).

    ``messages`` is every turn of the session that was not forgotten, oldest first.
    ``clear()`` soft-forgets the session's turns (kept for audit, out of recall);
    long-term facts already written from them stay.
    """

    def __init__(self, memory: DreamMemory, *, user_id: str, session_id: str) -> None:
        self.memory = memory
        self.user_id = check_user_id(user_id)
        self.session_id = require_id(session_id, "session_id")

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's turns, oldest first."""
        turns = session_turns(self.memory, user_id=self.user_id, session_id=self.session_id)
        return [turn_message(t) for t in turns]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Write messages through the write path (each call adds new turns)."""
        # A message without an id is new every time it is added: give it one so the
        # idempotent ingestion never mistakes a repeated "ok" for a duplicate.
        stamped = [m if m.id else m.model_copy(update={"id": uuid.uuid4().hex}) for m in messages]
        ingest_turns(
            self.memory,
            message_turns(stamped, roles=_ALL_ROLES),
            user_id=self.user_id,
            session_id=self.session_id,
            roles=_ALL_ROLES,  # a transcript store keeps every message
        )

    def clear(self) -> None:
        """Soft-forget every turn of the session."""
        forget_session(self.memory, user_id=self.user_id, session_id=self.session_id)

    async def aget_messages(self) -> list[BaseMessage]:
        """Async twin of :attr:`messages`."""
        return await asyncio.to_thread(lambda: self.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async twin of :meth:`add_messages`."""
        await asyncio.to_thread(self.add_messages, list(messages))

    async def aclear(self) -> None:
        """Async twin of :meth:`clear`."""
        await asyncio.to_thread(self.clear)
