from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory, Layer, NotFoundError, ScopeError, Status, ValidationError
from dreammem.embed import HashingEmbedder


def test_add_returns_episodic_record_with_trace_id(memory: DreamMemory) -> None:
    record = memory.add("We met at the Berlin office", user_id="u1", session_id="s1")
    assert record.layer is Layer.EPISODIC
    assert len(record.id) == 32
    assert memory.get(record.id, user_id="u1") == record


def test_recall_finds_by_keyword_and_vector(memory: DreamMemory) -> None:
    memory.add_many(
        [
            {"content": "The wifi password is hunter2", "user_id": "u1"},
            {"content": "Lunch was a tuna sandwich", "user_id": "u1"},
            {"content": "The car is parked on level 3", "user_id": "u1"},
        ]
    )
    result = memory.recall("what is the wifi password", user_id="u1", k=2)
    assert result[0].record.content == "The wifi password is hunter2"
    assert set(result[0].paths) == {"vector", "keyword"}
    assert result[0].ranks["keyword"] == 1
    assert result[0].path_scores["keyword"] > 0


def test_reopen_after_close_returns_everything(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with DreamMemory(path, embedder=HashingEmbedder()) as m:
        a = m.add("My favorite tea is oolong", user_id="u1", session_id="s")
        b = m.remember("Allergic to peanuts", user_id="u1")
        m.set_task_state({"goal": "book flight"}, user_id="u1", session_id="s")
        before = m.recall("tea", user_id="u1").ids
        all_before = {r.id: r for r in m.get_all(user_id="u1", status=None)}
    with DreamMemory(path, embedder=HashingEmbedder()) as m:
        assert m.get(a.id, user_id="u1") == all_before[a.id]  # recall above touched it
        assert m.get(b.id, user_id="u1").pinned
        assert {r.id: r.content for r in m.get_all(user_id="u1", status=None)} == {
            k: v.content for k, v in all_before.items()
        }
        assert m.recall("tea", user_id="u1").ids == before
        assert m.task_state(user_id="u1", session_id="s") == {"goal": "book flight"}
        assert m.stats(user_id="u1")["vectors"] == len(all_before)


def test_faiss_file_rebuilt_when_stale(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as m:
        m.add("first memory about kayaks", user_id="u1")
    (tmp_path / "vectors.faiss").unlink()
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as m:
        assert m.recall("kayaks", user_id="u1")[0].record.content == "first memory about kayaks"


def test_k_is_real_with_a_pinned_memory(memory: DreamMemory) -> None:
    memory.add("The sky was grey over the harbour", user_id="u1")
    memory.remember("Always answer in English", user_id="u1")
    one = memory.recall("grey harbour sky", user_id="u1", k=1)
    assert [h.record.content for h in one] == ["The sky was grey over the harbour"]
    assert len(memory.recall("grey harbour sky", user_id="u1", k=5)) == 2


def test_explicit_preference_supersedes_older_value(memory: DreamMemory) -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    memory.add("My favorite color is blue", user_id="u1", event_time=t0)
    memory.add("Actually, my favorite color is green", user_id="u1", event_time=t0 + timedelta(days=1))
    semantic = memory.get_all(user_id="u1", layer="semantic", status=None)
    by_status = {r.status: r for r in semantic}
    assert by_status[Status.ACTIVE].content.endswith("green")
    old = by_status[Status.SUPERSEDED]
    assert old.superseded_by == by_status[Status.ACTIVE].id
    assert old.valid_to == t0 + timedelta(days=1)
    contents = [h.record.content for h in memory.recall("favorite color", user_id="u1")]
    assert "My favorite color is blue" not in contents
    assert [r.content for r in memory.history(old.id, user_id="u1")][-1].endswith("green")


def test_chinese_explicit_preference_and_recall(memory: DreamMemory) -> None:
    memory.add("我的预算是三万元", user_id="u1")
    memory.add("以后请用中文回答我", user_id="u1")
    memory.add("今天天气很好，我们去公园散步了", user_id="u1")
    semantic = memory.get_all(user_id="u1", layer="semantic")
    assert {r.slot for r in semantic} == {"user/budget", "user/reply language"}
    assert memory.recall("预算", user_id="u1", k=1)[0].record.content == "我的预算是三万元"


def test_forget_is_soft_and_leaves_recall(memory: DreamMemory) -> None:
    record = memory.add("Door code is 4471", user_id="u1")
    forgotten = memory.forget(record.id, user_id="u1")
    assert forgotten.status is Status.DELETED
    assert memory.get(record.id, user_id="u1").status is Status.DELETED
    assert record.id not in memory.recall("door code", user_id="u1").ids


def test_key_entities_are_tagged(memory: DreamMemory) -> None:
    record = memory.add("Order #55123 costs $1,250 and is due 2024-05-01", user_id="u1")
    assert {"#55123", "$1,250", "2024-05-01"} <= set(record.entities)
    assert record.importance == 4


def test_working_memory_keeps_last_turns(memory: DreamMemory) -> None:
    for n in range(12):
        memory.add(f"turn number {n}", user_id="u1", session_id="s1")
    window = memory.working_memory(user_id="u1", session_id="s1")
    assert [r.content for r in window] == [f"turn number {n}" for n in range(4, 12)]


def test_recall_updates_access_but_not_confidence(memory: DreamMemory) -> None:
    record = memory.add("Meeting with Ana on Friday", user_id="u1")
    memory.recall("Ana meeting", user_id="u1")
    memory.recall("Ana meeting", user_id="u1")
    after = memory.get(record.id, user_id="u1")
    assert after.access_count == 2
    assert after.last_accessed_at is not None
    assert after.confidence == record.confidence


def test_tool_errors_get_low_priority(memory: DreamMemory) -> None:
    record = memory.add("ERROR: timeout calling the API", user_id="u1", role="tool")
    assert record.priority.name == "LOW"


async def test_async_twins_match_sync(memory: DreamMemory) -> None:
    record = await memory.aadd("Async memories about rivers", user_id="u1")
    sync = memory.recall("rivers", user_id="u1")
    result = await memory.arecall("rivers", user_id="u1")
    assert result.ids == sync.ids == [record.id]
    assert (await memory.aget(record.id, user_id="u1")).id == record.id


def test_other_users_records_are_not_found(memory: DreamMemory) -> None:
    record = memory.add("secret", user_id="alice")
    with pytest.raises(NotFoundError):
        memory.get(record.id, user_id="bob")
    with pytest.raises(ScopeError):
        memory.get(record.id, user_id="")


def test_forgetting_a_turn_forgets_the_fact_written_from_it(memory: DreamMemory) -> None:
    turn = memory.add("I prefer aisle seats on long flights", user_id="u1")
    twin = memory.get_all(user_id="u1", layer="semantic")[0]
    assert twin.provenance == (turn.id,)
    memory.forget(turn.id, user_id="u1")
    assert memory.get(twin.id, user_id="u1").status is Status.DELETED
    assert not memory.recall("aisle seats", user_id="u1").hits
    again = memory.add("I prefer window seats now", user_id="u1")
    fact = next(r for r in memory.get_all(user_id="u1", layer="semantic") if r.is_active)
    memory.forget(fact.id, user_id="u1")  # the other way round
    assert memory.get(again.id, user_id="u1").status is Status.DELETED


@pytest.mark.parametrize(
    "question", ["What is my budget for the trip?", "我的预算是多少？", "Which seat do I like?"]
)
def test_questions_never_overwrite_facts(memory: DreamMemory, question: str) -> None:
    memory.add("My budget is 3,000 USD", user_id="u1")
    memory.add(question, user_id="u1")
    facts = memory.get_all(user_id="u1", layer="semantic", status=None)
    assert [(f.content, f.status) for f in facts] == [("My budget is 3,000 USD", Status.ACTIVE)]


def test_a_budget_in_chinese_supersedes_one_in_english(memory: DreamMemory) -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    memory.add("My budget is 3,000 USD", user_id="u1", event_time=t0)
    memory.add("我的预算是两万元人民币", user_id="u1", event_time=t0 + timedelta(days=1))
    active = memory.get_all(user_id="u1", layer="semantic")
    assert [r.content for r in active] == ["我的预算是两万元人民币"]


async def test_the_speaker_is_written_by_every_write_call_and_exported(memory: DreamMemory) -> None:
    one = memory.add("I prefer oolong tea", user_id="u1", speaker=" Gina ")
    many = memory.add_many([{"content": "We met at the studio", "user_id": "u1", "speaker": "小王"}])
    later = await memory.aadd("The floor is new", user_id="u1", speaker="Jon")
    (unnamed,) = await memory.aadd_many([{"content": "Gina: hello", "user_id": "u1"}])
    assert [one.speaker, many[0].speaker, later.speaker, unnamed.speaker] == ["Gina", "小王", "Jon", None]
    fact = memory.get_all(user_id="u1", layer="semantic")[0]  # written from Gina's preference
    assert fact.speaker == "Gina"
    assert memory.get(one.id, user_id="u1") == one

    with DreamMemory(None, embedder=HashingEmbedder()) as other:
        other.import_(memory.export(user_id="u1").splitlines(), user_id="copy")
        assert {r.content: r.speaker for r in other.get_all(user_id="copy", layer="episodic")} == {
            "I prefer oolong tea": "Gina",
            "We met at the studio": "小王",
            "The floor is new": "Jon",
            "Gina: hello": None,
        }


@pytest.mark.parametrize("speaker", ["", "   ", "x" * 101, "Gi\nna", 7, ["Gina"]])
def test_a_speaker_that_is_no_short_name_is_refused(memory: DreamMemory, speaker: object) -> None:
    with pytest.raises(ValidationError):
        memory.add("hello", user_id="u1", speaker=speaker)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.add_many([{"content": "hello", "user_id": "u1", "speaker": speaker}])
    assert memory.get_all(user_id="u1") == []
