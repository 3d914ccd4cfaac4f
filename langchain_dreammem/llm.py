"""A LangChain chat model as the core's ``LLM`` callable (prompt -> completion)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable

from dreammem.errors import LLMError
from dreammem.llm import LLM

__all__ = ["ChatModelLLM", "as_llm"]


class ChatModelLLM:
    """Calls a chat model with the prompt as one human message; returns its text.

    Args:
        chat_model: Any LangChain chat model.
        retries: Calls retried, with exponential back-off, after the model raised (a
            network error, a rate limit); 0: none.
    """

    def __init__(self, chat_model: BaseChatModel, *, retries: int = 0) -> None:
        self.chat_model = chat_model
        self._runnable: Runnable[LanguageModelInput, BaseMessage] = (
            chat_model.with_retry(stop_after_attempt=retries + 1) if retries > 0 else chat_model
        )

    def __call__(self, prompt: str) -> str:
        """Complete the prompt.

        Raises:
            LLMError: the model failed or answered with no text.
        """
        try:
            reply = self._runnable.invoke([HumanMessage(prompt)])
        except Exception as exc:  # any provider error is an LLM failure to the core
            raise LLMError(f"chat model {type(self.chat_model).__name__} failed: {exc}") from exc
        text = reply.text
        if not text.strip():
            raise LLMError(f"chat model {type(self.chat_model).__name__} returned no text")
        return text


def as_llm(chat_model: BaseChatModel) -> LLM:
    """Turn a LangChain chat model into the core's ``LLM`` callable.

    Example:
        >>> memory = DreamMemory("./memory", llm=as_llm(chat_model))  # doctest: +SKIP
    """
    return ChatModelLLM(chat_model)
