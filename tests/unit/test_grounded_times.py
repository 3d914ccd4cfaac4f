"""Relative dates grounded once per record: stored at write time, filled lazily for older rows."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.dates.grounding import GroundedTimes, ground_records, grounded_window
from dreammem.dates.parse import TimeWindow
from dreammem.errors import BackendError
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.temporal import TemporalPath
from dreammem.stores.base import REQUIRED_CAPABILITIES, RecordCapability
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import MemoryRecord

SAID = datetime(2022, 1, 3, 9, tzinfo=UTC)
NOW = SAID + timedelta(days=600)
TEXTS = [
    "We hiked near the lake last summer",
    "Bought a kayak yesterday",
    "Painted the fence two weeks ago",
    "The concert was last month",
    "Lunch with Ana, nothing special",
    "I start the new job next month",
    "我上周去了北京",
    "It cost 1999 dollars last week",
]
QUESTIONS = ["what did we do in summer 2022?", "what happened in March 2022", "kayak in May 2022", "去年五月"]


def _fill(memory: DreamMemory, user: str = "u1", count: int = 64) -> list[MemoryRecord]:
    return memory.add_many(
        [
            {
                "content": f"{TEXTS[n % len(TEXTS)]} ({n})",
                "user_id": user,
                "event_time": SAID + timedelta(days=9 * n),
            }
            for n in range(count)
        ]
    )


def _rowids(memory: DreamMemory, user: str) -> dict[int, MemoryRecord]:
    records = memory.store.find(user, statuses=None)
    rowids = memory.store.rowids(user, [r.id for r in records])
    return {rowids[r.id]: r for r in records}


class _Counting:
    """The record store, counting the rows read by row id (and hiding capabilities on request)."""

    def __init__(
        self, inner: SQLiteRecordStore, *, capabilities: frozenset[RecordCapability] | None = None
    ) -> None:
        self._inner = inner
        self.capabilities = inner.capabilities if capabilities is None else capabilities
        self.rows_read = 0

    def get_by_rowids(self, user_id: str, rowids: list[int]) -> dict[int, MemoryRecord]:
        self.rows_read += len(rowids)
        return self._inner.get_by_rowids(user_id, rowids)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _search(path: TemporalPath, user: str = "u1") -> list[list[Candidate]]:
    return [path.search(RecallQuery(text=q, user_id=user, limit=10, now=NOW)) for q in QUESTIONS]


def test_every_written_record_is_grounded_in_its_write(memory: DreamMemory) -> None:
    _fill(memory)
    rows = _rowids(memory, "u1")
    stored = memory.store.grounded_times("u1", list(rows))
    assert set(stored) == set(rows)  # turns and the facts written from them, with or without a date
    for rowid, record in rows.items():
        expected = grounded_window(
            record.content, record.event_time, common_forms=False
        )  # dateparser's answer
        span = stored[rowid]
        assert (None if span is None else TimeWindow(*span)) == expected
    assert any(span is None for span in stored.values()) and any(stored.values())


def test_a_windowed_recall_reads_no_record_to_ground_and_matches_the_cache_path(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(memory)
    counting = _Counting(memory.store)
    stored = _search(TemporalPath(counting, memory.vector_index, memory.embedder))  # type: ignore[arg-type]
    assert any(stored) and counting.rows_read == 0
    # A backend without the capability keeps a per-process cache: the same candidates, and
    # a second search grounds (parses) nothing again.
    parsed: list[str] = []

    def counted(text: str, said_at: datetime) -> TimeWindow | None:
        parsed.append(text)
        return grounded_window(text, said_at)

    monkeypatch.setattr("dreammem.dates.grounding.grounded_window", counted)
    cached = _Counting(memory.store, capabilities=frozenset())
    path = TemporalPath(cached, memory.vector_index, memory.embedder)  # type: ignore[arg-type]
    assert _search(path) == stored and parsed
    parsed.clear()
    assert _search(path) == stored and parsed == []


def test_the_cache_grounds_an_edited_row_again(memory: DreamMemory) -> None:
    """Without the capability, a row whose text changed since it was cached is grounded anew."""
    kayak = memory.add("Bought a kayak yesterday", user_id="u1", event_time=datetime(2022, 9, 2, tzinfo=UTC))
    rowid = memory.store.rowids("u1", [kayak.id])[kayak.id]
    cached = _Counting(memory.store, capabilities=frozenset())
    path = TemporalPath(cached, memory.vector_index, memory.embedder)  # type: ignore[arg-type]

    def found(question: str) -> list[int]:
        return [c.rowid for c in path.search(RecallQuery(text=question, user_id="u1", limit=5, now=NOW))]

    assert rowid in found("kayak on 1 September 2022") and rowid not in found("kayak in July 2022")
    memory.update(kayak.id, "Bought a kayak last summer", user_id="u1")
    assert rowid in found("kayak in July 2022")


def test_an_older_store_is_grounded_on_first_use_and_written_back(memory: DreamMemory) -> None:
    _fill(memory)
    expected = _search(TemporalPath(memory.store, memory.vector_index, memory.embedder))
    memory.store.execute("DELETE FROM grounded_times")  # as a store written before migration 14
    counting = _Counting(memory.store)
    path = TemporalPath(counting, memory.vector_index, memory.embedder)  # type: ignore[arg-type]
    assert _search(path) == expected and counting.rows_read > 0
    assert memory.store.grounded_times("u1", list(_rowids(memory, "u1")))  # written back
    counting.rows_read = 0
    fresh = TemporalPath(counting, memory.vector_index, memory.embedder)  # type: ignore[arg-type]
    assert _search(fresh) == expected and counting.rows_read == 0  # another path (process) reads none


def test_an_edit_grounds_the_new_text_and_undo_and_purge_keep_it_right(memory: DreamMemory) -> None:
    kayak = memory.add("Bought a kayak yesterday", user_id="u1", event_time=datetime(2022, 9, 2, tzinfo=UTC))
    rowid = memory.store.rowids("u1", [kayak.id])[kayak.id]
    day = (datetime(2022, 9, 1, tzinfo=UTC), datetime(2022, 9, 2, tzinfo=UTC))
    assert memory.store.grounded_times("u1", [rowid]) == {rowid: day}
    memory.update(kayak.id, "Bought a kayak last summer", user_id="u1")
    assert rowid not in memory.store.grounded_times("u1", [rowid])  # the old window is gone with the old text
    path = TemporalPath(memory.store, memory.vector_index, memory.embedder)
    july = path.search(RecallQuery(text="kayak in July 2022", user_id="u1", limit=5, now=NOW))
    assert rowid in [c.rowid for c in july]
    summer = (datetime(2022, 6, 1, tzinfo=UTC), datetime(2022, 9, 1, tzinfo=UTC))
    assert memory.store.grounded_times("u1", [rowid]) == {rowid: summer}
    memory.purge(kayak.id, user_id="u1")
    assert memory.store.grounded_times("u1", [rowid]) == {}
    assert memory.store.fetchall("SELECT COUNT(*) FROM grounded_times")[0][0] == 0


def test_a_dream_and_its_undo_leave_every_record_grounded(memory: DreamMemory) -> None:
    _fill(memory, count=24)
    report = memory.dream(user_id="u1")
    rows = _rowids(memory, "u1")
    assert set(memory.store.grounded_times("u1", list(rows))) == set(rows)  # the dream's records too
    memory.undo_dream(report.dream_id, user_id="u1")
    after = _rowids(memory, "u1")
    assert set(memory.store.grounded_times("u1", list(after))) == set(after)
    orphans = "SELECT COUNT(*) FROM grounded_times WHERE rowid NOT IN (SELECT rowid FROM records)"
    assert memory.store.fetchall(orphans)[0][0] == 0


def test_grounded_times_never_cross_users(memory: DreamMemory) -> None:
    _fill(memory, "u1", 16)
    _fill(memory, "u2", 16)
    theirs = list(_rowids(memory, "u2"))
    assert memory.store.grounded_times("u1", theirs) == {}
    wrong = (datetime(1999, 1, 1, tzinfo=UTC), datetime(2000, 1, 1, tzinfo=UTC))
    memory.store.put_grounded_times("u1", dict.fromkeys(theirs, wrong))  # not u1's rows: skipped
    assert wrong not in memory.store.grounded_times("u2", theirs).values()
    assert [c for q in _search(TemporalPath(memory.store, memory.vector_index, memory.embedder)) for c in q]


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "yesterday " * 20_000,
        "last week, 2023-02-30, 13月45日, yesterday in Maytember" * 500,
        "\x00\ud800 yesterday",
        "我上周 yesterday 三天前 last summer since 1999 until next month",
    ],
)
def test_odd_text_grounds_to_a_window_or_nothing(text: str) -> None:
    window = grounded_window(text, SAID)
    assert window is None or isinstance(window, TimeWindow)


def test_a_store_without_the_capability_is_left_alone_at_write_time() -> None:
    class _Plain(SQLiteRecordStore):
        capabilities = REQUIRED_CAPABILITIES

    store = _Plain()
    record = MemoryRecord(user_id="u1", content="we met yesterday", event_time=SAID, created_at=SAID)
    (rowid,) = store.insert([record], ["we met yesterday"])
    ground_records(store, [record], [rowid])
    assert store.grounded_times("u1", [rowid]) == {}
    cache = GroundedTimes(store, capacity=2)
    windows = cache.ground("u1", {n: record for n in range(5)})
    assert windows[0] == grounded_window(record.content, SAID) and len(cache) == 2
    assert cache.known({3: record, 4: record}) == {3: windows[3], 4: windows[4]}
    assert cache.known({0: record}) == {}
    assert cache.known({3: dataclasses.replace(record, content="we met last week")}) == {}  # an edit


def test_a_store_that_cannot_keep_the_windows_still_answers(
    memory: DreamMemory, caplog: pytest.LogCaptureFixture
) -> None:
    class _ReadOnly(_Counting):
        def put_grounded_times(self, user_id: str, times: object) -> None:
            raise BackendError("attempt to write a readonly database")

    _fill(memory)
    expected = _search(TemporalPath(memory.store, memory.vector_index, memory.embedder))
    memory.store.execute("DELETE FROM grounded_times")
    path = TemporalPath(_ReadOnly(memory.store), memory.vector_index, memory.embedder)  # type: ignore[arg-type]
    with caplog.at_level("WARNING", logger="dreammem.dates.grounding"):
        assert _search(path) == expected
    assert "could not store" in caplog.text
    assert memory.store.grounded_times("u1", list(_rowids(memory, "u1"))) == {}
