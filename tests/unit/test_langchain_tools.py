"""Memory tools: langchain-tests' ToolsUnitTests plus behaviour checks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.unit_tests import ToolsUnitTests

from dreammem import DreamMemory, ScopeError
from dreammem.embed import HashingEmbedder
from langchain_dreammem import create_memory_tools
from langchain_dreammem.testing import ScriptedChatModel


def _tools() -> dict[str, BaseTool]:
    memory = DreamMemory(None, embedder=HashingEmbedder())
    memory.add("I prefer window seats", user_id="u1")
    return {t.name: t for t in create_memory_tools(memory)}


class TestSaveMemoryToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return _tools()["save_memory"]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"content": "likes chess", "user_id": "u1"}


class TestSearchMemoryToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return _tools()["search_memory"]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "window seats", "k": 3, "user_id": "u1"}


class TestForgetMemoryToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return _tools()["forget_memory"]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": "0" * 32, "user_id": "u1"}


def test_model_schema_hides_user_id_and_runtime() -> None:
    for tool in _tools().values():
        schema = tool.tool_call_schema.model_json_schema()["properties"]
        assert "user_id" not in schema and "runtime" not in schema
    save_schema = _tools()["save_memory"].tool_call_schema.model_json_schema()
    assert set(save_schema["properties"]) == {"content", "pin"}


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"call-{name}", "name": name, "args": args}


def test_save_search_forget_standalone() -> None:
    tools = _tools()
    saved = tools["save_memory"].invoke(_call("save_memory", content="Allergic to peanuts", user_id="u1"))
    assert isinstance(saved, ToolMessage) and saved.artifact["pinned"] is False
    memory_id = saved.artifact["id"]
    found = tools["search_memory"].invoke(_call("search_memory", query="peanuts", user_id="u1"))
    assert "Allergic to peanuts" in found.content and any(h["id"] == memory_id for h in found.artifact)
    assert tools["search_memory"].invoke({"query": "peanuts", "user_id": "u2"}) == "No memories found."
    forgot = tools["forget_memory"].invoke({"memory_id": memory_id, "user_id": "u1"})
    assert forgot == f"Forgot memory {memory_id}."
    after = asyncio.run(tools["search_memory"].ainvoke({"query": "peanuts", "user_id": "u1"}))
    assert "Allergic to peanuts" not in after


def test_errors_the_model_can_fix_come_back_as_text_scope_errors_raise() -> None:
    tools = _tools()
    assert "no memory" in tools["forget_memory"].invoke({"memory_id": "nope", "user_id": "u1"})
    assert "k must be" in tools["search_memory"].invoke({"query": "x", "k": 0, "user_id": "u1"})
    with pytest.raises(ScopeError):
        tools["search_memory"].invoke({"query": "x"})
    with pytest.raises(ScopeError):
        tools["save_memory"].invoke({"content": "x", "user_id": ""})


def test_inside_an_agent_the_user_comes_from_the_context_only(memory: DreamMemory) -> None:
    memory.add("Bob's secret: the safe code is kilo-4711", user_id="bob")
    memory.add("Alice likes tea", user_id="alice")

    def call(**args: Any) -> AIMessage:
        tool_call = {"name": "search_memory", "args": args, "id": "c1", "type": "tool_call"}
        return AIMessage("", tool_calls=[tool_call])

    outcomes = []
    for context, args in (
        ({"user_id": "alice"}, {"query": "safe code", "user_id": "bob"}),  # a model reaching for bob
        ({"user_id": "alice"}, {"query": "safe code"}),
        (None, {"query": "safe code", "user_id": "bob"}),  # no context: no fallback to the model's id
    ):
        model = ScriptedChatModel(replies=[call(**args), AIMessage("done")])
        agent = create_agent(model, tools=create_memory_tools(memory))
        try:
            out = agent.invoke({"messages": [HumanMessage("what is the code?")]}, context=context)
            outcomes.append(" ".join(m.text for m in out["messages"] if m.type == "tool"))
        except ScopeError:
            outcomes.append("scope error")
    assert all("kilo-4711" not in text for text in outcomes)
    # LangChain drops the model's injected-arg value; the context's user is searched.
    assert "Alice likes tea" in outcomes[0] and "Alice likes tea" in outcomes[1]
    assert outcomes[2] == "scope error"


def test_save_memory_stores_a_semantic_fact_not_a_turn() -> None:
    memory = DreamMemory(None, embedder=HashingEmbedder())
    save = {t.name: t for t in create_memory_tools(memory)}["save_memory"]
    saved = save.invoke(_call("save_memory", content="Carol's dentist is Dr. Ruiz", user_id="u1"))
    record = memory.get(saved.artifact["id"], user_id="u1")
    assert record.layer.value == "semantic" and record.kind.value == "fact" and not record.pinned
    assert memory.get_all(user_id="u1", layer="episodic") == []
