"""Translation helpers shared by the LangChain adapters: messages, user ids, thread ids.

Only framework translation lives here; every memory decision is in
:mod:`dreammem.agent_api`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from dreammem.agent_api import MEMORY_ROLES, ChatTurn, speaker_name
from dreammem.errors import ScopeError
from dreammem.validation import check_user_id

__all__ = ["context_user_id", "message_turns", "resolve_user_id", "thread_id", "turn_message"]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def message_turns(messages: Sequence[BaseMessage], *, roles: frozenset[str] = MEMORY_ROLES) -> list[ChatTurn]:
    """LangChain messages as write-path turns (only the given roles, text only).

    Tool calls and tool results are left out by default (:data:`~dreammem.agent_api.MEMORY_ROLES`).
    A message's ``name`` is the turn's speaker.
    """
    turns = []
    for message in messages:
        role = _ROLES.get(message.type)
        if role is None or role not in roles:
            continue
        turns.append(ChatTurn(role, message.text, message.id, speaker_name(message.name)))
    return turns


def turn_message(turn: ChatTurn) -> BaseMessage:
    """A stored turn as a LangChain message (tool turns carry no call id; the speaker is its ``name``)."""
    if turn.role == "assistant":
        return AIMessage(turn.content, id=turn.message_id, name=turn.speaker)
    if turn.role == "system":
        return SystemMessage(turn.content, id=turn.message_id, name=turn.speaker)
    if turn.role == "tool":
        return ToolMessage(turn.content, tool_call_id="", id=turn.message_id, name=turn.speaker)
    return HumanMessage(turn.content, id=turn.message_id, name=turn.speaker)


def context_user_id(context: object, key: str) -> str | None:
    """The user id under ``key`` of a runtime context (a mapping or an object), if any."""
    if context is None:
        return None
    value = context.get(key) if isinstance(context, Mapping) else getattr(context, key, None)
    return None if value is None else check_user_id(value, f"context[{key!r}]")


def resolve_user_id(context: object, key: str, explicit: str | None = None) -> str:
    """The user id from the runtime context or an explicit argument; never guessed.

    Raises:
        ScopeError: neither gives one, or the two disagree.
    """
    from_context = context_user_id(context, key)
    if explicit is not None:
        explicit = check_user_id(explicit)
        if from_context is not None and from_context != explicit:
            raise ScopeError("the explicit user_id differs from the one in the runtime context")
        return explicit
    if from_context is None:
        raise ScopeError(
            f"no user id: pass context={{{key!r}: ...}} (or an object with that attribute) "
            "when invoking the agent"
        )
    return from_context


def thread_id(config: Mapping[str, Any] | None) -> str | None:
    """The ``thread_id`` of a runnable config, used as the DreamMem session id."""
    configurable = (config or {}).get("configurable") or {}
    value = configurable.get("thread_id")
    return None if value is None else str(value)
