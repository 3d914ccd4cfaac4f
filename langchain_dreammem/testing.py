"""A scripted chat model for tests and offline examples (no network, tool calls work).

LangChain's fake chat models do not implement ``bind_tools``, and
``GenericFakeChatModel`` streams nothing for a message that only carries tool calls;
this one implements ``_generate`` only (streaming falls back to one chunk) and
records every prompt it was given, so a test can assert what memory injected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

__all__ = ["Reply", "ScriptedChatModel"]

Reply = Callable[[list[BaseMessage]], AIMessage] | AIMessage
"""A scripted reply: a fixed message, or a function of the prompt messages."""

_ReplyField = Annotated[Reply, Field(union_mode="left_to_right")]
"""Checked as a callable first: validating a function as an ``AIMessage`` raises AttributeError."""


class ScriptedChatModel(BaseChatModel):
    """Answers with scripted replies in order and records each prompt.

    Attributes:
        replies: The replies, one per model call; a callable gets the prompt.
        prompts: Every prompt received, in call order (filled in as it runs).
    """

    replies: list[_ReplyField]
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "dreammem-scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        index = len(self.prompts)
        if index >= len(self.replies):
            raise IndexError(f"the script has {len(self.replies)} replies; call {index + 1} has none")
        self.prompts.append(list(messages))
        reply = self.replies[index]
        message = reply(list(messages)) if callable(reply) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept any tools: the script decides which tool calls are made."""
        return self
