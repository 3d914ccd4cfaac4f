"""The one supersede rule (write/supersede.py): latest event wins, ties go to the latest write."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from dreammem.types import Layer, MemoryRecord, Status
from dreammem.write.supersede import later_value, newest, superseded

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def value(content: str, event: int, written: int) -> MemoryRecord:
    """A semantic value of one slot: its event ``event`` hours and its write ``written`` hours after T0."""
    return MemoryRecord(
        user_id="u1",
        content=content,
        layer=Layer.SEMANTIC,
        slot="user/city",
        event_time=T0 + timedelta(hours=event),
        created_at=T0 + timedelta(hours=written),
    )


def test_the_latest_event_wins_whatever_the_order_of_the_input() -> None:
    values = [value("Porto", 0, 5), value("Lisbon", 2, 1), value("Braga", 1, 9)]
    for order in itertools.permutations(values):
        assert newest(order).content == "Lisbon"


def test_an_equal_event_time_goes_to_the_later_write() -> None:
    first, second = value("Porto", 3, 1), value("Lisbon", 3, 2)
    for order in ([first, second], [second, first]):
        assert newest(order) is second


def test_newest_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        newest([])


def test_later_value_is_the_newest_rival_after_the_record() -> None:
    record = value("Porto", 1, 1)
    rivals = [value("Lisbon", 2, 2), value("Faro", 4, 3), value("Braga", 0, 9), record]
    winner = later_value(record, rivals)
    assert winner is not None and winner.content == "Faro"


def test_later_value_ignores_the_record_itself_and_earlier_rivals() -> None:
    record = value("Lisbon", 5, 5)
    assert later_value(record, [record]) is None
    assert later_value(record, [value("Porto", 1, 8), value("Braga", 4, 9)]) is None
    assert later_value(record, []) is None


def test_superseded_closes_the_old_value_at_the_new_event() -> None:
    old, new = value("Porto", 0, 0), value("Lisbon", 6, 7)
    closed = superseded(old, new)
    assert closed.status is Status.SUPERSEDED
    assert closed.superseded_by == new.id
    assert closed.valid_to == new.event_time
    assert (closed.id, closed.content, closed.event_time) == (old.id, old.content, old.event_time)
    assert old.status is Status.ACTIVE  # records are frozen: the old one is not changed in place


def test_later_value_breaks_an_event_time_tie_as_newest_does() -> None:
    # the same rule as newest(): one tie-break for the write path, dream conflicts and undo
    earlier_write, later_write = value("Porto", 3, 1), value("Lisbon", 3, 2)
    assert later_value(earlier_write, [later_write]) is later_write
    assert later_value(later_write, [earlier_write]) is None
    for record in (earlier_write, later_write):
        winner = later_value(record, [earlier_write, later_write]) or record
        assert winner is newest([earlier_write, later_write])
