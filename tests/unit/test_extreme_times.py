"""Times at the edges of Python's date range are typed errors, not OverflowErrors deep inside.

Found while probing the fuzz suite's edge times: ``dream(now=datetime.max)`` overflowed while
writing its report.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from dreammem import DreamMemory, ValidationError
from dreammem.dates.rules import period_window

EDGES = [
    datetime.min,
    datetime.max,
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=14))),
    datetime(9999, 12, 31, tzinfo=timezone(-timedelta(hours=12))),
]


@pytest.mark.parametrize("when", EDGES)
def test_every_time_taking_call_rejects_the_edges(memory: DreamMemory, when: datetime) -> None:
    memory.add("I went to Paris last week", user_id="u1")
    calls = [
        lambda: memory.add("x", user_id="u1", event_time=when),
        lambda: memory.recall("what did I do last week?", user_id="u1", now=when),
        lambda: memory.dream(user_id="u1", now=when),
        lambda: memory.maybe_dream(user_id="u1", now=when),
    ]
    for call in calls:
        with pytest.raises(ValidationError):
            call()
    assert [r.content for r in memory.get_all(user_id="u1")] == ["I went to Paris last week"]


def test_the_supported_range_is_wide(memory: DreamMemory) -> None:
    for year in (2, 1900, 2099, 9998):
        record = memory.add(f"a note from {year}", user_id="u1", event_time=datetime(year, 6, 1))
        assert record.event_time.year == year
    memory.recall("what did I do last week?", user_id="u1", now=datetime(9998, 6, 1))
    memory.dream(user_id="u1", now=datetime(9998, 6, 1))


@pytest.mark.parametrize(
    "text",
    [
        "We spent 9999 USD on the hotel in Austin last month.",  # stopped a million-turn build
        "The parcel comes on 31 December 9999.",
        "See you in the week of 30 December 9999.",
    ],
)
def test_a_memory_naming_the_last_year_is_stored_and_found(memory: DreamMemory, text: str) -> None:
    record = memory.add(text, user_id="u1", event_time=datetime(2025, 5, 21, tzinfo=UTC))
    assert [r.id for r in memory.get_all(user_id="u1")] == [record.id]
    found = memory.recall(text, user_id="u1", now=datetime(2025, 5, 22, tzinfo=UTC))
    assert record.id in [hit.record.id for hit in found.hits]


@pytest.mark.parametrize("period", ["day", "week", "month", "year"])
def test_the_last_calendar_period_ends_with_the_calendar(period: str) -> None:
    window = period_window(datetime(9999, 12, 31, 12, tzinfo=UTC), period)
    assert window.start is not None and window.start.year == 9999
    assert window.end == datetime.max.replace(tzinfo=UTC)
