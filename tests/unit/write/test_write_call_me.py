""" "Call me" names the user only when a name follows; otherwise it asks for a call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.write.rules import detect_explicit

NAMES = [
    "Call me Bob",
    "call me bob",
    "You can call me Liz.",
    'Just call me "The Boss"',
    "叫我小王",
    "我叫李雷",
]
CALLS = [
    "Actually, call me instead of emailing - my inbox is a mess.",
    "Please call me at 5pm",
    "Call me back tomorrow",
    "call me maybe",
    "Call me on Mondays",
    "CALL ME INSTEAD",
    "有事打电话叫我起床",
]


@pytest.mark.parametrize("text", NAMES)
def test_a_name_after_call_me_fills_the_name_slot(text: str) -> None:
    explicit = detect_explicit(text)
    assert explicit is not None and explicit.slot == "user/name"


@pytest.mark.parametrize("text", CALLS)
def test_asking_for_a_call_is_not_a_name(text: str) -> None:
    explicit = detect_explicit(text)
    assert explicit is None or explicit.slot != "user/name"


def test_call_me_instead_of_emailing_keeps_the_name(memory: DreamMemory) -> None:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    memory.add("Call me Bob", user_id="u1", event_time=t0)
    memory.add(
        "Actually, call me instead of emailing - my inbox is a mess.",
        user_id="u1",
        event_time=t0 + timedelta(days=1),
    )
    active = [r.content for r in memory.get_all(user_id="u1", layer="semantic")]
    assert "Call me Bob" in active
