"""Retriever, chat history, LLM bridge and the public names of langchain_dreammem."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

import langchain_dreammem
from dreammem import DreamMemory, LLMError, ScopeError, ValidationError
from dreammem.llm import LLM
from langchain_dreammem import DreamMemChatMessageHistory, DreamMemRetriever, as_llm
from langchain_dreammem.testing import ScriptedChatModel


def test_public_names_are_pinned() -> None:
    assert sorted(langchain_dreammem.__all__) == [
        "DreamMemChatMessageHistory",
        "DreamMemMiddleware",
        "DreamMemRetriever",
        "DreamMemStore",
        "as_llm",
        "create_memory_tools",
    ]
    for name in langchain_dreammem.__all__:
        assert getattr(langchain_dreammem, name).__doc__


def test_retriever_returns_documents_with_trace(memory: DreamMemory) -> None:
    for text in ("I prefer window seats", "Allergic to peanuts", "Lives in Oslo", "Budget is 2,000 USD"):
        memory.add(text, user_id="u1")
    memory.add("Allergic to shellfish", user_id="u2")
    retriever = DreamMemRetriever(memory=memory, user_id="u1", k=2)
    docs = retriever.invoke("allergic")
    assert len(docs) == 2 and all(isinstance(d, Document) for d in docs)
    top = docs[0]
    assert top.page_content == "Allergic to peanuts" and top.id == top.metadata["id"]
    assert {"paths", "ranks", "path_scores", "fused_score", "score", "layer", "kind"} <= set(top.metadata)
    assert "shellfish" not in " ".join(d.page_content for d in docs)
    assert len(retriever.invoke("allergic", k=1)) == 1
    assert [d.id for d in asyncio.run(retriever.ainvoke("allergic"))] == [d.id for d in docs]
    assert "memory" not in retriever.model_dump()
    with pytest.raises(ScopeError):
        DreamMemRetriever(memory=memory, user_id="", k=2).invoke("x")


def test_history_roundtrip_and_clear(memory: DreamMemory) -> None:
    history = DreamMemChatMessageHistory(memory, user_id="u1", session_id="s1")
    history.add_messages([HumanMessage("I prefer tea"), AIMessage("Noted.")])
    history.add_user_message("ok")
    history.add_user_message("ok")  # the same words twice are two turns
    history.add_message(SystemMessage("be brief"))
    history.add_message(ToolMessage("tool said", tool_call_id="x"))
    msgs = history.messages
    assert [(m.type, m.text) for m in msgs] == [
        ("human", "I prefer tea"),
        ("ai", "Noted."),
        ("human", "ok"),
        ("human", "ok"),
        ("system", "be brief"),
        ("tool", "tool said"),
    ]
    same = msgs[0]
    history.add_messages([same])  # a message with a known id is not stored twice
    assert len(history.messages) == 6
    other = DreamMemChatMessageHistory(memory, user_id="u1", session_id="s2")
    assert other.messages == []
    history.clear()
    assert history.messages == []
    assert any("tea" in h.record.content for h in memory.recall("tea", user_id="u1"))  # the fact stays
    asyncio.run(history.aadd_messages([HumanMessage("async hello")]))
    assert [m.text for m in asyncio.run(history.aget_messages())] == ["async hello"]
    asyncio.run(history.aclear())
    assert history.messages == []
    with pytest.raises(ScopeError):
        DreamMemChatMessageHistory(memory, user_id="", session_id="s")
    with pytest.raises(ValidationError):
        DreamMemChatMessageHistory(memory, user_id="u1", session_id="")


def test_a_message_name_is_the_turns_speaker(memory: DreamMemory) -> None:
    history = DreamMemChatMessageHistory(memory, user_id="u1", session_id="s1")
    history.add_messages(
        [
            HumanMessage("We danced at the studio", name="Gina"),
            AIMessage("Gina: sounds fun"),
            HumanMessage("The floor is new", name="x" * 500),  # not a name DreamMem keeps
        ]
    )
    speakers = {r.content: r.speaker for r in memory.get_all(user_id="u1", layer="episodic")}
    assert speakers == {"We danced at the studio": "Gina", "Gina: sounds fun": None, "The floor is new": None}
    assert [m.name for m in history.messages] == ["Gina", None, None]


def test_history_under_runnable_with_message_history(memory: DreamMemory) -> None:
    model = ScriptedChatModel(replies=[AIMessage("Hi Ann."), AIMessage("You are Ann.")])
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{q}")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        chain = RunnableWithMessageHistory(
            prompt | model,
            lambda session_id: DreamMemChatMessageHistory(memory, user_id="u1", session_id=session_id),
            input_messages_key="q",
            history_messages_key="history",
        )
    config = {"configurable": {"session_id": "s9"}}
    chain.invoke({"q": "I am Ann"}, config)
    chain.invoke({"q": "who am I?"}, config)
    assert [m.text for m in model.prompts[1]] == ["I am Ann", "Hi Ann.", "who am I?"]


def test_as_llm_bridges_a_chat_model() -> None:
    llm = as_llm(FakeListChatModel(responses=["a summary"]))
    assert isinstance(llm, LLM)
    assert llm("summarise this") == "a summary"
    with pytest.raises(LLMError):
        as_llm(FakeListChatModel(responses=["   "]))("x")
    with pytest.raises(LLMError):
        as_llm(ScriptedChatModel(replies=[]))("x")  # the model raises
    seen = ScriptedChatModel(replies=[AIMessage("ok")])
    as_llm(seen)("the prompt")
    assert [m.text for m in seen.prompts[0]] == ["the prompt"]
