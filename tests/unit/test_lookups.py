"""The facade's look-ups for keyed entries and agent message sync (no store reach-ins needed)."""

from __future__ import annotations

import pytest

from dreammem import DreamMemory, ValidationError


def test_slot_records_by_slot_or_prefix_stay_in_the_user_scope(memory: DreamMemory) -> None:
    memory.remember("Ada prefers tea", user_id="u1", slot="pref:drink")
    memory.remember("Ada likes jazz", user_id="u1", slot="pref:music")
    memory.remember("Bo prefers coffee", user_id="u2", slot="pref:drink")
    assert [r.content for r in memory.slot_records(user_id="u1", slot="pref:drink")] == ["Ada prefers tea"]
    prefixed = memory.slot_records(user_id="u1", slot_prefix="pref:", oldest_first=True)
    assert [r.content for r in prefixed] == ["Ada prefers tea", "Ada likes jazz"]
    assert [r.content for r in memory.slot_records(user_id="u1", slot_prefix="pref:", limit=1)] == [
        "Ada likes jazz"
    ]
    assert memory.slot_names("pref:") == ["pref:drink", "pref:music"]


def test_a_superseded_slot_value_is_not_current(memory: DreamMemory) -> None:
    memory.remember("Ada prefers tea", user_id="u1", slot="pref:drink")
    memory.remember("Ada prefers cocoa", user_id="u1", slot="pref:drink")
    assert [r.content for r in memory.slot_records(user_id="u1", slot="pref:drink")] == ["Ada prefers cocoa"]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"slot": "a", "slot_prefix": "a"}, {"slot": ""}, {"slot": 3}, {"slot": "a", "limit": 0}],
)
def test_slot_records_reject_bad_arguments(memory: DreamMemory, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        memory.slot_records(user_id="u1", **kwargs)  # type: ignore[arg-type]


def test_session_records_keep_superseded_turns_and_drop_forgotten_ones(memory: DreamMemory) -> None:
    first, second, third = memory.add_many(
        [{"content": f"turn {n}", "user_id": "u1", "session_id": "s1", "role": "user"} for n in range(3)]
    )
    memory.add("other session", user_id="u1", session_id="s2")
    memory.forget(second.id, user_id="u1", twins=False)
    assert [r.id for r in memory.session_records(user_id="u1", session_id="s1")] == [first.id, third.id]
    assert memory.session_records(user_id="u2", session_id="s1") == []
    with pytest.raises(ValidationError):
        memory.session_records(user_id="u1", session_id="")


def test_stored_message_keys_are_per_user_and_session(memory: DreamMemory) -> None:
    memory.add_messages([{"content": "hi", "user_id": "u1", "session_id": "s1"}], ["k1"])
    memory.add_messages([{"content": "hi", "user_id": "u1"}], ["k2"])
    assert memory.stored_message_keys(["k1", "k2", "k3"], user_id="u1", session_id="s1") == {"k1"}
    assert memory.stored_message_keys(["k1", "k2"], user_id="u1", session_id=None) == {"k2"}
    assert memory.stored_message_keys(["k1"], user_id="u2", session_id="s1") == set()
