"""A number in 1900-2099 that counts the plural after it is no year ("we expect 2000 guests").

The rule was written on ``DESIGNED``; ``HELD_BACK`` was written afterwards, in other words, and
only checked. A determiner or a time preposition before the number, or the number opening the
text, keeps the year reading ("the 2020 olympics", "during 2021 prices rose").
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dreammem.dates.grounding import grounded_window
from dreammem.dates.parse import parse_time_query

NOW = datetime(2024, 5, 1, 9, tzinfo=UTC)

DESIGNED = ["We expect 2000 guests at the gala", "We had 2000 visitors", "we got 2001 likes"]
HELD_BACK = [
    "The venue holds 2000 seats, all sold",
    "our volunteers gathered 2050 signatures for the petition",
    "He has read 1984 pages of the manuscript so far",
    "The library lent 2015 books over the holidays",
]
YEARS = [
    ("The 2020 olympics were postponed", 2020),
    ("my 2019 taxes are finally done", 2019),
    ("during 2021 prices rose a lot", 2021),
    ("in 2000 we moved to Oslo", 2000),
    ("2020 elections were chaotic", 2020),
    ("Our 2016 holidays in Crete were the best", 2016),
]


@pytest.mark.parametrize("text", [*DESIGNED, *HELD_BACK])
def test_a_counted_number_names_no_time(text: str) -> None:
    parsed = parse_time_query(text, NOW)
    assert parsed is None or parsed.window is None
    assert grounded_window(text, NOW) is None  # nor is the memory grounded to that year


@pytest.mark.parametrize(
    ("text", "alone"),
    [("I sold 2023 tickets last month", "last month"), ("They printed 1999 copies yesterday", "yesterday")],
)
def test_a_counted_number_beside_a_time_word_leaves_the_time_word(text: str, alone: str) -> None:
    parsed, expected = parse_time_query(text, NOW), parse_time_query(alone, NOW)
    assert parsed is not None and expected is not None and parsed.window == expected.window


@pytest.mark.parametrize(("text", "year"), YEARS)
def test_a_year_label_stays_a_year(text: str, year: int) -> None:
    parsed = parse_time_query(text, NOW)
    assert parsed is not None and parsed.window is not None and parsed.window.start is not None
    assert parsed.window.start.year == year
