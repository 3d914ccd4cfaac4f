"""langchain-tests' standard suites: the retriever and the three memory tools."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from langchain_dreammem import DreamMemRetriever, create_memory_tools

pytestmark = pytest.mark.integration

FACTS = [
    "The user likes green tea in the morning",
    "The user likes hiking in the Alps",
    "The user likes jazz records from the 1960s",
    "The user likes window seats on long flights",
    "Unrelated note about a broken printer",
]


def _memory() -> DreamMemory:
    memory = DreamMemory(None, embedder=HashingEmbedder())
    memory.add_many([{"content": fact, "user_id": "u1"} for fact in FACTS])
    return memory


def _tool(name: str) -> BaseTool:
    return {t.name: t for t in create_memory_tools(_memory())}[name]


class TestDreamMemRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[DreamMemRetriever]:
        return DreamMemRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": _memory(), "user_id": "u1", "k": 3}

    @property
    def retriever_query_example(self) -> str:
        return "what does the user like"


class TestSaveMemoryToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return _tool("save_memory")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"content": "The user plays chess", "pin": True, "user_id": "u1"}


class TestSearchMemoryToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return _tool("search_memory")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "what does the user like", "k": 2, "user_id": "u1"}


class TestForgetMemoryToolIntegration(ToolsIntegrationTests):
    memory = _memory()
    target = memory.get_all(user_id="u1")[0].id

    @property
    def tool_constructor(self) -> BaseTool:
        return {t.name: t for t in create_memory_tools(self.memory)}["forget_memory"]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": self.target, "user_id": "u1"}  # forgetting twice is a no-op
