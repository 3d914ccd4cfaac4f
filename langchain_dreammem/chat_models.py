"""Chat models named in configuration: ``"provider:model"`` through LangChain's ``init_chat_model``.

:func:`llm_from_config` turns the ``[llm]`` section (:class:`~dreammem.config.LLMConfig`)
into the core's ``LLM`` callable; the core reaches it through
:func:`dreammem.llm.configured_llm`, so ``dreammem dream --llm openai:gpt-4o-mini`` and
``dreammem mcp`` need no code. :func:`registered_chat_model` makes a name stand for a chat
model instance (a test's fake model, an offline example's scripted one).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

from dreammem.config import LLMConfig
from dreammem.errors import ConfigError
from dreammem.llm import LLM
from langchain_dreammem.llm import ChatModelLLM

__all__ = ["chat_model", "llm_from_config", "registered_chat_model"]

_registered: dict[str, BaseChatModel] = {}


@contextmanager
def registered_chat_model(name: str, model: BaseChatModel) -> Iterator[BaseChatModel]:
    """While the block runs, ``name`` resolves to ``model`` instead of through ``init_chat_model``.

    Example:
        >>> with registered_chat_model("fake:list", FakeListChatModel(responses=["{}"])):  # doctest: +SKIP
        ...     memory.llm = configured_llm(LLMConfig(model="fake:list"))
    """
    earlier = _registered.get(name)
    _registered[name] = model
    try:
        yield model
    finally:
        if earlier is None:
            _registered.pop(name, None)
        else:
            _registered[name] = earlier


def chat_model(name: str, options: Mapping[str, Any] | None = None) -> BaseChatModel:
    """The chat model ``name`` (``"provider:model"``) stands for, built with ``options``.

    Raises:
        ConfigError: the provider's package is not installed (the message says which to
            install), the provider is unknown, or the provider refused the options (a
            missing API key, an unknown argument).
    """
    found = _registered.get(name)
    if found is not None:
        return found
    try:
        model: BaseChatModel = init_chat_model(name, **dict(options or {}))
    except ImportError as exc:
        raise ConfigError(f"the LLM {name!r} needs a package that is not installed: {exc}") from exc
    except Exception as exc:  # each provider raises its own types (an unknown provider, a missing key)
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"cannot create the LLM {name!r}: {first_line}") from exc
    return model


def llm_from_config(config: LLMConfig) -> LLM | None:
    """The ``[llm]`` section as the core's ``LLM`` (None when it names no model).

    Raises:
        ConfigError: as :func:`chat_model`.
    """
    if config.model is None:
        return None
    return ChatModelLLM(chat_model(config.model, config.options), retries=config.max_retries)
