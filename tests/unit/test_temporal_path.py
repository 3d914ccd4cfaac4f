"""The temporal path on a real store (SQLite + FAISS, hashing embedder), fixed reference time."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.dates import parse as timeparse
from dreammem.recall.base import RecallQuery
from dreammem.recall.fusion import Fused
from dreammem.recall.temporal import TemporalPath
from dreammem.stores.base import RecordStore
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import MemoryRecord, Status

NOW = datetime(2023, 10, 20, 14, 0, tzinfo=UTC)  # a Friday
DAY = timedelta(days=1)


@pytest.fixture
def diary(memory: DreamMemory) -> DreamMemory:
    """One user's memories spread over half a year, plus another user's on the same days."""
    entries = [
        (NOW - 200 * DAY, "We booked the flights to Lisbon"),
        (datetime(2023, 5, 7, 18, tzinfo=UTC), "Dinner with Ana at the Thai place"),
        (datetime(2023, 5, 7, 20, tzinfo=UTC), "Played chess with Ana after dinner"),
        (datetime(2023, 5, 20, 9, tzinfo=UTC), "Went hiking in the Alps with Tom"),
        (datetime(2023, 9, 2, 9, tzinfo=UTC), "Bought running shoes for the marathon"),
        (NOW - 8 * DAY, "Had sushi with the team for lunch"),
        (NOW - 6 * DAY, "Dentist appointment went fine"),
        (NOW - DAY + timedelta(hours=1), "Ate a burrito for lunch"),
        (NOW - DAY + timedelta(hours=3), "Called mom in the evening"),
        (NOW - 2 * 3600 * timedelta(seconds=1), "Talked about the budget with Tom"),
    ]
    memory.add_many(
        [
            {"content": text, "user_id": "u1", "event_time": when, "session_id": f"s{n}"}
            for n, (when, text) in enumerate(entries)
        ]
    )
    memory.add_many(
        [
            {"content": "Ate a pizza for lunch", "user_id": "u2", "event_time": NOW - DAY},
            {
                "content": "Dinner with Ana at home",
                "user_id": "u2",
                "event_time": datetime(2023, 5, 7, tzinfo=UTC),
            },
        ]
    )
    return memory


def _temporal(memory: DreamMemory, query: str, *, user: str = "u1", now: datetime = NOW) -> list[str]:
    result = memory.recall(query, user_id=user, k=10, now=now, paths=["temporal"])
    return [h.record.content for h in result]


def test_yesterday_returns_only_that_day_and_ranks_by_content(diary: DreamMemory) -> None:
    found = _temporal(diary, "what did I eat for lunch yesterday?")
    assert found[0] == "Ate a burrito for lunch"
    assert set(found) == {"Ate a burrito for lunch", "Called mom in the evening"}


def test_absolute_dates_english_and_chinese(diary: DreamMemory) -> None:
    assert set(_temporal(diary, "what happened on 7 May")) == {
        "Played chess with Ana after dinner",
        "Dinner with Ana at the Thai place",
    }
    assert _temporal(diary, "Thai dinner on 2023-05-07")[0] == "Dinner with Ana at the Thai place"
    assert set(_temporal(diary, "2023年5月7日")) == {
        "Played chess with Ana after dinner",
        "Dinner with Ana at the Thai place",
    }
    may = set(_temporal(diary, "what did I do in May 2023"))
    assert may == {
        "Played chess with Ana after dinner",
        "Dinner with Ana at the Thai place",
        "Went hiking in the Alps with Tom",
    }
    assert set(_temporal(diary, "五月做了什么")) == may


def test_relative_weeks_and_chinese_yesterday(diary: DreamMemory) -> None:
    assert set(_temporal(diary, "last week")) == {
        "Had sushi with the team for lunch",
        "Dentist appointment went fine",
    }
    assert set(_temporal(diary, "上周")) == {
        "Had sushi with the team for lunch",
        "Dentist appointment went fine",
    }
    assert _temporal(diary, "我昨天午饭吃了什么 lunch")[0] == "Ate a burrito for lunch"


def test_a_season_within_this_year_is_its_months_not_the_year(diary: DreamMemory) -> None:
    spring = {
        "We booked the flights to Lisbon",
        "Played chess with Ana after dinner",
        "Dinner with Ana at the Thai place",
        "Went hiking in the Alps with Tom",
    }
    assert set(_temporal(diary, "今年春天做了什么")) == spring
    assert set(_temporal(diary, "what did I do this spring")) == spring
    assert "Bought running shoes for the marathon" in set(_temporal(diary, "今年做了什么"))
    assert _temporal(diary, "今年暑假做了什么") == []  # nothing from July or August


def test_reference_time_is_settable_for_replays(diary: DreamMemory) -> None:
    replay = datetime(2023, 5, 8, 12, tzinfo=UTC)
    assert set(_temporal(diary, "yesterday", now=replay)) == {
        "Played chess with Ana after dinner",
        "Dinner with Ana at the Thai place",
    }


def test_before_and_after_dates_and_events(diary: DreamMemory) -> None:
    before = _temporal(diary, "what did I book before May 2023")
    assert before == ["We booked the flights to Lisbon"]
    after = set(_temporal(diary, "lunch after the marathon shoes"))
    assert "Bought running shoes for the marathon" not in after
    assert "Ate a burrito for lunch" in after
    assert "Dinner with Ana at the Thai place" not in after
    event = _temporal(diary, "what did I buy before hiking in the Alps?")
    assert event and all(
        "Alps" not in text and "shoes" not in text and "burrito" not in text for text in event
    )


def test_last_time_puts_most_recent_match_first(diary: DreamMemory) -> None:
    found = _temporal(diary, "what did we talk about with Tom last time")
    assert found[0] == "Talked about the budget with Tom"
    assert _temporal(diary, "上次 Tom")[0] == "Talked about the budget with Tom"
    assert _temporal(diary, "the first time with Tom")[0] == "Went hiking in the Alps with Tom"


def test_when_question_prefers_memories_that_mention_a_time(memory: DreamMemory) -> None:
    memory.add_many(
        [
            {"content": "The support group was lovely and welcoming", "user_id": "u1"},
            {"content": "I went to the support group yesterday", "user_id": "u1"},
            {"content": "The cat sleeps all day", "user_id": "u1"},
        ]
    )
    found = _temporal(memory, "When did I go to the support group?")
    assert found == ["I went to the support group yesterday"]


class _TextsOnly:
    """The record store with whole-record reads by row id refused: a path may read texts only."""

    def __init__(self, inner: RecordStore) -> None:
        self._inner = inner

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        raise AssertionError("whole records decoded")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_when_question_reads_only_the_active_candidates_texts(memory: DreamMemory) -> None:
    memory.add_many(
        [
            {"content": "The support group was lovely and welcoming", "user_id": "u1"},
            {"content": "I went to the support group yesterday", "user_id": "u1"},
            {"content": "I went to the support group last week", "user_id": "u1"},
        ]
    )
    last_week = next(r for r in memory.store.find("u1") if r.content.endswith("last week"))
    memory.store.update([dataclasses.replace(last_week, status=Status.SUPERSEDED)])
    path = TemporalPath(_TextsOnly(memory.store), memory.vector_index, memory.embedder)  # type: ignore[arg-type]
    found = path.search(
        RecallQuery(text="When did I go to the support group?", user_id="u1", limit=10, now=NOW)
    )
    rows = memory.store.get_by_rowids("u1", [c.rowid for c in found])
    assert [rows[c.rowid].content for c in found] == ["I went to the support group yesterday"]


def test_stays_inside_the_user(diary: DreamMemory) -> None:
    hits = diary.recall("lunch yesterday", user_id="u2", k=10, now=NOW, paths=["temporal"])
    assert [h.record.user_id for h in hits] == ["u2"]
    assert _temporal(diary, "dinner on 7 May", user="u2") == ["Dinner with Ana at home"]


def test_no_time_expression_touches_neither_store_nor_dateparser(
    diary: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:

    def no_dateparser(*args: object) -> None:
        raise AssertionError("dateparser called for a query without time words")

    monkeypatch.setattr(timeparse, "dateparser_windows", no_dateparser)
    closed = SQLiteRecordStore()
    closed.close()  # any query on it would raise
    path = TemporalPath(closed, diary.vector_index, diary.embedder)  # type: ignore[arg-type]
    query = RecallQuery(text="what is the wifi password", user_id="u1", limit=10, now=NOW)
    assert path.search(query) == []
    assert path.search(RecallQuery(text="我的宠物叫什么", user_id="u1", limit=10, now=NOW)) == []


def test_empty_window_and_no_memories(diary: DreamMemory) -> None:
    assert _temporal(diary, "what happened in 1999") == []
    assert _temporal(diary, "yesterday", user="nobody") == []


def test_fused_with_other_paths_shows_in_trace(diary: DreamMemory) -> None:
    result = diary.recall("lunch yesterday", user_id="u1", k=3, now=NOW)
    top = result[0]
    assert top.record.content == "Ate a burrito for lunch"
    assert "temporal" in top.paths and top.ranks["temporal"] == 1
    assert "temporal" in result.timings_ms


def test_last_time_inside_full_recall_reuses_the_content_paths(diary: DreamMemory) -> None:
    result = diary.recall("what did we talk about with Tom last time", user_id="u1", k=3, now=NOW)
    assert result[0].record.content == "Talked about the budget with Tom"
    assert result[0].ranks.get("temporal") == 1
    alone = _temporal(diary, "what did we talk about with Tom last time")
    assert alone[0] == "Talked about the budget with Tom"


def test_last_time_without_a_shared_word_keeps_only_vector_matches_near_the_best() -> None:
    path = TemporalPath.__new__(TemporalPath)
    path.order_margin = 0.05
    head = [
        Fused(1, 0.1, {"vector": 1}, {"vector": 0.31}),  # "a call with my manager" for "my boss"
        Fused(2, 0.09, {"vector": 2}, {"vector": 0.29}),
        Fused(3, 0.08, {"vector": 3}, {"vector": 0.20}),  # newer, but about something else
        Fused(4, 0.07, {"keyword": 1}, {"keyword": 3.0}),
    ]
    assert [f.rowid for f in path._near_best(head)] == [1, 2]  # noqa: SLF001 - white-box: the strong-match rule on hand-made candidates
    assert path._near_best([head[3]]) == []  # noqa: SLF001 - white-box: the strong-match rule on hand-made candidates
