"""Memory tools for agents and the LLM bridge (LlamaIndex's own MockLLM as the model)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llama_index.core.llms import CompletionResponse, MockLLM
from llama_index.core.tools import FunctionTool

from dreammem import DreamMemory, LLMError, NotFoundError, ScopeError, ValidationError
from dreammem.agent_api import FORGET_DESCRIPTION, SAVE_DESCRIPTION, SEARCH_DESCRIPTION
from dreammem.llm import LLM
from llamaindex_dreammem import as_llm, create_memory_tools


def by_name(tools: list[FunctionTool]) -> dict[str, FunctionTool]:
    return {t.metadata.name or "": t for t in tools}


def test_three_tools_with_schemas_that_hide_the_user(memory: DreamMemory) -> None:
    tools = by_name(create_memory_tools(memory, user_id="u1"))
    assert list(tools) == ["save_memory", "search_memory", "forget_memory"]
    descriptions = [t.metadata.description for t in tools.values()]
    assert descriptions == [SAVE_DESCRIPTION, SEARCH_DESCRIPTION, FORGET_DESCRIPTION]
    schemas = {name: json.loads(t.metadata.fn_schema_str) for name, t in tools.items()}
    assert schemas["save_memory"]["required"] == ["content"] and "pin" in schemas["save_memory"]["properties"]
    assert schemas["search_memory"]["required"] == ["query"]
    assert schemas["forget_memory"]["required"] == ["memory_id"]
    assert all("user_id" not in json.dumps(s) for s in schemas.values())


def test_save_search_forget(memory: DreamMemory) -> None:
    tools = by_name(create_memory_tools(memory, user_id="u1", session_id="s1"))
    saved = tools["save_memory"].call(content="The gate code of the office is 4312")
    record_id = str(saved).removeprefix("Saved memory ").removesuffix(".")
    record = memory.get(record_id, user_id="u1")
    assert (
        record.content == "The gate code of the office is 4312"
        and record.session_id == "s1"
        and not record.pinned
    )
    pinned = str(tools["save_memory"].call(content="Vegetarian", pin=True)).split()[-1].rstrip(".")
    assert not memory.get(pinned, user_id="u1").pinned  # the store did not opt in to agent pins
    found = tools["search_memory"].call(query="office gate code")
    assert f"[{record_id}]" in str(found) and "The gate code of the office is 4312" in str(found)
    assert str(tools["forget_memory"].call(memory_id=record_id)) == f"Forgot memory {record_id}."
    assert record_id not in str(tools["search_memory"].call(query="office gate code"))


async def test_async_twins(memory: DreamMemory) -> None:
    tools = by_name(create_memory_tools(memory, user_id="u1"))
    saved = await tools["save_memory"].acall(content="The gate code of the office is 4312")
    record_id = str(saved).split()[-1].rstrip(".")
    assert record_id in str(await tools["search_memory"].acall(query="gate code"))
    assert str(await tools["forget_memory"].acall(memory_id=record_id)).startswith("Forgot memory")


def test_tools_are_scoped_to_their_user(memory: DreamMemory) -> None:
    mine = by_name(create_memory_tools(memory, user_id="u1"))
    theirs = by_name(create_memory_tools(memory, user_id="u2"))
    record_id = str(mine["save_memory"].call(content="My PIN hint is blue")).split()[-1].rstrip(".")
    assert str(theirs["search_memory"].call(query="PIN hint blue")) == "No memories found."
    with pytest.raises(NotFoundError):
        theirs["forget_memory"].call(memory_id=record_id)
    assert memory.get(record_id, user_id="u1").is_active


def test_tool_errors_are_typed(memory: DreamMemory) -> None:
    tools = by_name(create_memory_tools(memory, user_id="u1"))
    with pytest.raises(ValidationError):
        tools["save_memory"].call(content="   ")
    with pytest.raises(NotFoundError):
        tools["forget_memory"].call(memory_id="no-such-id")
    with pytest.raises(ScopeError):
        create_memory_tools(memory, user_id="")
    with pytest.raises(ValidationError):
        create_memory_tools(memory, user_id="u1", k=0)


def test_as_llm_makes_a_core_llm_callable() -> None:
    llm = as_llm(MockLLM())
    assert isinstance(llm, LLM)
    assert llm("Summarise: the user likes tea.") == "Summarise: the user likes tea."
    assert as_llm(MockLLM(max_tokens=3))("anything") == "text text text"


class _FailingLLM(MockLLM):
    """LlamaIndex's MockLLM scripted to fail, as a provider outage would."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise ConnectionError("provider down")


def test_as_llm_failures_become_llm_errors() -> None:
    with pytest.raises(LLMError, match="provider down") as info:
        as_llm(_FailingLLM())("hello")
    assert isinstance(info.value.__cause__, ConnectionError)
    with pytest.raises(ValidationError):
        as_llm(lambda prompt: prompt)  # type: ignore[arg-type]


def test_a_core_store_accepts_the_bridge(tmp_path: Any) -> None:
    llm = as_llm(MockLLM())
    with DreamMemory(tmp_path / "s", llm=llm, embedder=None) as store:
        assert store.llm is llm


def test_save_memory_stores_a_semantic_fact_not_a_turn(memory: DreamMemory) -> None:
    tools = by_name(create_memory_tools(memory, user_id="u1"))
    record_id = str(tools["save_memory"].call(content="I prefer tea over coffee")).split()[-1].rstrip(".")
    record = memory.get(record_id, user_id="u1")
    assert record.layer.value == "semantic" and record.kind.value == "fact" and not record.pinned
    assert memory.get_all(user_id="u1", layer="episodic") == []
