"""The LLM seam: a plain callable from prompt text to completion text.

The core never imports an LLM SDK. Anything with ``__call__(prompt: str) -> str``
works (a lambda, a LangChain chat model wrapped by ``langchain_dreammem.as_llm``, a
LlamaIndex LLM wrapped by ``llamaindex_dreammem.as_llm``). Everything in DreamMem
also works with no LLM at all.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["LLM"]


@runtime_checkable
class LLM(Protocol):
    """A text-completion callable: prompt in, completion out.

    Implementations raise any exception on failure; callers treat that as a
    degradation (rules take over) and report it.
    """

    def __call__(self, prompt: str) -> str:
        """Complete the prompt."""
        ...
