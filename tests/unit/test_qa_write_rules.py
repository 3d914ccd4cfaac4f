"""A passing mention of a budget or a deadline is not a new value for it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.write.rules import detect_explicit

MENTIONS = [
    "The budget meeting ran long.",
    "Let's talk about the budget later.",
    "We had 3 budget talks this week.",
    "I hate budget meetings.",
    "Remember the budget review with Tom.",
    "The deadline discussion went fine.",
    "我们开了一个预算会议。",
]
VALUES = [
    ("My budget is 5000", "user/budget"),
    ("5,000 USD is my budget now", "user/budget"),
    ("Budget must not exceed 50,000 USD", "user/budget"),
    ("预算不超过人民币五万元", "user/budget"),
    ("我的预算是三万元", "user/budget"),
    ("My deadline is Friday", "user/deadline"),
    ("The deadline moved to 2024-07-15", "user/deadline"),
    ("截止日期是7月15日", "user/deadline"),
    ("Actually there is no budget limit anymore", "user/budget"),
]


@pytest.mark.parametrize("text", MENTIONS)
def test_a_passing_mention_does_not_supersede_the_stated_budget(memory: DreamMemory, text: str) -> None:
    t0 = datetime(2024, 5, 1, tzinfo=UTC)
    memory.add("My budget is 5000 USD and my deadline is 2024-06-30", user_id="u1", event_time=t0)
    memory.add(text, user_id="u1", event_time=t0 + timedelta(days=1))
    semantic = memory.get_all(user_id="u1", layer="semantic")
    assert [r.content for r in semantic if r.slot] == ["My budget is 5000 USD and my deadline is 2024-06-30"]
    explicit = detect_explicit(text)
    assert explicit is None or explicit.slot is None


@pytest.mark.parametrize(("text", "slot"), VALUES)
def test_stated_values_still_fill_the_slot(text: str, slot: str) -> None:
    explicit = detect_explicit(text)
    assert explicit is not None and explicit.slot == slot
