"""Relative dates in memories, grounded at the memory's own time, reach the temporal path's windows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.grounding import GroundedTimes, grounded_window
from dreammem.recall.temporal import TemporalPath
from dreammem.recall.timeparse import TimeWindow

SAID = datetime(2022, 11, 9, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("We hiked near the lake last summer", datetime(2022, 6, 1), datetime(2022, 9, 1)),
        ("my laptop died yesterday, all the work is gone", datetime(2022, 11, 8), datetime(2022, 11, 9)),
        ("Adopted a kitten two weeks ago", datetime(2022, 10, 24), datetime(2022, 10, 31)),
        ("The conference was last month and it was great", datetime(2022, 10, 1), datetime(2022, 11, 1)),
        ("我上周去了北京", datetime(2022, 10, 31), datetime(2022, 11, 7)),
        ("I start the new job next month", datetime(2022, 12, 1), datetime(2023, 1, 1)),
    ],
)
def test_a_relative_date_is_read_from_when_it_was_said(text: str, start: datetime, end: datetime) -> None:
    assert grounded_window(text, SAID) == TimeWindow(start.replace(tzinfo=UTC), end.replace(tzinfo=UTC))


@pytest.mark.parametrize(
    "text",
    ["Great to hear from you!", "I am so tired today", "This week has been busy", "I may go to the gym"],
)
def test_no_date_or_one_that_includes_the_moment_said_grounds_nothing(text: str) -> None:
    assert grounded_window(text, SAID) is None


def test_a_naive_time_is_read_as_utc() -> None:
    window = grounded_window("we met yesterday", SAID.replace(tzinfo=None))
    assert window == TimeWindow(datetime(2022, 11, 8, tzinfo=UTC), datetime(2022, 11, 9, tzinfo=UTC))


def test_the_cache_is_bounded_and_answers_like_the_function() -> None:
    cache = GroundedTimes(capacity=2)
    for rowid in range(5):
        assert cache.window(rowid, "we met yesterday", SAID) == grounded_window("we met yesterday", SAID)
    assert len(cache) == 2


def test_a_window_query_finds_a_memory_said_later_about_that_time(memory: DreamMemory) -> None:
    memory.add_many(
        [
            {"content": "We hiked near Fort Wayne last summer", "user_id": "u1", "event_time": SAID},
            {
                "content": "Painted the kitchen blue",
                "user_id": "u1",
                "event_time": datetime(2022, 7, 3, tzinfo=UTC),
            },
            {
                "content": "We hiked in the Alps",
                "user_id": "u1",
                "event_time": datetime(2021, 7, 3, tzinfo=UTC),
            },
            {"content": "We hiked near Fort Wayne last summer", "user_id": "u2", "event_time": SAID},
        ]
    )
    now = SAID + timedelta(days=30)
    result = memory.recall(
        "where did we hike in summer 2022?", user_id="u1", k=5, now=now, paths=["temporal"]
    )
    found = [h.record.content for h in result]
    assert "We hiked near Fort Wayne last summer" in found  # said in November, about the summer
    assert "Painted the kitchen blue" in found  # said inside the window
    assert "We hiked in the Alps" not in found  # another summer
    assert all(h.record.user_id == "u1" for h in result)


def test_a_window_with_nothing_said_inside_still_answers_from_grounded_memories(memory: DreamMemory) -> None:
    memory.add("My sister visited yesterday", user_id="u1", event_time=datetime(2022, 3, 2, 10, tzinfo=UTC))
    now = datetime(2022, 6, 1, tzinfo=UTC)
    result = memory.recall("who visited on 1 March 2022?", user_id="u1", k=5, now=now, paths=["temporal"])
    assert [h.record.content for h in result] == ["My sister visited yesterday"]


class _CountingStore:
    """The record store, counting the rows the temporal path reads by row id."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.rows_read = 0

    def get_by_rowids(self, user_id: str, rowids: list[int]) -> object:
        self.rows_read += len(rowids)
        return self._inner.get_by_rowids(user_id, rowids)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_a_warm_window_query_answers_the_same_without_rereading_grounded_rows(memory: DreamMemory) -> None:
    said = datetime(2022, 1, 3, 9, tzinfo=UTC)
    texts = [
        "We hiked near the lake last summer",
        "Bought a kayak yesterday",
        "Painted the fence two weeks ago",
        "The concert was last month",
        "Lunch with Ana, nothing special",
        "I start the new job next month",
        "我上周去了北京",
    ]
    memory.add_many(
        [
            {
                "content": f"{texts[n % len(texts)]} ({n})",
                "user_id": "u1",
                "event_time": said + timedelta(days=9 * n),
            }
            for n in range(60)
        ]
    )
    counting = _CountingStore(memory.store)
    path = TemporalPath(counting, memory.vector_index, memory.embedder)  # type: ignore[arg-type]
    now = said + timedelta(days=600)
    questions = ["what did we do in summer 2022?", "what happened in March 2022", "kayak in May 2022"]

    def run() -> list[list[Candidate]]:
        return [path.search(RecallQuery(text=q, user_id="u1", limit=10, now=now)) for q in questions]

    cold = run()
    read_cold, counting.rows_read = counting.rows_read, 0
    warm = run()
    assert any(cold) and warm == cold
    assert counting.rows_read < read_cold / 4
    fresh = TemporalPath(memory.store, memory.vector_index, memory.embedder)
    assert [fresh.search(RecallQuery(text=q, user_id="u1", limit=10, now=now)) for q in questions] == cold
