"""DreamMemMiddleware inside a real create_agent graph, with a scripted model."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from dreammem import DreamMemory, ScopeError
from dreammem.config import DreamConfig, DreamMemConfig
from dreammem.embed import HashingEmbedder
from langchain_dreammem import DreamMemMiddleware
from langchain_dreammem._common import resolve_user_id
from langchain_dreammem.testing import ScriptedChatModel


@dataclass
class Ctx:
    user_id: str


def _system_texts(model: ScriptedChatModel) -> list[str]:
    return [p[0].text if isinstance(p[0], SystemMessage) else "" for p in model.prompts]


def test_injects_recall_for_that_call_only_and_writes_back(memory: DreamMemory) -> None:
    memory.add("My budget must not exceed 2,000 USD", user_id="alice", session_id="old")
    memory.add("Budget for bob is 10 USD", user_id="bob")
    model = ScriptedChatModel(replies=[AIMessage("Noted."), AIMessage("Again.")])
    agent = create_agent(
        model,
        system_prompt="You are a travel agent.",
        middleware=[DreamMemMiddleware(memory, k=3)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    question = {"messages": [HumanMessage("what is my budget?")]}
    out = agent.invoke(question, config, context={"user_id": "alice"})
    system = _system_texts(model)[0]
    assert system.startswith("You are a travel agent.") and "2,000 USD" in system and "10 USD" not in system
    # The block went to the model, not into the thread's state.
    assert not any(isinstance(m, SystemMessage) for m in out["messages"])
    turns = memory.working_memory(user_id="alice", session_id="t1")
    assert [(t.role.value if t.role else None, t.content) for t in turns] == [
        ("user", "what is my budget?"),
        ("assistant", "Noted."),
    ]
    # Same thread again: the whole history is passed back, nothing is written twice.
    agent.invoke({"messages": [HumanMessage("thanks")]}, config, context=Ctx("alice"))
    assert [t.content for t in memory.working_memory(user_id="alice", session_id="t1")] == [
        "what is my budget?",
        "Noted.",
        "thanks",
        "Again.",
    ]


def test_async_run_injects_and_writes(memory: DreamMemory) -> None:
    memory.add("I prefer aisle seats", user_id="alice")
    model = ScriptedChatModel(replies=[AIMessage("Sure.")])
    agent = create_agent(model, middleware=[DreamMemMiddleware(memory)])
    config: Any = {"configurable": {"thread_id": "t2"}}
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("seats?")]}, config, context={"user_id": "alice"}))
    assert "aisle seats" in _system_texts(model)[0]
    assert [t.content for t in memory.working_memory(user_id="alice", session_id="t2")] == ["seats?", "Sure."]


def test_missing_user_id_is_a_scope_error(memory: DreamMemory) -> None:
    agent = create_agent(ScriptedChatModel(replies=[AIMessage("x")]), middleware=[DreamMemMiddleware(memory)])
    for context in (None, {}, {"uid": "alice"}, Ctx("")):
        with pytest.raises(ScopeError):
            agent.invoke({"messages": [HumanMessage("hi")]}, context=context)
    assert memory.stats()["records"]["active"] == 0  # nothing written


def test_custom_key_no_recall_and_list_system_content(memory: DreamMemory) -> None:
    model = ScriptedChatModel(replies=[AIMessage("a"), AIMessage("b")])
    system = SystemMessage([{"type": "text", "text": "Base prompt."}])
    agent = create_agent(
        model, system_prompt=system, middleware=[DreamMemMiddleware(memory, user_id_key="uid")]
    )
    agent.invoke({"messages": [HumanMessage("I am planning a kayak trip")]}, context={"uid": "carol"})
    assert _system_texts(model)[0] == "Base prompt."  # nothing recalled, prompt untouched
    agent.invoke({"messages": [HumanMessage("kayak trip again")]}, context={"uid": "carol"})
    content = model.prompts[1][0].content
    assert isinstance(content, list) and content[0] == {"type": "text", "text": "Base prompt."}
    assert "kayak trip" in model.prompts[1][0].text and "<memory>" in model.prompts[1][0].text


def test_token_budget_limits_the_block(memory: DreamMemory) -> None:
    for i in range(5):
        memory.add(f"flight note {i}: " + "words " * 40, user_id="alice")
    model = ScriptedChatModel(replies=[AIMessage("a")])
    agent = create_agent(model, middleware=[DreamMemMiddleware(memory, max_tokens=80)])
    agent.invoke({"messages": [HumanMessage("flight note")]}, context={"user_id": "alice"})
    assert _system_texts(model)[0].count("flight note") == 1


def test_dream_on_end_runs_the_due_dreams(tmp_path: Any) -> None:
    config = DreamMemConfig(dream=DreamConfig(queue_limit=4))
    for dream, expected in ((False, 0), (True, 1)):
        with DreamMemory(tmp_path / f"d{dream}", embedder=HashingEmbedder(), config=config) as memory:
            replies = [AIMessage(f"answer {i}") for i in range(2)]
            agent = create_agent(
                ScriptedChatModel(replies=replies),
                middleware=[DreamMemMiddleware(memory, dream_on_end=dream)],
                checkpointer=InMemorySaver(),
            )
            for i in range(2):  # 4 turns reach the queue limit after the second run
                question = {"messages": [HumanMessage(f"question {i} about the 3 PM meeting")]}
                agent.invoke(question, {"configurable": {"thread_id": "t"}}, context={"user_id": "alice"})
            assert len(memory.dreams(user_id="alice")) == expected
            assert memory.stats(user_id="alice")["queue"] == (4 if not dream else 0)


def test_user_id_from_a_pydantic_context_and_explicit_ids_must_agree(memory: DreamMemory) -> None:
    class PydanticCtx(BaseModel):
        user_id: str

    memory.add("I prefer trains over planes", user_id="dave")
    model = ScriptedChatModel(replies=[AIMessage("ok")])
    agent = create_agent(model, middleware=[DreamMemMiddleware(memory)])
    agent.invoke({"messages": [HumanMessage("how do I travel?")]}, context=PydanticCtx(user_id="dave"))
    assert "trains over planes" in _system_texts(model)[0]
    assert resolve_user_id({"user_id": "a"}, "user_id") == "a"
    assert resolve_user_id(None, "user_id", "b") == "b"
    assert resolve_user_id({"user_id": "a"}, "user_id", "a") == "a"
    with pytest.raises(ScopeError):
        resolve_user_id({"user_id": "a"}, "user_id", "b")  # a call may not reach another user
    with pytest.raises(ScopeError):
        resolve_user_id({"user_id": 7}, "user_id")
