"""The dream's small parts on their own: expiry times, the write plan, the context it anchors on."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory, Kind, Status
from dreammem.config import DreamConfig
from dreammem.dream.context import DreamContext, default_context
from dreammem.dream.forget import archived, expired
from dreammem.dream.plan import WritePlan
from dreammem.types import MemoryRecord

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _expiring(value: object, *, status: Status = Status.ACTIVE) -> MemoryRecord:
    return MemoryRecord(
        user_id="u", content=f"expires {value!r}", status=status, metadata={"expires_at": value}
    )


def test_expired_reads_iso_times_and_skips_what_it_cannot_read() -> None:
    past, future = (NOW - timedelta(minutes=1)).isoformat(), (NOW + timedelta(minutes=1)).isoformat()
    records = [
        _expiring(past),
        _expiring(future),
        _expiring(NOW.isoformat()),  # exactly now: expired
        _expiring("2026-02-30T00:00:00"),  # not a date
        _expiring("next tuesday"),
        _expiring(1_700_000_000),  # a number is not an ISO time
        _expiring(past, status=Status.ARCHIVED),  # gone already
        MemoryRecord(user_id="u", content="no expiry"),
    ]
    assert [r.content for r in expired(records, NOW)] == [records[0].content, records[2].content]


def test_a_naive_expiry_time_is_read_in_the_dreams_time_zone() -> None:
    naive = (NOW - timedelta(hours=1)).replace(tzinfo=None).isoformat()
    assert expired([_expiring(naive)], NOW)
    assert not expired([_expiring((NOW + timedelta(hours=1)).replace(tzinfo=None).isoformat())], NOW)


def test_archiving_notes_why_when_and_by_what() -> None:
    record = MemoryRecord(user_id="u", content="old note", metadata={"keep": 1})
    gone = archived(record, reason="merged", dream_id="d1", now=NOW, by="r2")
    assert gone.status is Status.ARCHIVED and gone.content == record.content
    assert gone.metadata == {"keep": 1}
    assert gone.system == {
        "archived": {"reason": "merged", "dream_id": "d1", "at": NOW.isoformat(), "by": "r2"}
    }
    assert "by" not in archived(record, reason="unused", dream_id="d1", now=NOW).system["archived"]


def test_the_plan_keeps_the_first_before_state_and_edits_inserts_in_place() -> None:
    stored = MemoryRecord(user_id="u", content="stored")
    new = MemoryRecord(user_id="u", content="inserted")
    plan = WritePlan(inserts=[new])
    with pytest.raises(ValueError, match="the state before"):
        plan.change(dataclasses.replace(stored, importance=4))
    step1 = dataclasses.replace(stored, importance=4)
    step2 = dataclasses.replace(step1, status=Status.ARCHIVED)
    plan.change(step1, stored)
    plan.change(step2)  # the before-state is known already
    assert plan.updates[stored.id] == (stored, step2)
    assert plan.current(stored) == step2
    edited = dataclasses.replace(new, importance=5)
    plan.change(edited)
    assert plan.inserts == [edited] and new.id not in plan.updates
    assert plan.current(new) == edited
    outsider = MemoryRecord(user_id="u", content="untouched")
    assert plan.current(outsider) is outsider


def test_the_context_falls_back_to_the_latest_goal_and_the_profile_in_the_store(memory: DreamMemory) -> None:
    assert default_context(memory.store, "u1", DreamConfig()) == DreamContext()
    memory.set_task_state({"goal": "plan the move"}, user_id="u1", session_id="old")
    memory.set_task_state({"goal": "renew the passport"}, user_id="u1", session_id="new")
    memory.remember("Allergic to peanuts", user_id="u1")
    memory.remember("Never book flights before 9am", user_id="u1", kind="constraint", pinned=False)
    memory.remember("Prefers window seats", user_id="u1", kind=Kind.PREFERENCE.value, pinned=False)
    memory.remember("Lives in Oslo", user_id="u1", kind="fact", pinned=False)  # a plain fact: not profile
    context = default_context(memory.store, "u1", DreamConfig(project_stage="beta"))
    assert context.task_goal == "renew the passport" and context.project_stage == "beta"
    assert context.user_profile is not None
    parts = context.user_profile.split("; ")
    assert parts[0] == "Allergic to peanuts"
    assert set(parts[1:]) == {"Never book flights before 9am", "Prefers window seats"}
    assert "Task goal: renew the passport" in context.render()
    assert default_context(memory.store, "u2", DreamConfig()).render().count("unknown") == 3


def test_configured_anchors_win_over_the_store(memory: DreamMemory) -> None:
    memory.set_task_state({"goal": "from the store"}, user_id="u1", session_id="s")
    memory.remember("Allergic to peanuts", user_id="u1")
    config = DreamConfig(task_goal="from the config", user_profile="a data engineer")
    context = default_context(memory.store, "u1", config)
    assert (context.task_goal, context.user_profile) == ("from the config", "a data engineer")
