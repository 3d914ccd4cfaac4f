"""The Neo4j record store's single reads outside the gathered read seek, too (issue 37).

:mod:`tests.integration.test_neo4j_recall_reads` checks the gathered read; these check
the other statements a recall, a write or a dream runs per call: the records a set of
records replaced (``superseded_by_any``), one step of the lineage walk
(``history_chain``), the dream queue (``queue_size``, ``queued``, ``oldest_queued_at``),
a recall's time window (``window_rowids``, ``pointing_times``), a ``find`` with a
limit (the temporal path's newest records; a session's turns) and an adapter's message
keys (``existing_message_keys``). Each statement is
profiled on a real server before and after 300 more records of the user (taken off
the queue again): its db hits must not grow with them, its answer must not change,
and the answer is checked against what the fixture says it must be.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.types import Kind, MemoryRecord, Status
from tests.integration.test_neo4j_recall_reads import MORE, _db_hits, _grow, _store
from tests.integration.test_neo4j_recall_reads import memory as memory  # the fixture, shared
from tests.integration.test_neo4j_round_trips import NOW, T0, _fill

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


@pytest.fixture
def user() -> str:
    return f"sk-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def store(memory: DreamMemory, user: str) -> Iterator[Neo4jRecordStore]:
    """The store, holding the user's transcript fixture (turns in sessions, a correction)."""
    _fill(memory, user)
    yield _store(memory)


