"""Fixtures for the LlamaIndex adapter unit tests (sockets disabled, hashing embedder)."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llama_index.core import Settings

from dreammem import DreamMemory
from llamaindex_dreammem import DreamMemMemory


@pytest.fixture(autouse=True)
def _no_llamaindex_defaults() -> Iterator[None]:
    """Fail any test that makes LlamaIndex resolve its OpenAI default LLM or embedding."""
    assert Settings._llm is None and Settings._embed_model is None  # noqa: SLF001 - LlamaIndex offers no public way to ask whether a default was resolved
    yield
    assert Settings._llm is None, "Settings.llm was resolved (OpenAI default)"  # noqa: SLF001 - LlamaIndex offers no public way to ask whether a default was resolved
    assert Settings._embed_model is None, "Settings.embed_model was resolved (OpenAI default)"  # noqa: SLF001 - LlamaIndex offers no public way to ask whether a default was resolved


@pytest.fixture(autouse=True)
def _close_the_main_threads_event_loop() -> Iterator[None]:
    """Close the event loop LlamaIndex's sync methods leave open on this thread.

    ``llama_index.core.async_utils.asyncio_run`` runs on ``asyncio.get_event_loop()``,
    which on the main thread makes a loop and keeps it as the thread's current one; it
    is closed here, not warned about at a garbage collection inside some later test.
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # none, and none made (a newer Python)
            return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def open_li(memory: DreamMemory) -> Iterator[Callable[..., DreamMemMemory]]:
    """``DreamMemMemory.from_defaults`` on the hashing-embedder store; each one is closed after the test."""
    opened: list[DreamMemMemory] = []

    def open_memory(**kwargs: Any) -> DreamMemMemory:
        opened.append(DreamMemMemory.from_defaults(**{"memory": memory, **kwargs}))
        return opened[-1]

    yield open_memory
    for li in opened:
        li.close()


@pytest.fixture
def li_memory(open_li: Callable[..., DreamMemMemory]) -> DreamMemMemory:
    """A DreamMemMemory for user u1, session s1, on the hashing-embedder store."""
    return open_li(user_id="u1", session_id="s1")
