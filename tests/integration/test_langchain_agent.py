"""End to end: a LangChain v1 agent remembers across sessions and a store reopen.

Real pieces: create_agent, the DreamMem middleware and tools, SQLite + FAISS on
disk and the all-MiniLM-L6-v2 embedder. Only the chat model is scripted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from dreammem import DreamMemory
from langchain_dreammem import DreamMemMiddleware, DreamMemStore, create_memory_tools
from langchain_dreammem.testing import ScriptedChatModel

pytestmark = pytest.mark.integration

SMALL_TALK = [
    "My sister just moved to Lisbon for work.",
    "I watched a documentary about octopuses yesterday.",
    "Our team switched from Jira to Linear last quarter.",
    "I have been learning to bake sourdough bread.",
    "The garden needs watering twice a week in summer.",
    "My laptop battery has been draining fast lately.",
]


class Context(TypedDict):
    """The agent's runtime context: DreamMem reads the user id from it."""

    user_id: str


def _tool_call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def _run(agent: Any, text: str, *, thread: str, mode: str) -> dict[str, Any]:
    payload = {"messages": [HumanMessage(text)]}
    config: Any = {"configurable": {"thread_id": thread}}
    context = Context(user_id="alice")
    if mode == "async":
        return dict(asyncio.run(agent.ainvoke(payload, config, context=context)))
    return dict(agent.invoke(payload, config, context=context))


def _agent(memory: DreamMemory, model: ScriptedChatModel) -> Any:
    return create_agent(
        model,
        tools=create_memory_tools(memory),
        system_prompt="You are a travel assistant.",
        middleware=[DreamMemMiddleware(memory, k=5)],
        store=DreamMemStore(memory),
        checkpointer=InMemorySaver(),
        context_schema=Context,
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_preference_and_constraint_survive_a_reopen(tmp_path: Path, minilm: Any, mode: str) -> None:
    path = tmp_path / "memory"
    # Session 1: small talk, then a preference and a hard constraint; the model saves one.
    with DreamMemory(path, embedder=minilm) as memory:
        for i, text in enumerate(SMALL_TALK):
            memory.add(text, user_id="alice", session_id=f"old-{i}")
        model = ScriptedChatModel(
            replies=[
                AIMessage("Noted, window seats."),
                _tool_call("save_memory", "c1", content="Alice flies economy with one checked bag."),
                AIMessage("Understood: at most 2,000 USD."),
            ]
        )
        agent = _agent(memory, model)
        _run(agent, "I prefer window seats on flights.", thread="s1", mode=mode)
        _run(agent, "My travel budget must not exceed 2,000 USD.", thread="s1", mode=mode)

    # Session 2, new objects on the same path: the model searches its memory.
    with DreamMemory(path, embedder=minilm) as reopened:
        model = ScriptedChatModel(
            replies=[
                _tool_call("search_memory", "c2", query="seat preference and travel budget"),
                AIMessage("Booking a window seat under 2,000 USD."),
            ]
        )
        agent = _agent(reopened, model)
        out = _run(agent, "Please book my flight to Tokyo next month.", thread="s2", mode=mode)

    system = model.prompts[0][0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("You are a travel assistant.")
    assert "window seats" in system.text and "2,000 USD" in system.text
    tool_results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_results) == 1 and tool_results[0].name == "search_memory"
    found = tool_results[0].text
    assert "window seats" in found and "2,000 USD" in found
    assert all(m["id"] and m["paths"] for m in tool_results[0].artifact)
    # The model saw the tool result on its next call; the thread state holds no memory block.
    assert any(isinstance(m, ToolMessage) and "2,000 USD" in m.text for m in model.prompts[1])
    assert not any(isinstance(m, SystemMessage) for m in out["messages"])
    # What session 1 saved through the tool (user id from the runtime context) is there too.
    with DreamMemory(path, embedder=minilm) as check:
        contents = [r.content for r in check.get_all(user_id="alice", limit=1000)]
        assert "Alice flies economy with one checked bag." in contents
        assert "Please book my flight to Tokyo next month." in contents
        assert check.get_all(user_id="bob") == []
