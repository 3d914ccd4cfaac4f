"""An amount is no time word: a text whose only other time word is a common form skips dateparser.

dateparser's reading of "4821" in "We spent 4821 USD ... last month" is dropped as an amount
(``test_timeparse_more``); such a text, with "last month" its only time expression, is read by
the common forms, with the window dateparser gives for it. So is a number outside 1900-2099
with no year word before it ("room 1204"). A number that may be a year still counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from dreammem.dates import parse as timeparse
from dreammem.dates.parse import dateparser_windows, parse_time_query
from dreammem.dates.rules import TimeWindow

NOW = datetime(2023, 10, 20, 14, 0, tzinfo=UTC)

AMOUNTS = [
    "We spent 4821 USD on the sofa last month.",
    "I paid 1999 dollars for it last week",
    "the bike cost €1200 and I bought it last month",
    "we drove 1500 km last week",
    "I had 2000 followers last year",
    "Yesterday I spent $1200 on a new bike.",
    "Our budget for the phone must not exceed 2098 EUR.",
    "The 850 km drive took two days ago? No, it was 3 days ago.",
    "She ran 1200 meters this morning and 800 meters last night.",
]


def _no_dateparser(text: str, now: datetime) -> Iterator[tuple[int, int, TimeWindow]]:
    raise AssertionError(f"dateparser asked about {text!r}")


@pytest.mark.parametrize("text", AMOUNTS[:7])
def test_an_amount_beside_one_common_form_is_read_without_dateparser(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    windows = [w for _, _, w in dateparser_windows(text, NOW)]  # what dateparser keeps of the text
    monkeypatch.setattr(timeparse, "dateparser_windows", _no_dateparser)
    for side_words in (False, True):
        parsed = parse_time_query(text, NOW, side_words=side_words)
        assert (parsed.window if parsed else None) == (windows[0] if windows else None), text


@pytest.mark.parametrize(
    ("text", "alone"),
    [("I booked room 1204 last week", "last week"), ("We paid 1200 for it last month", "last month")],
)
def test_a_number_no_year_beside_one_common_form_is_read_without_dateparser(
    text: str, alone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = parse_time_query(alone, NOW)
    monkeypatch.setattr(timeparse, "dateparser_windows", _no_dateparser)
    parsed = parse_time_query(text, NOW)
    assert parsed is not None and expected is not None and parsed.window == expected.window


MAY_BE_YEARS = [
    "Back in 1999 we spent 1200 USD there",
    "The 2020 elections were last month",
    "in 1066 and last week",
]


@pytest.mark.parametrize("text", AMOUNTS[7:] + MAY_BE_YEARS)
def test_two_expressions_or_a_number_that_may_be_a_year_still_go_to_dateparser(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeparse, "dateparser_windows", _no_dateparser)
    with pytest.raises(AssertionError, match="dateparser asked"):
        parse_time_query(text, NOW)
