"""End to end: LlamaIndex chat engines and a FunctionAgent remember across sessions.

Each test runs session 1, closes the store, REOPENS it (a new DreamMemory on the same
path, real MiniLM embeddings) and runs session 2 with an LLM that echoes its prompt
(LlamaIndex's MockLLM) or records it (MockFunctionCallingLLM). What session 2's LLM
received must contain the preference stated in session 1, and never another user's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.chat_engine import CondensePlusContextChatEngine, ContextChatEngine, SimpleChatEngine
from llama_index.core.chat_engine.types import BaseChatEngine
from llama_index.core.llms import ChatMessage, MessageRole, MockFunctionCallingLLM, MockLLM
from llama_index.core.workflow import Context

from dreammem import DreamMemory
from dreammem.agent_api import MEMORY_PROMPT_HEADER
from llamaindex_dreammem import DreamMemMemory, DreamMemRetriever, create_memory_tools

pytestmark = pytest.mark.integration

PREFERENCE = "I prefer window seats when I fly."
OTHER_USER = "I prefer aisle seats when I fly."
QUESTION = "Please book my flight to Oslo. Which seat should I pick?"


@pytest.fixture(autouse=True)
def _openai_defaults_are_never_resolved(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Resolving Settings.llm / Settings.embed_model (OpenAI by default) fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("LlamaIndex Settings default (OpenAI) was resolved")

    monkeypatch.setattr("llama_index.core.settings.resolve_llm", refuse)
    monkeypatch.setattr("llama_index.core.settings.resolve_embed_model", refuse)
    assert Settings._llm is None and Settings._embed_model is None  # noqa: SLF001 - LlamaIndex offers no public way to ask whether a default was resolved
    yield
    assert Settings._llm is None and Settings._embed_model is None  # noqa: SLF001 - LlamaIndex offers no public way to ask whether a default was resolved


EngineFactory = Callable[[DreamMemory, DreamMemMemory, Any], BaseChatEngine]


def simple(store: DreamMemory, memory: DreamMemMemory, llm: Any) -> BaseChatEngine:
    return SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt="You book travel.")


def context(store: DreamMemory, memory: DreamMemMemory, llm: Any) -> BaseChatEngine:
    retriever = DreamMemRetriever(memory=store, user_id="alice", k=3)
    return ContextChatEngine.from_defaults(retriever=retriever, memory=memory, llm=llm)


def condense_plus_context(store: DreamMemory, memory: DreamMemMemory, llm: Any) -> BaseChatEngine:
    retriever = DreamMemRetriever(memory=store, user_id="alice", k=3)
    # The echoing MockLLM "condenses" to the question itself with this prompt.
    return CondensePlusContextChatEngine.from_defaults(
        retriever=retriever, memory=memory, llm=llm, condense_prompt="{question}"
    )


ENGINES = {"simple": simple, "context": context, "condense_plus_context": condense_plus_context}


def seed_other_user(path: Path, minilm: Any) -> None:
    with (
        DreamMemory(path, embedder=minilm) as store,
        DreamMemMemory.from_defaults(memory=store, user_id="bob") as memory,
    ):
        memory.put(ChatMessage(role=MessageRole.USER, content=OTHER_USER))


async def chat(engine: BaseChatEngine, message: str, use_async: bool) -> str:
    if use_async:
        return str(await engine.achat(message))
    return str(await asyncio.to_thread(engine.chat, message))


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("engine_name", list(ENGINES))
async def test_chat_engine_remembers_across_a_reopened_store(
    tmp_path: Path, minilm: Any, engine_name: str, use_async: bool
) -> None:
    make = ENGINES[engine_name]
    path = tmp_path / "store"
    seed_other_user(path, minilm)

    # Session 1: the user states a preference; the model's replies are filler.
    with (
        DreamMemory(path, embedder=minilm) as store,
        DreamMemMemory.from_defaults(memory=store, user_id="alice") as memory,
    ):
        engine = make(store, memory, MockLLM(max_tokens=3))
        await chat(engine, PREFERENCE, use_async)
        await chat(engine, "My dog is called Biscuit.", use_async)
        first_session = memory.session_id

    # Session 2: a new process would do exactly this.
    with (
        DreamMemory(path, embedder=minilm) as store,
        DreamMemMemory.from_defaults(memory=store, user_id="alice") as memory,
    ):
        assert memory.session_id != first_session and memory.get_all() == []
        engine = make(store, memory, MockLLM())  # echoes the prompt it receives
        prompt = await chat(engine, QUESTION, use_async)
        # The echoed reply (it carries the memory block) is no new memory; the question is.
        stored = [r.content for r in store.get_all(user_id="alice", status=None, limit=1000)]
        assert QUESTION in stored and not any(MEMORY_PROMPT_HEADER in text for text in stored)

    assert "aisle seats" not in prompt  # bob's memory never reaches alice's prompt
    before, header, after = prompt.partition(MEMORY_PROMPT_HEADER)
    assert header, "no memory block in the prompt"
    assert "window seats" in after.split("</memory>")[0]  # DreamMemMemory's system block
    # The engines with a retriever got it from DreamMemRetriever's nodes as well.
    assert ("window seats" in before) is (engine_name != "simple")


def scripted(calls: list[Sequence[ChatMessage]], steps: list[ChatMessage]) -> MockFunctionCallingLLM:
    """A function-calling mock that records the messages of each call and plays ``steps``."""
    script = iter(steps)

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        calls.append(list(messages))
        return next(script)

    return MockFunctionCallingLLM(response_generator=respond)


def tool_call(name: str, **kwargs: Any) -> ChatMessage:
    block = ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=kwargs)
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[block])


def answer(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def run_agent(
    store: DreamMemory, memory: DreamMemMemory, llm: MockFunctionCallingLLM, message: str
) -> Awaitable[Any]:
    agent = FunctionAgent(
        tools=create_memory_tools(store, user_id="alice"), llm=llm, system_prompt="You book travel."
    )
    return agent.run(user_msg=message, memory=memory, ctx=Context(agent))


async def test_function_agent_searches_memory_in_a_later_session(tmp_path: Path, minilm: Any) -> None:
    path = tmp_path / "store"
    seed_other_user(path, minilm)

    calls_1: list[Sequence[ChatMessage]] = []
    with (
        DreamMemory(path, embedder=minilm) as store,
        DreamMemMemory.from_defaults(memory=store, user_id="alice") as memory,
    ):
        llm = scripted(
            calls_1, [tool_call("save_memory", content="Alice prefers window seats"), answer("Saved.")]
        )
        result = await run_agent(store, memory, llm, "Note that " + PREFERENCE.lower())
        assert str(result) == "Saved."
        assert any("Saved memory" in (m.content or "") for m in calls_1[1] if m.role == MessageRole.TOOL)

    calls_2: list[Sequence[ChatMessage]] = []
    with (
        DreamMemory(path, embedder=minilm) as store,
        DreamMemMemory.from_defaults(memory=store, user_id="alice") as memory,
    ):
        steps = [
            tool_call("search_memory", query="seat preference when flying"),
            answer("Window seat booked."),
        ]
        result = await run_agent(store, memory, scripted(calls_2, steps), QUESTION)
        assert str(result) == "Window seat booked."

    first, second = calls_2
    injected = next(m.content or "" for m in first if MEMORY_PROMPT_HEADER in (m.content or ""))
    assert "window seats" in injected and "aisle" not in injected
    tool_results = [m.content or "" for m in second if m.role == MessageRole.TOOL]
    assert len(tool_results) == 1
    assert "Alice prefers window seats" in tool_results[0] and "aisle" not in tool_results[0]
    assert first[-1].role == MessageRole.USER and first[-1].content == QUESTION


def test_function_agent_from_sync_code(tmp_path: Path, minilm: Any) -> None:
    """The same agent driven with asyncio.run from plain sync code (a script or a CLI)."""
    with DreamMemory(tmp_path / "store", embedder=minilm) as store:
        store.add(PREFERENCE, user_id="alice", session_id="earlier")
        calls: list[Sequence[ChatMessage]] = []
        with DreamMemMemory.from_defaults(memory=store, user_id="alice") as memory:

            async def main() -> Any:
                return await run_agent(store, memory, scripted(calls, [answer("ok")]), QUESTION)

            assert str(asyncio.run(main())) == "ok"
            assert "window seats" in "".join(m.content or "" for m in calls[0])
            assert [m.content for m in memory.get_all()] == [QUESTION, "ok"]


def test_the_openai_guard_is_armed() -> None:
    """Every test here would fail if anything resolved a LlamaIndex default model."""
    with pytest.raises(AssertionError, match="OpenAI"):
        _ = Settings.llm
    with pytest.raises(AssertionError, match="OpenAI"):
        _ = Settings.embed_model
