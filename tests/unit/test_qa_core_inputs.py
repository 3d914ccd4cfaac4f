"""Adversarial input to the DreamMemory facade: typed errors, nothing lost, nothing half-written."""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dreammem import BackendError, DreamMemError, DreamMemory, NotFoundError, Status, ValidationError
from dreammem.embed import HashingEmbedder


def _nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    return root


BAD_METADATA: list[object] = [
    {"x": math.nan},
    {"x": math.inf},
    {"x": [1.0, -math.inf]},
    {"x": "lone \ud800 surrogate"},
    {"\udc80": "surrogate key"},
    _nested(5000),
]


@pytest.mark.parametrize("metadata", BAD_METADATA, ids=["nan", "inf", "-inf", "sur-val", "sur-key", "deep"])
def test_unstorable_metadata_is_a_validation_error(memory: DreamMemory, metadata: object) -> None:
    with pytest.raises(ValidationError):
        memory.add("hello", user_id="u1", session_id="s", metadata=metadata)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.remember("hello", user_id="u1", metadata=metadata)  # type: ignore[arg-type]
    assert memory.store.count() == 0
    # The store still works for that session afterwards.
    memory.add("hello", user_id="u1", session_id="s")
    assert memory.store.count() == 1


BAD_STATES: list[object] = [{"x": math.nan}, {"goal": "\ud800"}, _nested(5000)]


@pytest.mark.parametrize("state", BAD_STATES, ids=["nan", "sur", "deep"])
def test_unstorable_task_state_is_rejected_and_cannot_block_dreams(memory: DreamMemory, state: Any) -> None:
    memory.add("We talked about the Lisbon trip", user_id="u1", session_id="s")
    with pytest.raises(ValidationError):
        memory.set_task_state(state, user_id="u1", session_id="s")  # type: ignore[arg-type]
    assert memory.task_state(user_id="u1", session_id="s") == {}
    report = memory.dream(user_id="u1")
    assert report.queued == 1


@pytest.mark.parametrize("bad_id", ["\ud800", "a\udfffb"])
def test_ids_with_lone_surrogates_are_typed_errors(memory: DreamMemory, bad_id: str) -> None:
    memory.add("something", user_id="u1")
    for call in (memory.get, memory.forget, memory.history):
        with pytest.raises(ValidationError):
            call(bad_id, user_id="u1")
    with pytest.raises(ValidationError):
        memory.undo_dream(bad_id, user_id="u1")


def test_remember_checks_pinned_and_kind(memory: DreamMemory) -> None:
    with pytest.raises(ValidationError):
        memory.remember("Allergic to peanuts", user_id="u1", pinned="no")  # type: ignore[arg-type]
    # A remembered fact is not a conversation turn (it would enter transcripts otherwise).
    with pytest.raises(ValidationError):
        memory.remember("Allergic to peanuts", user_id="u1", kind="turn", session_id="s")
    assert memory.store.count() == 0
    assert memory.working_memory(user_id="u1", session_id="s") == []


@pytest.mark.parametrize("session", [None, "", 5])
def test_session_scoped_reads_need_a_session(memory: DreamMemory, session: object) -> None:
    memory.add("turn in s1", user_id="u1", session_id="s1")
    memory.add("turn in s2", user_id="u1", session_id="s2")
    with pytest.raises(ValidationError):
        memory.working_memory(user_id="u1", session_id=session)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.task_state(user_id="u1", session_id=session)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.set_task_state({"goal": "x"}, user_id="u1", session_id=session)  # type: ignore[arg-type]


@pytest.mark.parametrize("turns", [5, None, {"content": "x", "user_id": "u1"}, "abc", b"abc"])
def test_add_many_needs_an_iterable_of_turns(memory: DreamMemory, turns: object) -> None:
    with pytest.raises(ValidationError):
        memory.add_many(turns)  # type: ignore[arg-type]
    assert memory.store.count() == 0


@pytest.mark.parametrize("paths", ["vector", b"vector", 3, ["vector", 3]])
def test_recall_paths_must_be_names(memory: DreamMemory, paths: object) -> None:
    memory.add("kayak trip in May", user_id="u1")
    with pytest.raises(ValidationError):
        memory.recall("kayak", user_id="u1", paths=paths)  # type: ignore[arg-type]


