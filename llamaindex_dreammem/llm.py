"""A LlamaIndex LLM as DreamMem's core ``prompt -> completion`` callable."""

from __future__ import annotations

import logging

from llama_index.core.base.llms.base import BaseLLM

from dreammem.errors import LLMError, ValidationError
from dreammem.llm import LLM

__all__ = ["LlamaIndexLLM", "as_llm"]

log = logging.getLogger(__name__)


class LlamaIndexLLM:
    """Calls ``llm.complete(prompt)`` and returns the text.

    Chat-only models work too: LlamaIndex turns a completion call into a one-message
    chat for them. The call is synchronous and holds no event loop, so the core may
    call it from any thread.

    Args:
        llm: Any LlamaIndex LLM (``llama_index.core.llms.LLM``).
    """

    def __init__(self, llm: BaseLLM) -> None:
        self.llm = llm

    def __call__(self, prompt: str) -> str:
        """Complete the prompt.

        Raises:
            LLMError: the LLM failed (the original error is chained).
        """
        try:
            response = self.llm.complete(prompt)
        except Exception as exc:  # any provider error becomes the core's typed LLM error
            log.warning("LlamaIndex LLM %s failed: %s", type(self.llm).__name__, type(exc).__name__)
            raise LLMError(f"{type(self.llm).__name__}.complete failed: {exc}") from exc
        return response.text or ""

    def __repr__(self) -> str:
        return f"LlamaIndexLLM({type(self.llm).__name__})"


def as_llm(llm: BaseLLM) -> LLM:
    """Wrap a LlamaIndex LLM for the core (``DreamMemory(llm=as_llm(my_llm))``).

    Raises:
        ValidationError: ``llm`` is not a LlamaIndex LLM.
    """
    if not isinstance(llm, BaseLLM):
        raise ValidationError(f"as_llm expects a llama_index LLM, got {type(llm).__name__}")
    return LlamaIndexLLM(llm)
