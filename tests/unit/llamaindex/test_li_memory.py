"""DreamMemMemory: the drop-in BaseMemory (real SQLite + FAISS, hashing embedder)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.base.llms.types import ImageBlock, TextBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemory, ChatMemoryBuffer, Memory

from dreammem import DreamMemory, ScopeError, ValidationError
from dreammem.agent_api import MEMORY_PROMPT_HEADER
from llamaindex_dreammem import DreamMemMemory
from llamaindex_dreammem._shared import approximate_tokenizer


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def texts(messages: list[ChatMessage]) -> list[tuple[str, str | None]]:
    return [(m.role.value, m.content) for m in messages]


def stored(memory: DreamMemory, user_id: str = "u1") -> list[str]:
    """Contents of the episodic turn records, oldest first."""
    return [r.content for r in reversed(memory.get_all(user_id=user_id, layer="episodic", status=None))]


def test_is_a_llamaindex_memory_with_an_offline_tokenizer(li_memory: DreamMemMemory) -> None:
    assert isinstance(li_memory, BaseMemory)
    assert isinstance(li_memory.short_term, Memory)
    assert li_memory.tokenizer_fn is approximate_tokenizer
    assert li_memory.short_term.session_id == "s1" == li_memory.session_id
    assert len(approximate_tokenizer("abcdefgh")) == 2 and len(approximate_tokenizer("我喜欢茶")) == 4


def test_put_writes_long_term_and_short_term(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    li_memory.put(user("I am allergic to peanuts"))
    li_memory.put(assistant("Noted, no peanuts."))
    assert texts(li_memory.get_all()) == [
        ("user", "I am allergic to peanuts"),
        ("assistant", "Noted, no peanuts."),
    ]
    assert stored(memory) == ["I am allergic to peanuts", "Noted, no peanuts."]
    record = memory.get_all(user_id="u1", layer="episodic")[0]
    assert record.session_id == "s1"


def test_get_injects_one_system_message_recalled_for_the_last_user_message(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    memory.add("My sister lives in Lisbon", user_id="u2", session_id="other")
    li = open_li(user_id="u1")
    li.put(user("Which peanuts snack is safe for me?"))
    messages = li.get()
    assert [m.role for m in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    system = messages[0].content or ""
    assert system.startswith(MEMORY_PROMPT_HEADER)
    assert "I am allergic to peanuts" in system
    assert "Lisbon" not in system  # another user's memory never leaks
    assert "Which peanuts snack" not in system  # the visible turn is not repeated
    assert texts(li.get_all()) == [("user", "Which peanuts snack is safe for me?")]  # not stored


def test_a_message_name_is_the_turns_speaker(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    named = ChatMessage(
        role=MessageRole.USER, content="We danced at the studio", additional_kwargs={"name": "Gina"}
    )
    unusable = ChatMessage(
        role=MessageRole.USER, content="The floor is new", additional_kwargs={"name": "  "}
    )
    li_memory.put_messages([named, unusable, assistant("Gina: sounds fun")])
    speakers = {r.content: r.speaker for r in memory.get_all(user_id="u1", layer="episodic")}
    assert speakers == {"We danced at the studio": "Gina", "The floor is new": None, "Gina: sounds fun": None}


def test_input_is_the_query_when_given(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    memory.add("The trip to Oslo costs 1,200 EUR", user_id="u1", session_id="old")
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    li_memory.put(user("peanuts peanuts"))
    by_history = li_memory.get(k=1)[0].content or ""
    assert "allergic to peanuts" in by_history
    li_memory.k = 1
    by_input = li_memory.get(input="How much does the Oslo trip cost?")[0].content or ""
    assert "1,200 EUR" in by_input and "peanuts" not in by_input


def test_nothing_recalled_means_history_unchanged(li_memory: DreamMemMemory) -> None:
    assert li_memory.get() == []
    li_memory.put(assistant("Hello!"))  # no user message: no query
    assert texts(li_memory.get()) == [("assistant", "Hello!")]


def test_a_leading_system_message_is_merged_not_duplicated(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    system = ChatMessage(
        role=MessageRole.SYSTEM, blocks=[TextBlock(text="Be brief."), ImageBlock(url="http://x/y.png")]
    )
    li = open_li(user_id="u1", chat_history=[system, user("peanut snacks?")])
    messages = li.get()
    assert [m.role for m in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    assert isinstance(messages[0].blocks[1], ImageBlock)
    merged = messages[0].content or ""
    assert merged.startswith("Be brief.") and "allergic to peanuts" in merged
    assert li.get_all()[0].content == "Be brief."  # the stored history is untouched


def test_writes_are_idempotent(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    history = [user("I live in Lyon"), assistant("Nice!"), user("ok"), assistant("ok")]
    li_memory.put_messages(history)
    li_memory.set(history)  # same history again: nothing new
    li_memory.set([*history, user("ok")])  # a second "ok" from the user is a new turn
    assert stored(memory) == ["I live in Lyon", "Nice!", "ok", "ok", "ok"]
    assert len(li_memory.get_all()) == 5


def test_set_replaces_the_short_term_history(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    li_memory.put(user("first"))
    li_memory.set([user("other"), assistant("reply")])
    assert texts(li_memory.get_all()) == [("user", "other"), ("assistant", "reply")]
    assert stored(memory) == ["first", "other", "reply"]


def test_reset_clears_short_term_and_keeps_long_term(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    li_memory.put(user("I am allergic to peanuts"))
    li_memory.reset()
    assert li_memory.get_all() == []
    li_memory.put(user("I am allergic to peanuts"))  # said again after a reset: a new turn
    assert stored(memory) == ["I am allergic to peanuts", "I am allergic to peanuts"]
    li_memory.put(user("any peanut snacks?"))
    assert "allergic to peanuts" in (li_memory.get()[0].content or "")


def test_session_ids(open_li: Callable[..., DreamMemMemory], memory: DreamMemory) -> None:
    a = open_li(user_id="u1")
    b = open_li(user_id="u1")
    assert a.session_id != b.session_id and len(a.session_id) == 32
    a.put(user("hello"))
    b.put(user("hello"))  # same words in another session: stored again
    assert stored(memory) == ["hello", "hello"]


def test_any_short_term_memory_can_be_wrapped(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    buffer = ChatMemoryBuffer.from_defaults(token_limit=1000, tokenizer_fn=approximate_tokenizer)
    li = open_li(user_id="u1", short_term=buffer)
    li.put(user("peanut snacks?"))
    assert [m.role for m in li.get()] == [MessageRole.SYSTEM, MessageRole.USER]
    assert texts(buffer.get_all()) == [("user", "peanut snacks?")]


def test_max_tokens_bounds_the_block(open_li: Callable[..., DreamMemMemory], memory: DreamMemory) -> None:
    for i in range(20):
        memory.add(f"Fact {i} about peanuts and many other long words to fill the budget", user_id="u1")
    li = open_li(user_id="u1", k=20, max_tokens=60)
    li.put(user("peanuts?"))
    system = li.get()[0].content or ""
    assert 1 <= system.count("\n- ") <= 4


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"user_id": ""}, ScopeError),
        ({"user_id": None}, ScopeError),
        ({"user_id": "u1", "session_id": "\x00"}, ValidationError),
        ({"user_id": "u1", "k": 0}, ValidationError),
        ({"user_id": "u1", "max_tokens": 0}, ValidationError),
    ],
)
def test_bad_arguments_raise_typed_errors(memory: DreamMemory, kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        DreamMemMemory.from_defaults(memory=memory, **kwargs)


def test_memory_must_be_a_dreammemory() -> None:
    with pytest.raises(ValidationError, match="DreamMemory"):
        DreamMemMemory.from_defaults(memory="./path", user_id="u1")  # type: ignore[arg-type]


def test_bad_messages_are_rejected_and_nothing_is_lost(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    li = open_li(user_id="u1", session_id="s1")
    li.put(user("kept"))
    with pytest.raises(ValidationError):
        li.put("not a message")  # type: ignore[arg-type]
    too_long = "x" * (memory.config.write.max_content_chars + 1)
    with pytest.raises(ValidationError):
        li.put_messages([user("fine"), user(too_long)])
    assert texts(li.get_all()) == [("user", "kept")]
    assert stored(memory) == ["kept"]


async def test_async_methods_match_the_sync_ones(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    sync = open_li(user_id="u1", session_id="sync")
    asy = open_li(user_id="u1", session_id="async")
    script = [user("peanut snacks?"), assistant("None for you."), user("ok")]
    for message in script:
        sync.put(message)
        await asy.aput(message)
    assert texts(await asy.aget()) == texts(sync.get())
    assert texts(await asy.aget(input="peanuts")) == texts(sync.get(input="peanuts"))
    assert texts(await asy.aget_all()) == texts(sync.get_all())
    await asy.aput_messages([assistant("x")])
    sync.put_messages([assistant("x")])
    await asy.aset(script[:1])
    sync.set(script[:1])
    assert texts(await asy.aget_all()) == texts(sync.get_all())
    await asy.areset()
    sync.reset()
    assert await asy.aget_all() == sync.get_all() == []
    records = memory.get_all(user_id="u1", layer="episodic")
    by_session = {s: sorted(r.content for r in records if r.session_id == s) for s in ("sync", "async")}
    assert by_session["sync"] == by_session["async"] == sorted(["peanut snacks?", "None for you.", "ok", "x"])


async def test_async_recall_runs_off_the_event_loop(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    threads: list[int] = []
    original = memory.recall

    def recording_recall(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    memory.recall = recording_recall  # type: ignore[method-assign]
    await li_memory.aput(user("peanuts?"))
    await li_memory.aget()
    assert threads and threading.get_ident() not in threads


def test_safe_from_fresh_event_loops_in_worker_threads(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    """What LlamaIndex does in notebooks: sync calls inside a running loop, new loops in threads."""
    memory.add("I am allergic to peanuts", user_id="u1", session_id="old")
    li = open_li(user_id="u1", session_id="nb")

    async def notebook_cell() -> list[ChatMessage]:
        li.put(user("peanut snacks?"))  # sync call while a loop is running
        await li.aput(assistant("Let me check."))
        return li.get()

    results: dict[str, Any] = {"cell": asyncio.run(notebook_cell())}

    def worker(name: str) -> None:
        loop = asyncio.new_event_loop()
        try:
            results[name] = loop.run_until_complete(li.aget())
        finally:
            loop.close()

    workers = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert len(results) == 4
    for messages in results.values():
        assert texts(messages)[1:] == [("user", "peanut snacks?"), ("assistant", "Let me check.")]
        assert "allergic to peanuts" in (messages[0].content or "")
    assert stored(memory) == ["I am allergic to peanuts", "peanut snacks?", "Let me check."]


async def test_concurrent_async_calls_store_each_message_once(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    li = open_li(user_id="u1", session_id="c")
    calls = [li.aput(user(f"message {i}")) for i in range(6)] + [li.aget(input=f"q{i}") for i in range(4)]
    await asyncio.gather(*calls)
    expected = sorted(f"message {i}" for i in range(6))
    assert sorted(stored(memory)) == expected
    assert sorted(m.content or "" for m in await li.aget_all()) == expected


def test_direct_construction_validates_too(memory: DreamMemory) -> None:
    short = Memory.from_defaults(session_id="s9", tokenizer_fn=approximate_tokenizer)
    built = DreamMemMemory(memory=memory, user_id="u1", session_id="s9", short_term=short)
    assert built.memory is memory and built.k == 5
    with pytest.raises(ScopeError):
        DreamMemMemory(memory=memory, user_id=" ", session_id="s9", short_term=short)
    with pytest.raises(ValidationError):
        DreamMemMemory(memory=memory, user_id="u1", session_id="", short_term=short)


def test_input_may_be_a_chat_message(memory: DreamMemory, li_memory: DreamMemMemory) -> None:
    memory.add("The trip to Oslo costs 1,200 EUR", user_id="u1", session_id="old")
    messages = li_memory.get(input=user("How much does the Oslo trip cost?"))
    assert "1,200 EUR" in (messages[0].content or "")


def test_tool_messages_are_not_written_to_long_term_memory(
    open_li: Callable[..., DreamMemMemory], memory: DreamMemory
) -> None:
    li = open_li(user_id="u1")
    li.put_messages(
        [
            user("Book the Oslo flight"),
            ChatMessage(role=MessageRole.TOOL, content="Saved memory 0123456789abcdef0123456789abcdef."),
            ChatMessage(role=MessageRole.TOOL, content="search results: flight OSL-123 at 9:00"),
            assistant("Booked OSL-123 at 9:00."),
        ]
    )
    assert stored(memory) == ["Book the Oslo flight", "Booked OSL-123 at 9:00."]
    assert len(li.get_all()) == 4  # the short-term history still has them


def _chat_store_threads() -> set[threading.Thread]:
    """aiosqlite's worker threads (the default short-term memory's database)."""
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}


def test_close_ends_the_short_term_database_thread(open_li: Callable[..., DreamMemMemory]) -> None:
    before = _chat_store_threads()
    li = open_li(user_id="u1")
    li.put(user("hello"))  # the chat store connects: one aiosqlite worker thread
    started = _chat_store_threads() - before
    assert len(started) == 1
    li.close()
    li.close()  # idempotent
    for thread in started:
        thread.join(timeout=5)
    assert not any(t.is_alive() for t in started)


async def test_aclose_from_a_running_loop(open_li: Callable[..., DreamMemMemory]) -> None:
    before = _chat_store_threads()
    li = open_li(user_id="u1")
    await li.aput(user("hello"))
    started = _chat_store_threads() - before
    await li.aclose()
    for thread in started:
        thread.join(timeout=5)
    assert started and not any(t.is_alive() for t in started)


def test_a_with_block_closes_the_short_term_database(open_li: Callable[..., DreamMemMemory]) -> None:
    before = _chat_store_threads()
    with open_li(user_id="u1") as li:
        li.put(user("hello"))
        started = _chat_store_threads() - before
        assert len(started) == 1 and all(t.is_alive() for t in started)
    for thread in started:
        thread.join(timeout=5)
    assert not any(t.is_alive() for t in started)


async def test_an_async_with_block_closes_the_short_term_database(
    open_li: Callable[..., DreamMemMemory],
) -> None:
    before = _chat_store_threads()
    async with open_li(user_id="u1") as li:
        await li.aput(user("hello"))
        started = _chat_store_threads() - before
    for thread in started:
        thread.join(timeout=5)
    assert started and not any(t.is_alive() for t in started)
