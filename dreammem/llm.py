"""The LLM seam: a plain callable from prompt text to completion text.

The core never imports an LLM SDK. Anything with ``__call__(prompt: str) -> str``
works (a lambda, a LangChain chat model wrapped by ``langchain_dreammem.as_llm``, a
LlamaIndex LLM wrapped by ``llamaindex_dreammem.as_llm``). Everything in DreamMem
also works with no LLM at all.

:func:`configured_llm` turns the ``[llm]`` config section (``model = "provider:model"``)
into one; the LangChain adapter resolves the name, imported only when a model is named.
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

from dreammem.config import LLMConfig
from dreammem.errors import ConfigError

__all__ = ["LLM", "configured_llm"]

_RESOLVER = "langchain_dreammem.chat_models"
_INSTALL_HINT = "pip install 'dreammem[langchain]'"


@runtime_checkable
class LLM(Protocol):
    """A text-completion callable: prompt in, completion out.

    Implementations raise any exception on failure; callers treat that as a
    degradation (rules take over) and report it.
    """

    def __call__(self, prompt: str) -> str:
        """Complete the prompt."""
        ...


def configured_llm(config: LLMConfig, model: str | None = None) -> LLM | None:
    """The LLM the ``[llm]`` section names, or ``model`` in its place; None when neither names one.

    Args:
        config: The ``[llm]`` section.
        model: ``"provider:model"`` overriding ``config.model`` (``dreammem dream --llm``).

    Raises:
        ConfigError: the ``langchain`` extra or the provider's package (e.g.
            ``langchain-openai``) is not installed, or the model cannot be created.
    """
    name = config.model if model is None else model
    if name is None:
        return None
    if not name.strip():
        raise ConfigError("an LLM is named 'provider:model' (e.g. 'openai:gpt-4o-mini'), not an empty string")
    config = config.model_copy(update={"model": name})
    try:
        resolver = importlib.import_module(_RESOLVER)
    except ImportError as exc:
        raise ConfigError(
            f"the LLM {name!r} is resolved by LangChain, which is not installed: {_INSTALL_HINT} ({exc})"
        ) from exc
    llm: LLM | None = resolver.llm_from_config(config)
    return llm
