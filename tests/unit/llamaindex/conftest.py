"""Fixtures for the LlamaIndex adapter unit tests (sockets disabled, hashing embedder)."""

from __future__ import annotations

from collections.abc import Iterator

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


@pytest.fixture
def li_memory(memory: DreamMemory) -> DreamMemMemory:
    """A DreamMemMemory for user u1, session s1, on the hashing-embedder store."""
    return DreamMemMemory.from_defaults(memory=memory, user_id="u1", session_id="s1")
