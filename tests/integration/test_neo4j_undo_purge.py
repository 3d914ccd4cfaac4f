"""Undo and purge on the Neo4j backend: the same outcomes as the embedded store.

The cases the unit tests found on SQLite (a turn restored active beside a later value,
a record left superseded by a deleted one) run here against the whole store on a real
Neo4j server, whose record store implements the contract's look-ups in Cypher.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory, Status
from dreammem.embed import HashingEmbedder
from tests.neo4j_server import Neo4jServer
from tests.unit.dream.support import seed

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SLOT = "user/report format"
EXCEL = "I prefer Excel reports over PDF"


@pytest.fixture
def memory(neo4j_server: Neo4jServer) -> Iterator[DreamMemory]:
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as opened:
        yield opened


@pytest.fixture
def user() -> str:
    return f"undo-{uuid.uuid4().hex[:10]}"


def _all(memory: DreamMemory, user: str) -> dict[str, object]:
    return {r.id: r for r in memory.get_all(user_id=user, status=None, limit=1000)}


def _dangling(memory: DreamMemory, user: str) -> list[str]:
    records = {r.id: r for r in memory.get_all(user_id=user, status=None, limit=1000)}
    return [r.id for r in records.values() if r.superseded_by is not None and r.superseded_by not in records]


def _slot_values(memory: DreamMemory, user: str) -> list[str]:
    return [r.content for r in memory.get_all(user_id=user, layer="semantic") if r.slot == SLOT]


@pytest.mark.parametrize("first", [[EXCEL] * 2, ["I prefer Word reports over PDF", EXCEL]])
def test_archived_turns_come_back_superseded_when_a_later_write_won(
    memory: DreamMemory, user: str, first: list[str]
) -> None:
    seed(memory, user=user, turns=[("s1", "user", text) for text in first], start=T0)
    report = memory.dream(user_id=user)
    csv = "I prefer CSV reports over PDF"
    seed(memory, user=user, turns=[("s2", "user", csv)], start=T0 + timedelta(days=1))
    memory.undo_dream(report.dream_id, user_id=user)
    active = sorted((r.layer.value, r.content) for r in memory.get_all(user_id=user))
    assert active == [("episodic", csv), ("semantic", csv)]
    assert _dangling(memory, user) == []


def test_an_edit_of_a_dream_record_and_a_backfilled_value_are_resolved_by_undo(
    memory: DreamMemory, user: str
) -> None:
    seed(memory, user=user, turns=[("s1", "user", EXCEL)] * 3, start=T0 + timedelta(days=1))
    report = memory.dream(user_id=user)
    (pattern,) = [d.id for d in report.distilled if d.kind == "pattern"]
    memory.update(pattern, "I prefer Excel reports, landscape, over PDF", user_id=user)
    seed(memory, user=user, turns=[("s0", "user", "I prefer Word reports over PDF")], start=T0)
    memory.undo_dream(report.dream_id, user_id=user)
    assert _dangling(memory, user) == []
    assert _slot_values(memory, user) == [EXCEL]
    assert all("landscape" not in r.content for r in memory.get_all(user_id=user, status=None, limit=1000))


def test_purging_the_newer_statement_makes_the_older_current(memory: DreamMemory, user: str) -> None:
    old, new = "I take my coffee with regular milk.", "I switched to oat milk in my coffee."
    memory.add(old, user_id=user, event_time=T0)
    memory.add("It rained a lot this week.", user_id=user, event_time=T0 + timedelta(days=1))
    memory.add(new, user_id=user, event_time=T0 + timedelta(days=7))
    olds = [r for r in memory.get_all(user_id=user, status=None, limit=100) if r.content == old]
    assert olds and all(r.status is Status.SUPERSEDED for r in olds)
    newer = next(r for r in memory.get_all(user_id=user, limit=100) if r.content == new)
    preview = memory.purge(newer.id, user_id=user, dry_run=True)
    result = memory.purge(newer.id, user_id=user)
    assert set(result.restored) == set(preview.restored) == {r.id for r in olds}
    assert all(memory.get(r.id, user_id=user).is_active for r in olds)
    assert _dangling(memory, user) == []
