"""Purging the statement that replaced an older one makes the older one current again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dreammem import DreamMemory, Status

T0 = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
OLD = "I take my coffee with regular milk."
NEW = "I switched to oat milk in my coffee."


def _write(memory: DreamMemory) -> None:
    memory.add(OLD, user_id="u1", event_time=T0)
    memory.add("It rained a lot this week.", user_id="u1", event_time=T0 + timedelta(days=1))
    memory.add(NEW, user_id="u1", event_time=T0 + timedelta(days=7))


def _by_content(memory: DreamMemory, text: str) -> list[tuple[str, Status, str | None]]:
    records = memory.get_all(user_id="u1", status=None, limit=100)
    return sorted((r.layer.value, r.status, r.superseded_by) for r in records if r.content == text)


def test_the_older_statement_and_its_turn_are_current_again(memory: DreamMemory) -> None:
    _write(memory)
    assert {status for _, status, _ in _by_content(memory, OLD)} == {Status.SUPERSEDED}
    newer = [r for r in memory.get_all(user_id="u1", limit=100) if r.content == NEW]
    result = memory.purge(newer[0].id, user_id="u1")
    assert {r.content for r in memory.get_all(user_id="u1", status=None, limit=100)} >= {OLD}
    assert all(r.content != NEW for r in memory.get_all(user_id="u1", status=None, limit=100))
    back = _by_content(memory, OLD)
    assert back and all(status is Status.ACTIVE and by is None for _, status, by in back)
    assert set(result.restored) == {r.id for r in memory.get_all(user_id="u1") if r.content == OLD}
    assert memory.recall("milk in my coffee", user_id="u1", k=3).hits[0].record.content == OLD


def test_a_dry_run_says_the_same_and_changes_nothing(memory: DreamMemory) -> None:
    _write(memory)
    newer = next(r for r in memory.get_all(user_id="u1", limit=100) if r.content == NEW)
    before = _by_content(memory, OLD)
    preview = memory.purge(newer.id, user_id="u1", dry_run=True)
    assert preview.dry_run and newer.id in preview.purged
    assert _by_content(memory, OLD) == before
    done = memory.purge(newer.id, user_id="u1")
    assert (set(done.purged), set(done.restored)) == (set(preview.purged), set(preview.restored))
