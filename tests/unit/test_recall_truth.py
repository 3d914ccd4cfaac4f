"""Recall shows the truth now: no junk, a real k, core memories from a budget, a relevance
floor, and plain "last time" means the newest conversation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError as PydanticError

from dreammem import DreamMemConfig, DreamMemory
from dreammem.agent_api import memory_block
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.budget import CORE_PATHS, with_core_memories
from dreammem.recall.gate import CALIBRATED_FLOORS, floor_for
from dreammem.recall.result import Hit
from dreammem.types import MemoryRecord

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[DreamMemory]:
    """A store on the hashing embedder with a relevance floor (it has no calibrated one)."""
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=0.2))
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as memory:
        yield memory


def test_filler_and_tool_echoes_stay_in_the_log_but_are_never_hits(memory: DreamMemory) -> None:
    junk = ["Got it.", "Noted.", "text text text", "The weather is nice today.", "好的，收到"]
    for n, text in enumerate(junk):
        memory.add(text, user_id="u1", session_id="s1", role="assistant" if n % 2 else "user")
    memory.add("Saved memory 0123456789abcdef0123456789abcdef.", user_id="u1", role="tool")
    fact = memory.add("The weather station on the roof needs a new battery", user_id="u1")
    for query in ["weather today", "noted got it", "text", "好的", "saved memory"]:
        result = memory.recall(query, user_id="u1", k=5)
        assert result.ids in ([], [fact.id]), query
    logged = {r.content for r in memory.get_all(user_id="u1", layer="episodic")}
    assert set(junk) <= logged  # the transcript keeps them


def test_recall_k_returns_at_most_k_and_core_memories_come_from_their_budget(gated: DreamMemory) -> None:
    hit = gated.add("The harbour sky was grey this morning", user_id="u1")
    rules = ["Never book red-eye flights", "Sign emails as Dana", "Use metric units", "Keep answers short"]
    pinned = [gated.remember(rule, user_id="u1") for rule in rules]
    one = gated.recall("grey harbour sky", user_id="u1", k=1)
    assert one.ids == [hit.id]  # a core memory never takes the only slot from a ranked hit
    five = gated.recall("grey harbour sky", user_id="u1", k=5)
    # ranked first; then pinned_max_count (2) core memories, newest first
    assert five.ids == [hit.id, pinned[3].id, pinned[2].id]
    none = gated.recall("quarterly tax filing", user_id="u1", k=1)
    assert none.ids == [pinned[3].id]  # nothing relevant: only core memory


def test_core_budget_counts_tokens_and_can_be_switched_off(tmp_path: Path) -> None:
    tight = RecallConfig(relevance_floor=0.2, pinned_max_count=5, pinned_max_tokens=12)
    with DreamMemory(tmp_path / "a", embedder=HashingEmbedder(), config=DreamMemConfig(recall=tight)) as m:
        long = m.remember("Always " + "explain every step in great detail " * 5, user_id="u1")
        short = m.remember("Reply in English", user_id="u1")
        result = m.recall("kayak rental", user_id="u1", k=5)
        assert short.id in result.ids and long.id not in result.ids
    off = RecallConfig(relevance_floor=0.2, pinned_max_count=0)
    with DreamMemory(tmp_path / "b", embedder=HashingEmbedder(), config=DreamMemConfig(recall=off)) as m:
        m.remember("Reply in English", user_id="u1")
        assert m.recall("kayak rental", user_id="u1", k=5).ids == []
        assert len(m.recall("reply in English please", user_id="u1", k=5)) == 1  # it ranks


def test_a_pinned_memory_that_ranks_is_ordered_by_relevance(gated: DreamMemory) -> None:
    pinned = gated.remember("Never book red-eye flights", user_id="u1")
    best = gated.add("Book the flights to Oslo for the conference, the Oslo flights", user_id="u1")
    result = gated.recall("Oslo conference flights", user_id="u1", k=5)
    assert result.ids[0] == best.id and pinned.id in result.ids


def test_a_pinned_memory_ranked_below_the_cut_comes_from_the_budget() -> None:
    records = [MemoryRecord(user_id="u1", content=f"trip {n}", pinned=n in (8, 20)) for n in range(30)]
    ranked = [Hit(r, 1.0 - n / 100, ("vector",)) for n, r in enumerate(records)]
    late = [h.record.content for h in with_core_memories(ranked, [], k=5, config=RecallConfig())]
    assert late == ["trip 0", "trip 1", "trip 2", "trip 8", "trip 20"]  # ranked order, within the budget
    core = Hit(MemoryRecord(user_id="u1", content="never red-eye", pinned=True), 1.0, CORE_PATHS)
    one = RecallConfig(pinned_max_count=1)
    assert [h.record.content for h in with_core_memories(ranked, [core], k=3, config=one)] == [
        "trip 0",
        "trip 1",
        "trip 8",
    ]
    off = RecallConfig(pinned_max_count=0)
    assert [h.record.content for h in with_core_memories(ranked, [], k=2, config=off)] == ["trip 0", "trip 1"]


def test_no_relevant_memory_injects_only_core_memory(gated: DreamMemory) -> None:
    gated.add("I prefer email for project updates", user_id="u1")
    gated.add("My cat is called Miso", user_id="u1")
    assert memory_block(gated, "Which Kubernetes namespace runs billing?", user_id="u1") is None
    core = gated.remember("Always answer in English", user_id="u1")
    block = memory_block(gated, "Which Kubernetes namespace runs billing?", user_id="u1")
    assert block is not None and block.included == (core.id,)
    relevant = memory_block(gated, "project updates by email?", user_id="u1")
    assert relevant is not None and "email" in relevant.text


def test_floor_lookup() -> None:
    assert floor_for("hashing-256", RecallConfig()) is None
    assert floor_for("all-MiniLM-L6-v2", RecallConfig()) == CALIBRATED_FLOORS["all-MiniLM-L6-v2"]
    assert floor_for("all-MiniLM-L6-v2", RecallConfig(relevance_floor=None)) is None
    assert floor_for("anything", RecallConfig(relevance_floor=0.4)) == 0.4


# -- "last time" ---------------------------------------------------------------------------------

SESSIONS = [
    ["We planned the hiking trip to the Alps", "Let's talk about the budget for the Alps trip"],
    ["I started learning the cello", "My cello teacher is strict about scales"],
    ["I adopted a cat named Miso", "Miso sleeps on my keyboard"],
]


def _three_sessions(memory: DreamMemory) -> None:
    for n, turns in enumerate(SESSIONS):
        memory.add_many(
            [
                {
                    "content": text,
                    "user_id": "u1",
                    "session_id": f"s{n}",
                    "event_time": T0 + timedelta(days=7 * n, minutes=i),
                }
                for i, text in enumerate(turns)
            ]
        )


@pytest.mark.parametrize(
    "query",
    [
        "What did we talk about last time?",
        "what did we discuss the previous time",
        "上次我们聊了什么",
        "上次聊到哪了？",
    ],
)
def test_plain_last_time_is_the_newest_other_conversation(memory: DreamMemory, query: str) -> None:
    _three_sessions(memory)
    now = T0 + timedelta(days=20)
    result = memory.recall(query, user_id="u1", k=5, now=now, session_id="s-now")
    assert {h.record.session_id for h in result} == {"s2"}, query
    # asked inside the newest session, "last time" is the one before it
    inside = memory.recall(query, user_id="u1", k=5, now=now, session_id="s2")
    assert {h.record.session_id for h in inside} == {"s1"}


def test_plain_first_time_is_the_oldest_conversation(memory: DreamMemory) -> None:
    _three_sessions(memory)
    result = memory.recall(
        "What did we talk about the first time?", user_id="u1", k=5, now=T0 + timedelta(days=20)
    )
    assert {h.record.session_id for h in result} == {"s0"}


def test_topical_last_time_still_finds_the_topic(memory: DreamMemory) -> None:
    _three_sessions(memory)
    result = memory.recall(
        "What did we say about the Alps trip last time?", user_id="u1", k=2, now=T0 + timedelta(days=20)
    )
    assert result[0].record.session_id == "s0"
    zh = memory.recall("上次说到大提琴老师怎么样", user_id="u1", k=2, now=T0 + timedelta(days=20))
    assert zh.ids  # a topic is named: content matching decides, not only the newest session


@pytest.mark.parametrize("bad", [2.0, -1.5, float("nan"), "high", -1])
def test_a_bad_floor_or_budget_is_a_config_error(bad: object) -> None:
    with pytest.raises(PydanticError):
        RecallConfig(relevance_floor=bad, pinned_max_count=bad if isinstance(bad, int) else 2)  # type: ignore[arg-type]
