"""Adversarial input through the LangChain and LlamaIndex adapters.

What a framework passes automatically (a thread's messages, a Memory's flushed
history) may hold text DreamMem cannot store (a NUL byte, more than the content
limit). Such a turn must not break the agent or the chat for good: it is skipped
with a warning, the other turns are written, recall degrades to no memory block.
Explicit calls (tools, ``put``, a store's ``put``) still get a typed error.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import PutOp
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory

from dreammem import DreamMemory, NotFoundError, ScopeError, Status, ValidationError
from langchain_dreammem import (
    DreamMemChatMessageHistory,
    DreamMemMiddleware,
    DreamMemRetriever,
    DreamMemStore,
    create_memory_tools,
)
from langchain_dreammem.testing import ScriptedChatModel
from llamaindex_dreammem import DreamMemBlock, DreamMemMemory
from llamaindex_dreammem import DreamMemRetriever as LlamaRetriever
from llamaindex_dreammem import create_memory_tools as llama_tools

UNSTORABLE = {"nul": "see \x00 this", "huge": "x" * 1_000_001}


@pytest.mark.parametrize("bad", UNSTORABLE.values(), ids=UNSTORABLE.keys())
def test_agent_survives_a_message_memory_cannot_store(
    memory: DreamMemory, bad: str, caplog: pytest.LogCaptureFixture
) -> None:
    memory.add("My budget must not exceed 2,000 USD", user_id="alice", session_id="old")
    model = ScriptedChatModel(replies=[AIMessage("Got it."), AIMessage("2,000 USD.")])
    agent = create_agent(model, middleware=[DreamMemMiddleware(memory)], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    with caplog.at_level(logging.WARNING):
        out = agent.invoke({"messages": [HumanMessage(bad)]}, config, context={"user_id": "alice"})
    assert out["messages"][-1].content == "Got it."
    assert "\x00" not in caplog.text and "xxxx" not in caplog.text  # content is never logged
    question = {"messages": [HumanMessage("what is my budget?")]}
    out = agent.invoke(question, config, context={"user_id": "alice"})
    assert out["messages"][-1].content == "2,000 USD."
    system = model.prompts[1][0]
    assert isinstance(system, SystemMessage) and "2,000 USD" in system.text
    stored = [t.content for t in memory.working_memory(user_id="alice", session_id="t1")]
    assert stored == ["Got it.", "what is my budget?", "2,000 USD."]


@pytest.mark.parametrize("bad", UNSTORABLE.values(), ids=UNSTORABLE.keys())
def test_llamaindex_block_survives_a_message_memory_cannot_store(memory: DreamMemory, bad: str) -> None:
    memory.add("I prefer window seats", user_id="carol", session_id="old")
    chat = Memory.from_defaults(
        session_id="c1", memory_blocks=[DreamMemBlock(memory=memory, user_id="carol")], token_limit=400_000
    )
    chat.put(ChatMessage(role="user", content=bad))
    chat.get()
    chat.put(ChatMessage(role="assistant", content="Noted."))
    chat.put(ChatMessage(role="user", content="Which seat do I like?"))
    prompt = chat.get()
    assert "window seats" in str(prompt[0].content)
    stored = [t.content for t in memory.working_memory(user_id="carol", session_id="c1")]
    assert stored == ["Noted.", "Which seat do I like?"]


def test_explicit_adapter_writes_still_raise_typed_errors(memory: DreamMemory) -> None:
    with (
        DreamMemMemory.from_defaults(memory=memory, user_id="u1", session_id="s") as li,
        pytest.raises(ValidationError),
    ):
        li.put(ChatMessage(role="user", content="a\x00b"))
    history = DreamMemChatMessageHistory(memory, user_id="u1", session_id="h")
    with pytest.raises(ValidationError):
        history.add_messages([HumanMessage("fine"), HumanMessage("x" * 1_000_001)])
    save = {t.name: t for t in create_memory_tools(memory)}["save_memory"]
    assert "NUL" in save.invoke({"content": "a\x00b", "user_id": "u1"})
    assert memory.store.count() == 0
    with pytest.raises(ValidationError):
        DreamMemChatMessageHistory(memory, user_id="u1", session_id=None)  # type: ignore[arg-type]


def test_store_batch_with_an_unstorable_value_writes_nothing(memory: DreamMemory) -> None:
    store = DreamMemStore(memory)
    ops = [
        PutOp(("carol", "prefs"), "good", {"text": "likes tea"}),
        PutOp(("carol", "prefs"), "bad", {"text": "nul \x00 inside"}),
    ]
    with pytest.raises(ValidationError):
        store.batch(ops)
    with pytest.raises(ValidationError):
        store.batch([ops[0], PutOp(("carol", "prefs"), "big", {"text": "x" * 1_000_001})])
    assert store.get(("carol", "prefs"), "good") is None
    assert memory.store.count() == 0


def test_store_hostile_labels_keys_and_values_are_plain_data(memory: DreamMemory) -> None:
    store = DreamMemStore(memory)
    hostile = ["MATCH (n) DETACH DELETE n", "'); DROP TABLE records; --", 'NEAR("a" b) OR *', "\u202eevil"]
    for n, text in enumerate(hostile):
        store.put(("carol", text), text, {"text": text, "n": n})
    for n, text in enumerate(hostile):
        item = store.get(("carol", text), text)
        assert item is not None and item.value == {"text": text, "n": n}
    assert [i.key for i in store.search(("carol",), query="DROP TABLE records", limit=1)] == [hostile[1]]
    assert store.search(("dave",), query="DROP TABLE") == []
    assert store.search(("carol",), query="   ", limit=10)  # a blank query lists, like no query
    with pytest.raises(ScopeError):
        store.put(("\ud800", "x"), "k", {"text": "v"})


def test_cross_user_ids_through_every_adapter_are_not_found(memory: DreamMemory) -> None:
    secret = memory.add("Alice's locker code is zulu-4411", user_id="alice")
    lc_forget = {t.name: t for t in create_memory_tools(memory)}["forget_memory"]
    answer = lc_forget.invoke({"memory_id": secret.id, "user_id": "bob"})
    assert "no memory" in answer and "zulu" not in answer
    li_forget = {t.metadata.name: t for t in llama_tools(memory, user_id="bob")}["forget_memory"]
    with pytest.raises(NotFoundError):
        li_forget.call(memory_id=secret.id)
    with pytest.raises(NotFoundError):
        asyncio.run(li_forget.acall(memory_id=secret.id))
    assert memory.get(secret.id, user_id="alice").status is Status.ACTIVE
    assert DreamMemRetriever(memory=memory, user_id="bob").invoke("locker code 4411") == []
    assert LlamaRetriever(memory=memory, user_id="bob").retrieve("locker code 4411") == []
    li_search = {t.metadata.name: t for t in llama_tools(memory, user_id="bob")}["search_memory"]
    assert "zulu" not in str(li_search.call(query="locker code 4411"))


def test_retriever_k_zero_is_an_error_not_the_default(memory: DreamMemory) -> None:
    memory.add("kayak trip", user_id="u1")
    with pytest.raises(ValidationError):
        DreamMemRetriever(memory=memory, user_id="u1").invoke("kayak", k=0)


async def test_retrievers_async_equal_sync(memory: DreamMemory) -> None:
    for text in ["kayak trip in May", "budget is 5000 USD", "window seats please"]:
        memory.add(text, user_id="u1")
    lc = DreamMemRetriever(memory=memory, user_id="u1", k=2)
    assert [d.page_content for d in await lc.ainvoke("kayak budget")] == [
        d.page_content for d in lc.invoke("kayak budget")
    ]
    li = LlamaRetriever(memory=memory, user_id="u1", k=2)
    expected = [n.text for n in li.retrieve("kayak budget")]
    assert [n.text for n in await li.aretrieve("kayak budget")] == expected


async def test_tools_async_equal_sync(memory: DreamMemory) -> None:
    for text in ["kayak trip in May", "budget is 5000 USD"]:
        memory.add(text, user_id="u1")
    search = {t.name: t for t in create_memory_tools(memory)}["search_memory"]
    args = {"query": "kayak budget", "k": 2, "user_id": "u1"}
    assert await search.ainvoke(args) == search.invoke(args)
    li_search = {t.metadata.name: t for t in llama_tools(memory, user_id="u1")}["search_memory"]
    assert str(await li_search.acall(query="kayak budget")) == str(li_search.call(query="kayak budget"))
    async with DreamMemMemory.from_defaults(memory=memory, user_id="u1", session_id="s") as li:
        await li.aput(ChatMessage(role="user", content="Which trip did I plan?"))
        assert [m.content for m in await li.aget()] == [m.content for m in li.get()]


@pytest.mark.parametrize("index", [-1, "0", 1.5, True])
def test_store_user_index_must_be_a_position(memory: DreamMemory, index: object) -> None:
    with pytest.raises(ValidationError):
        DreamMemStore(memory, user_index=index)  # type: ignore[arg-type]
