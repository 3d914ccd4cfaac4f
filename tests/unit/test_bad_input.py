"""Every public method rejects bad input with a typed error and writes nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dreammem import DreamMemory, ScopeError, ValidationError

BAD_CONTENT = ["", "   \n\t", None, 42, b"bytes", "\ud800 lone surrogate", "nul\x00byte", "x" * 1_000_001]
BAD_USERS = [None, "", "   ", 7, "a" * 300, "tab\tuser", "\udc80"]


@pytest.mark.parametrize("content", BAD_CONTENT)
def test_add_rejects_bad_content(memory: DreamMemory, content: object) -> None:
    with pytest.raises(ValidationError):
        memory.add(content, user_id="u1")  # type: ignore[arg-type]
    assert memory.store.count() == 0


@pytest.mark.parametrize("user", BAD_USERS)
def test_every_method_rejects_bad_user_ids(memory: DreamMemory, user: object) -> None:
    ok = memory.add("fine", user_id="u1")
    calls = [
        lambda: memory.add("hello", user_id=user),
        lambda: memory.add_many([{"content": "hello", "user_id": user}]),
        lambda: memory.remember("hello", user_id=user),
        lambda: memory.recall("hello", user_id=user),
        lambda: memory.get(ok.id, user_id=user),
        lambda: memory.forget(ok.id, user_id=user),
        lambda: memory.history(ok.id, user_id=user),
        lambda: memory.get_all(user_id=user),
        lambda: memory.working_memory(user_id=user, session_id="s"),
    ]
    for call in calls:
        with pytest.raises(ScopeError):
            call()
    assert memory.store.count() == 1


def test_unknown_role_and_bad_times(memory: DreamMemory) -> None:
    with pytest.raises(ValidationError):
        memory.add("hi", user_id="u1", role="wizard")
    with pytest.raises(ValidationError):
        memory.add("hi", user_id="u1", event_time="yesterday")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.add("hi", user_id="u1", metadata={"x": object()})
    with pytest.raises(ValidationError):
        memory.recall("hi", user_id="u1", k=0)
    with pytest.raises(ValidationError):
        memory.recall("", user_id="u1")
    assert memory.store.count() == 0


def test_naive_and_aware_datetimes_are_normalised_to_utc(memory: DreamMemory) -> None:
    naive = memory.add("naive", user_id="u1", event_time=datetime(2024, 1, 1, 12, 0))
    aware = memory.add(
        "aware", user_id="u1", event_time=datetime(2024, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    )
    assert naive.event_time == aware.event_time
    assert naive.event_time.utcoffset() == timedelta(0)


def test_one_bad_turn_rejects_the_whole_batch(memory: DreamMemory) -> None:
    with pytest.raises(ValidationError):
        memory.add_many([{"content": "good", "user_id": "u1"}, {"content": "", "user_id": "u1"}])
    with pytest.raises(ValidationError):
        memory.add_many([{"content": "good", "user_id": "u1", "colour": "red"}])
    assert memory.store.count() == 0


def test_odd_unicode_and_hostile_text_is_stored_verbatim(memory: DreamMemory) -> None:
    texts = [
        "emoji 🧠🔥 and RTL \u202eevil",
        "Cypher-ish: MATCH (n) DETACH DELETE n; '})\"`",
        "SQL-ish: '); DROP TABLE records; --",
        'FTS-ish: NEAR("a" b) OR * AND ^',
        "e\u0301 composed vs é",
    ]
    ids = [memory.add(t, user_id="u1").id for t in texts]
    for record_id in ids:
        assert memory.get(record_id, user_id="u1").content
    assert memory.recall('NEAR("a" b) OR *', user_id="u1").hits
    assert memory.recall("DROP TABLE records", user_id="u1")[0].record.content.startswith("SQL-ish")
    assert memory.store.count() == len(texts)


def test_get_with_bad_id(memory: DreamMemory) -> None:
    with pytest.raises(ValidationError):
        memory.get("", user_id="u1")
    with pytest.raises(ValidationError):
        memory.get(123, user_id="u1")  # type: ignore[arg-type]
