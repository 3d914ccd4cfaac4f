"""Only a request to keep something pins a memory; reminiscing and errands do not."""

from __future__ import annotations

import pytest

from dreammem.write.rules import detect_explicit


@pytest.mark.parametrize(
    "text",
    [
        "Remember: our Q3 analytics budget must not exceed 50,000 USD.",
        "Please remember I am vegan.",
        "Don't forget my birthday is on 3 May.",
        "remember this: I hate PDF reports",
        "请记住我的预算是五千元",
    ],
)
def test_imperative_remember_pins(text: str) -> None:
    found = detect_explicit(text)
    assert found is not None and found.pinned


@pytest.mark.parametrize(
    "text",
    [
        "I'll always remember our camping trip last year.",
        "Wow! What's the best part you remember from it?",
        "Remember when we went camping by the lake?",
        "I remember the time we got lost in Rome.",
        "Ok. Remember to bring the tent.",  # an errand for the listener, not something to keep
    ],
)
def test_reminiscing_does_not_pin(text: str) -> None:
    found = detect_explicit(text)
    assert found is None or not found.pinned
