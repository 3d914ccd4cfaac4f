"""No user ever sees, forgets or traces another user's records."""

from __future__ import annotations

import random

import pytest

from dreammem import DreamMemory, NotFoundError, Status


def test_cross_user_get_forget_history_recall(memory: DreamMemory) -> None:
    alice = memory.add("Alice's bank PIN is 9911", user_id="alice")
    memory.add("Bob likes 9911 as a lucky number", user_id="bob")
    for call in (memory.get, memory.forget, memory.history):
        with pytest.raises(NotFoundError):
            call(alice.id, user_id="bob")
    assert memory.get(alice.id, user_id="alice").status is Status.ACTIVE
    hits = memory.recall("bank PIN 9911", user_id="bob", k=10)
    assert all(h.record.user_id == "bob" for h in hits)


def test_randomized_multi_user_workload_has_zero_leaks(memory: DreamMemory) -> None:
    rng = random.Random(7)
    words = "apple river cloud stone music garden train paper window mountain".split()
    users = [f"user-{n}" for n in range(6)]
    for _ in range(120):
        user = rng.choice(users)
        memory.add(" ".join(rng.sample(words, 4)), user_id=user)
    for _ in range(60):
        user = rng.choice(users)
        result = memory.recall(" ".join(rng.sample(words, 2)), user_id=user, k=10)
        assert result.hits
        assert {h.record.user_id for h in result} == {user}


def test_same_entity_names_stay_separate(memory: DreamMemory) -> None:
    memory.add("Order #77777 goes to Paris", user_id="a")
    memory.add("Order #77777 goes to Rome", user_id="b")
    assert [h.record.content for h in memory.recall("#77777", user_id="a")] == ["Order #77777 goes to Paris"]