def test_closed_store_raises_a_typed_error_and_reopens_whole(tmp_path: Path) -> None:
    memory = DreamMemory(tmp_path, embedder=HashingEmbedder())
    record = memory.add("The boat is called Aurora", user_id="u1")
    memory.close()
    calls = [
        lambda: memory.add("more", user_id="u1"),
        lambda: memory.remember("more", user_id="u1"),
        lambda: memory.recall("boat", user_id="u1"),
        lambda: memory.get(record.id, user_id="u1"),
        lambda: memory.forget(record.id, user_id="u1"),
        lambda: memory.get_all(user_id="u1"),
        lambda: memory.stats(),
        lambda: memory.dream(user_id="u1"),
    ]
    for call in calls:
        with pytest.raises(DreamMemError, match="closed"):
            call()
    memory.close()  # still idempotent
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as again:
        assert again.get(record.id, user_id="u1").status is Status.ACTIVE
        assert again.recall("boat Aurora", user_id="u1").ids == [record.id]


def test_backfilled_older_value_does_not_stay_active(memory: DreamMemory) -> None:
    """Replaying an older turn after a newer one leaves one active value per slot: the newest."""
    newer = memory.add("My budget is 7000 USD", user_id="u1", event_time=datetime(2024, 2, 1, tzinfo=UTC))
    older = memory.add("My budget is 5000 USD", user_id="u1", event_time=datetime(2024, 1, 1, tzinfo=UTC))
    active = memory.get_all(user_id="u1", layer="semantic")
    assert [r.content for r in active] == ["My budget is 7000 USD"]
    stale = [r for r in memory.get_all(user_id="u1", status="superseded") if r.content == older.content]
    assert {r.layer.value for r in stale} == {"semantic", "episodic"}
    assert all(r.superseded_by == active[0].id for r in stale)
    # What add returned matches what was stored.
    assert memory.get(older.id, user_id="u1") == older
    assert memory.get(newer.id, user_id="u1").status is Status.ACTIVE
    assert "5000" not in " ".join(h.record.content for h in memory.recall("budget", user_id="u1"))
    assert {r.content for r in memory.history(active[0].id, user_id="u1") if r.layer.value == "semantic"} == {
        "My budget is 5000 USD",
        "My budget is 7000 USD",
    }


def test_other_users_ids_are_not_found_for_every_id_taking_call(memory: DreamMemory) -> None:
    mine = memory.add("Alice's locker code is 4411", user_id="alice", session_id="s")
    memory.dream(user_id="alice")
    (dream,) = memory.dreams(user_id="alice")
    for call in (memory.get, memory.forget, memory.history):
        with pytest.raises(NotFoundError):
            call(mine.id, user_id="bob")
    with pytest.raises(NotFoundError):
        memory.undo_dream(dream.dream_id, user_id="bob")
    assert memory.get(mine.id, user_id="alice").content == mine.content


def test_stats_counts_vectors_before_the_model_is_loaded(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        memory.add("kayak trip in May", user_id="u1")
        memory.add("budget talk", user_id="u2")
        memory.forget(memory.add("forgotten", user_id="u1").id, user_id="u1")
        loaded = (memory.stats()["vectors"], memory.stats(user_id="u1")["vectors"])
    with DreamMemory(tmp_path) as reopened:  # the CLI's `stats`: no embedder loaded
        assert (reopened.stats()["vectors"], reopened.stats(user_id="u1")["vectors"]) == loaded == (2, 1)


def test_a_file_that_is_not_a_database_is_a_backend_error(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("not a database " * 100)
    with pytest.raises(BackendError) as info:
        DreamMemory(bogus, embedder=HashingEmbedder())
    assert not info.value.is_retryable and isinstance(info.value.__cause__, sqlite3.DatabaseError)
    assert bogus.read_text() == "not a database " * 100  # left as it was


def test_sqlite_errors_inside_a_write_are_backend_errors_and_roll_back(memory: DreamMemory) -> None:
    memory.add("kept", user_id="u1")
    with pytest.raises(BackendError), memory.store.transaction() as conn:
        conn.execute("INSERT INTO meta VALUES ('probe', '1')")
        conn.execute("INSERT INTO no_such_table VALUES (1)")
    assert memory.store.get_meta("probe") is None
    memory.add("still works", user_id="u1")
    assert memory.store.count() == 2


def test_forgetting_a_turn_a_dream_archived_deletes_it_and_what_carries_it(memory: DreamMemory) -> None:
    """Found by the state machine: forget() said 'deleted' but left the archived turn as it was."""
    turn = memory.add("I prefer green tea over coffee", user_id="alice")
    memory.dream(user_id="alice")
    assert memory.get(turn.id, user_id="alice").status is Status.ARCHIVED
    assert memory.forget(turn.id, user_id="alice").status is Status.DELETED
    assert memory.get(turn.id, user_id="alice").status is Status.DELETED
    assert not memory.recall("green tea", user_id="alice").hits
