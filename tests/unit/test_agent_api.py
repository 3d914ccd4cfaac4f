from __future__ import annotations

import pytest

from dreammem import DreamMemory, ScopeError
from dreammem.agent_api import (
    ChatTurn,
    forget_memory,
    forget_session,
    history_block,
    ingest_turns,
    last_user_text,
    memory_block,
    save_memory,
    search_memory,
    session_turns,
    with_memory_block,
)


def test_ingest_is_idempotent_across_calls(memory: DreamMemory) -> None:
    history = [
        ChatTurn("user", "I live in Lyon"),
        ChatTurn("assistant", "Nice city!"),
        ChatTurn("user", "ok"),
    ]
    first = ingest_turns(memory, history, user_id="u1", session_id="s1")
    again = ingest_turns(memory, [*history, ChatTurn("user", "ok")], user_id="u1", session_id="s1")
    assert len(first) == 3
    assert [r.content for r in again] == ["ok"]  # a second "ok" is a new turn
    assert ingest_turns(memory, history, user_id="u1", session_id="s2")  # another session is new


def test_ingest_uses_message_ids_and_skips_unknown_roles(memory: DreamMemory) -> None:
    turns = [ChatTurn("user", "hello", "m1"), ChatTurn("function", "x"), ChatTurn("user", "  ")]
    assert len(ingest_turns(memory, turns, user_id="u1")) == 1
    assert ingest_turns(memory, [ChatTurn("user", "hello edited", "m1")], user_id="u1") == []
    with pytest.raises(ScopeError):
        ingest_turns(memory, turns, user_id="")


def test_ingest_skips_a_reply_that_echoes_the_injected_memory_block(memory: DreamMemory) -> None:
    memory.add("Budget must not exceed 50,000 USD", user_id="u1", session_id="s0")
    block = memory_block(memory, "what is the budget?", user_id="u1")
    prompt = with_memory_block("You are helpful.", block)
    assert prompt is not None
    echo = f"system: {prompt}\nuser: what is the budget?\nassistant: "  # how an echoing model replies
    turns = [ChatTurn("user", "what is the budget?"), ChatTurn("assistant", echo)]
    written = ingest_turns(memory, turns, user_id="u1", session_id="s1")
    assert [r.content for r in written] == ["what is the budget?"]
    assert ingest_turns(memory, [ChatTurn("system", prompt)], user_id="u1", roles={"system"}) == []


def test_save_search_forget_roundtrip(memory: DreamMemory) -> None:
    record = save_memory(memory, "Prefers window seats on flights", user_id="u1")
    pinned = save_memory(memory, "Vegetarian", user_id="u1", pin=True)
    assert not pinned.pinned  # an agent pins only in a store that opts in (allow_non_user_pins)
    found = search_memory(memory, "window seats", user_id="u1")
    assert record.id in found.text
    assert any(h["id"] == record.id and "paths" in h for h in found.hits)
    assert forget_memory(memory, record.id, user_id="u1") == f"Forgot memory {record.id}."
    assert record.id not in search_memory(memory, "window seats", user_id="u1").text
    assert search_memory(memory, "anything", user_id="nobody").text == "No memories found."


def test_memory_block_and_system_prompt(memory: DreamMemory) -> None:
    memory.add("Budget must not exceed 50,000 USD", user_id="u1")
    assert memory_block(memory, None, user_id="u1") is None
    assert memory_block(memory, "   ", user_id="u1") is None
    block = memory_block(memory, "what is the budget?", user_id="u1")
    assert block is not None and "50,000 USD" in block.text
    prompt = with_memory_block("You are helpful.", block)
    assert prompt is not None and prompt.startswith("You are helpful.") and "<memory>" in prompt
    assert with_memory_block("base", None) == "base"
    assert last_user_text([ChatTurn("user", "a"), ChatTurn("assistant", "b")]) == "a"
    assert last_user_text([ChatTurn("assistant", "b")]) is None


def test_session_turns_and_forget_session(memory: DreamMemory) -> None:
    ingest_turns(
        memory,
        [ChatTurn("user", "I prefer tea", "m1"), ChatTurn("assistant", "Noted.", "m2")],
        user_id="u1",
        session_id="s1",
    )
    ingest_turns(memory, [ChatTurn("user", "other session")], user_id="u1", session_id="s2")
    ingest_turns(memory, [ChatTurn("user", "I prefer coffee now")], user_id="u1", session_id="s1")
    turns = session_turns(memory, user_id="u1", session_id="s1")
    assert [(t.role, t.content) for t in turns] == [
        ("user", "I prefer tea"),
        ("assistant", "Noted."),
        ("user", "I prefer coffee now"),
    ]
    assert turns[0].message_id == "m1" and turns[2].message_id is None
    assert session_turns(memory, user_id="u2", session_id="s1") == []
    assert forget_session(memory, user_id="u1", session_id="s1") == 3
    assert session_turns(memory, user_id="u1", session_id="s1") == []
    assert [t.content for t in session_turns(memory, user_id="u1", session_id="s2")] == ["other session"]
    # The preference extracted from the forgotten turns is long-term memory and stays.
    assert any("coffee" in h.record.content for h in memory.recall("coffee", user_id="u1"))
    with pytest.raises(ScopeError):
        session_turns(memory, user_id="", session_id="s1")


def test_memory_block_leaves_out_what_the_prompt_already_shows(memory: DreamMemory) -> None:
    memory.add("The trip to Oslo costs 1,200 EUR", user_id="u1", session_id="old")
    memory.add("How much does the trip to Oslo cost?", user_id="u1", session_id="now")
    pinned = memory.remember("Always answer in French", user_id="u1")
    query = "How much does the trip to Oslo cost?"
    plain = memory_block(memory, query, user_id="u1")
    assert plain is not None and query in plain.text
    block = memory_block(memory, query, user_id="u1", exclude=[f"  {query} ", "", "unrelated"])
    assert block is not None
    assert query not in block.text  # the visible turn is not repeated
    assert "1,200 EUR" in block.text and pinned.id in block.included
    # k still counts memories after the visible ones are dropped; a core memory that
    # did not rank never takes the only slot from a ranked one.
    one = memory_block(memory, query, user_id="u1", k=1, exclude=[query])
    assert one is not None and len(one.included) == 1 and "1,200 EUR" in one.text
    two = memory_block(memory, query, user_id="u1", k=2, exclude=[query])
    assert two is not None and len(two.included) == 2 and pinned.id in two.included


def test_history_block_queries_the_last_user_turn_and_skips_visible_turns(memory: DreamMemory) -> None:
    memory.add("The trip to Oslo costs 1,200 EUR", user_id="u1", session_id="old")
    turns = [ChatTurn("user", "How much does the trip to Oslo cost?"), ChatTurn("assistant", "Let me check.")]
    ingest_turns(memory, turns, user_id="u1", session_id="now")
    block = history_block(memory, turns, user_id="u1", session_id="now")
    assert block is not None and "1,200 EUR" in block.text
    assert "Let me check." not in block.text and "How much" not in block.text
    # An explicit query wins over the history; no query and no user turn: nothing.
    assert history_block(memory, [ChatTurn("assistant", "hi")], user_id="u1") is None
    explicit = history_block(memory, [ChatTurn("assistant", "hi")], user_id="u1", query="Oslo trip cost")
    assert explicit is not None and "1,200 EUR" in explicit.text
