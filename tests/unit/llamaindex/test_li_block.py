"""DreamMemBlock inside LlamaIndex's own Memory (real SQLite + FAISS, hashing embedder)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock, Memory, StaticMemoryBlock
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from dreammem import DreamMemory, ScopeError, ValidationError
from llamaindex_dreammem import DreamMemBlock
from llamaindex_dreammem._shared import approximate_tokenizer


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


_ENGINES: list[AsyncEngine] = []


@pytest.fixture(autouse=True)
def _close_chat_stores() -> Iterator[None]:
    """Dispose the chat stores' engines the test opened (else aiosqlite warns at exit)."""
    yield
    while _ENGINES:
        asyncio.run(_ENGINES.pop().dispose())


def short_term(*blocks: BaseMemoryBlock[Any], session_id: str = "s1", **kwargs: Any) -> Memory:
    """LlamaIndex's Memory on its default in-memory chat store, disposed after the test."""
    engine = create_async_engine("sqlite+aiosqlite:///:memory:")
    _ENGINES.append(engine)
    return Memory.from_defaults(
        session_id=session_id,
        memory_blocks=list(blocks),
        tokenizer_fn=approximate_tokenizer,
        async_engine=engine,
        **kwargs,
    )


def stored(memory: DreamMemory) -> list[str]:
    return [r.content for r in reversed(memory.get_all(user_id="u1", layer="episodic", status=None))]


def test_defaults_and_type(memory: DreamMemory) -> None:
    block = DreamMemBlock(memory=memory, user_id="u1")
    assert isinstance(block, BaseMemoryBlock)
    assert (block.name, block.priority, block.k, block.ingest_on_read) == ("dreammem", 0, 5, True)


def test_recalled_memories_appear_in_the_memory_block_of_the_prompt(memory: DreamMemory) -> None:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    memory.add("I am allergic to cats", user_id="u2", session_id="old")
    mem = short_term(DreamMemBlock(memory=memory, user_id="u1"))
    mem.put(user("Which snack with peanuts is safe?"))
    messages = mem.get()
    assert [m.role for m in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    system = messages[0].content or ""
    assert "<dreammem>" in system and "I am allergic to peanuts" in system
    assert "cats" not in system
    assert "Which snack" not in system  # visible turn not repeated


async def test_aget_recalls_for_the_given_messages(memory: DreamMemory) -> None:
    memory.add("The trip to Oslo costs 1,200 EUR", user_id="u1", session_id="old")
    block = DreamMemBlock(memory=memory, user_id="u1", ingest_on_read=False)
    text = await block.aget([user("How much is the Oslo trip?")], session_id="s1")
    assert "1,200 EUR" in text
    assert await block.aget([assistant("hi")]) == ""  # no user message: nothing to recall
    assert await block.aget(None) == ""
    assert stored(memory) == ["The trip to Oslo costs 1,200 EUR"]  # reads wrote nothing


async def test_flushed_messages_are_written_once(memory: DreamMemory) -> None:
    block = DreamMemBlock(memory=memory, user_id="u1", ingest_on_read=False)
    mem = short_term(block, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10)
    for i in range(8):
        await mem.aput((user if i % 2 == 0 else assistant)(f"message number {i} with a few more words"))
    flushed = stored(memory)
    assert flushed and flushed == [f"message number {i} with a few more words" for i in range(len(flushed))]
    # Flushing the same messages again (e.g. a retried flush) stores nothing new.
    await block.aput([user("message number 0 with a few more words")], session_id="s1")
    assert stored(memory) == flushed
    assert {r.session_id for r in memory.get_all(user_id="u1")} == {"s1"}


async def test_reads_write_current_turns_and_flushes_do_not_duplicate_them(memory: DreamMemory) -> None:
    block = DreamMemBlock(memory=memory, user_id="u1")
    mem = short_term(block, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10)
    script = [f"message number {i} with a few more words" for i in range(8)]
    for i, text in enumerate(script):
        await mem.aput((user if i % 2 == 0 else assistant)(text))
        await mem.aget()
    assert stored(memory) == script


def test_priority_zero_is_never_truncated_and_one_goes_first(memory: DreamMemory) -> None:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    filler = StaticMemoryBlock(name="notes", static_content="filler words " * 60, priority=2)
    kept = DreamMemBlock(memory=memory, user_id="u1", priority=0)
    mem = short_term(kept, filler, token_limit=150)
    mem.put(user("peanut snacks?"))
    system = mem.get()[0].content or ""
    assert "allergic to peanuts" in system and "filler" not in system  # the p2 block was dropped

    dropped = DreamMemBlock(memory=memory, user_id="u1", name="dm2", priority=1)
    small = StaticMemoryBlock(name="notes", static_content="short note", priority=0)
    mem2 = short_term(dropped, small, session_id="s2", token_limit=25)
    mem2.put(user("peanut snacks?"))
    system2 = mem2.get()[0].content or ""
    assert "short note" in system2 and "peanuts" not in system2  # p1 goes before p0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"user_id": ""}, ScopeError),
        ({"user_id": "u1", "k": 0}, ValidationError),
        ({"user_id": "u1", "max_tokens": -1}, ValidationError),
        ({"user_id": "u1", "session_id": "\n"}, ValidationError),
        ({"user_id": "u1", "name": "long term"}, ValidationError),
        ({"user_id": "u1", "name": "</memory>"}, ValidationError),
    ],
)
def test_bad_arguments_raise_typed_errors(memory: DreamMemory, kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        DreamMemBlock(memory=memory, **kwargs)
    with pytest.raises(ValidationError):
        DreamMemBlock(memory=object(), user_id="u1")  # type: ignore[arg-type]