def _steady(
    memory: DreamMemory, user: str, action: str, work: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> Any:
    """``work()``'s answer; its db hits (``action``'s) and answer must not change with more records."""
    store = _store(memory)
    first = work()
    before = _db_hits(store.client, action, work, monkeypatch)
    queued = {r.id for r in store.queued(user)}
    _grow(memory, user, MORE)
    store.dequeue(user, [r.id for r in store.queued(user) if r.id not in queued])  # the queue as it was
    after = _db_hits(store.client, action, work, monkeypatch)
    # Reading each of the 300 more records costs at least one db hit.
    assert after - before < MORE // 4, (action, before, after)
    assert work() == first
    return first


def _correction(store: Neo4jRecordStore, user: str) -> tuple[list[MemoryRecord], MemoryRecord]:
    """The fixture's tea records (its turn and its preference) and the coffee preference replacing both."""
    tea = [r for r in store.find(user, statuses=None) if r.content == "I prefer tea in the morning."]
    assert len(tea) == 2 and {r.status for r in tea} == {Status.SUPERSEDED}
    assert tea[0].superseded_by is not None and tea[0].superseded_by == tea[1].superseded_by
    (coffee,) = store.get(user, [tea[0].superseded_by])
    return sorted(tea, key=lambda r: store.rowids(user, [r.id])[r.id]), coffee


def test_the_records_a_set_replaced_are_sought(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tea, coffee = _correction(store, user)
    asked = [coffee.id, *(r.id for r in tea), "not-a-record"]

    def replaced() -> list[str]:
        return [r.id for r in store.superseded_by_any(user, asked)]

    assert _steady(memory, user, "superseded_by_any", replaced, monkeypatch) == [
        r.id for r in tea
    ]  # by row id
    assert store.superseded_by_any("someone-else", asked) == []


def test_a_step_of_the_lineage_walk_is_sought(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tea, coffee = _correction(store, user)
    preference = next(r for r in tea if r.layer is coffee.layer)

    def history() -> list[str]:  # (other fields of the records move as later writes land)
        return [r.id for r in memory.history(preference.id, user_id=user)]

    first = _steady(memory, user, "history_chain", history, monkeypatch)
    # Both ways along superseded_by: the preference's replacer, and what that replacer replaced.
    assert set(first) == {coffee.id, *(r.id for r in tea)} and first[-1] == coffee.id
    from_coffee = [
        r.id for r in memory.history(coffee.id, user_id=user)
    ]  # equal times: walk order breaks ties
    assert set(from_coffee) == set(first) and from_coffee[-1] == coffee.id


@pytest.mark.parametrize("action", ["queue_size", "queued", "oldest_queued_at"])
def test_the_dream_queue_is_sought(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, action: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = [r.id for r in store.queued(user)]
    assert queue
    reads_of = {
        "queue_size": lambda: store.queue_size(user),
        "queued": lambda: [r.id for r in store.queued(user, limit=3)],
        "oldest_queued_at": lambda: store.oldest_queued_at(user),
    }
    _steady(memory, user, action, reads_of[action], monkeypatch)
    assert store.queue_size(user) == len(queue) and [r.id for r in store.queued(user)] == queue


@pytest.mark.parametrize(
    ("since", "until", "newest_first"),
    [
        (T0 + timedelta(days=1), T0 + timedelta(days=3), True),
        (None, NOW, True),  # the newest records before now: the index's order stops the read
        (T0, None, False),
    ],
)
def test_a_time_window_is_sought(
    memory: DreamMemory,
    store: Neo4jRecordStore,
    user: str,
    since: Any,
    until: Any,
    newest_first: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def window() -> list[int]:
        return store.window_rowids(user, since=since, until=until, limit=5, newest_first=newest_first)

    first = _steady(memory, user, "window_rowids", window, monkeypatch)
    # The user's active records in the window, ordered by time then row id.
    records = [
        r
        for r in store.find(user, statuses=None)
        if r.status is Status.ACTIVE
        and (since is None or r.event_time >= since)
        and (until is None or r.event_time < until)
    ]
    rowids = store.rowids(user, [r.id for r in records])
    keyed = sorted(((r.event_time, rowids[r.id]) for r in records), reverse=newest_first)
    assert first == [rowid for _, rowid in keyed[:5]]


def test_the_windows_of_a_time_span_are_sought(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pointing() -> Any:
        return store.pointing_times(user, since=T0, until=None, limit=6)

    windows, missing = _steady(memory, user, "pointing_times", pointing, monkeypatch)
    assert set(windows) | set(missing) <= set(
        store.window_rowids(user, since=T0, limit=6, newest_first=False)
    )


def test_a_find_with_a_limit_reads_the_time_index_in_order(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def newest() -> list[str]:
        return [r.id for r in store.find(user, until=NOW, limit=4)]

    first = _steady(memory, user, "find", newest, monkeypatch)
    everything = store.find(user, until=NOW)
    assert first == [r.id for r in everything[:4]] and len(everything) > 4
    oldest = store.find(user, newest_first=False, limit=2)
    assert [r.id for r in oldest] == [r.id for r in reversed(store.find(user))][:2]


def test_a_find_in_a_session_keeps_to_the_session_index(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(A guard: with the time index there, the planner took it for a session's turns before a time.)"""

    def turns() -> list[str]:
        return [r.id for r in store.find(user, session_id="s1", kinds=[Kind.TURN], until=NOW, limit=3)]

    first = _steady(memory, user, "find", turns, monkeypatch)
    assert first == [r.id for r in store.find(user, session_id="s1")][:3]


def test_an_adapters_message_keys_are_sought(
    memory: DreamMemory, store: Neo4jRecordStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyed = [
        MemoryRecord(user_id=user, content=f"hi {n}", session_id=session, system={"message_key": f"id:m{n}"})
        for n, session in enumerate(["s1", "s1", None])
    ]
    store.insert(keyed, [r.content for r in keyed])
    asked = ["id:m0", "id:m1", "id:m2", "id:m0", "id:none"]

    def stored() -> set[str]:
        return memory.stored_message_keys(asked, user_id=user, session_id="s1")

    assert _steady(memory, user, "existing_message_keys", stored, monkeypatch) == {"id:m0", "id:m1"}
    assert store.existing_message_keys(user, None, asked) == {"id:m2"}
    assert store.existing_message_keys("someone-else", "s1", asked) == set()
