"""Relative dates in memories, grounded at the memory's own time, reach the temporal path's windows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.dates.grounding import grounded_window
from dreammem.dates.parse import TimeWindow

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
