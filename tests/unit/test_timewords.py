"""Common English relative dates read without dateparser give dateparser's windows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem.dates import parse as timeparse
from dreammem.dates.grounding import grounded_window
from dreammem.dates.parse import dateparser_windows, parse_time_query
from dreammem.dates.rules import TimeWindow
from dreammem.dates.words import english_windows
from dreammem.text.tokenize import query_terms

FORMS = [
    "yesterday",
    "Today",
    "tonight",
    "tomorrow",
    "last night",
    "two days ago",
    "3 weeks ago",
    "a month ago",
    "an year ago",
    "10 months ago",
    "five years ago",
    "last week",
    "this month",
    "next year",
    "NEXT WEEK",
    "last Monday",
    "last sunday",
    "last Saturday",
    "this morning",
    "This evening",
    "05 March 2024",
    "March 5, 2024",
    "1 Jan 2022",
]
# A Monday, a Saturday, a Sunday, the last day of a leap February, New Year's Eve late.
DAYS = [
    datetime(2023, 1, 2, 9, tzinfo=UTC),
    datetime(2023, 6, 10, 23, tzinfo=UTC),
    datetime(2023, 6, 11, 0, 5, tzinfo=UTC),
    datetime(2024, 2, 29, 12, tzinfo=UTC),
    datetime(2023, 12, 31, 23, 59, tzinfo=UTC),
    datetime(2022, 3, 31, 7, tzinfo=UTC),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("frame", ["{}", "Ana fixed the bike {}.", "Mia sold a tent in Oslo {}. Fine"])
def test_each_form_gives_the_window_dateparser_gives(form: str, frame: str) -> None:
    text = frame.format(form)
    for now in DAYS:
        ours = english_windows(text, now)
        theirs = list(dateparser_windows(text, now))
        assert ours is not None and [w for *_, w in ours] == [w for *_, w in theirs], (form, now)


@pytest.mark.parametrize(
    "text", ["We went to the lake last week, it was lovely", "I told Tom about it last week, he was glad"]
)
def test_where_dateparser_loses_the_expression_it_is_still_read(text: str) -> None:
    # dateparser 1.5 finds nothing in these sentences ("We" is taken for Wednesday in the first).
    assert list(dateparser_windows(text, DAYS[0])) == []
    ours = english_windows(text, DAYS[0])
    assert ours is not None and [w.start for *_, w in ours] == [datetime(2022, 12, 26, tzinfo=UTC)]


@pytest.mark.parametrize(
    "text",
    [
        "It cost 1999 dollars yesterday",  # dateparser reads 1999 as a year
        "Order #93 is here, yesterday",  # and 93 as 1993
        "30 February 2023",  # no such day
        "yesterday morning",
        "the day before yesterday",
        "last Saturday in May",
        "on Monday",
        "this Saturday",
        "an hour ago",
        "last weekend",
        "yesterday at noon",
        "two fortnights ago",
    ],
)
def test_anything_else_time_like_goes_to_dateparser(text: str) -> None:
    assert english_windows(text, DAYS[0]) is None


@pytest.mark.parametrize("number", ["500", "82757", "#12345", "$48213", "(100"])
def test_a_number_no_date_can_be_is_not_a_time_word(number: str) -> None:
    ours = english_windows(f"It cost {number} dollars yesterday, order {number}.", DAYS[0])
    assert ours is not None and len(ours) == 1


def test_a_text_without_time_words_has_no_match() -> None:
    assert english_windows("Lunch with Ana at the usual place", DAYS[0]) == []


def test_the_time_zone_of_now_is_kept() -> None:
    now = datetime(2023, 1, 2, 9, tzinfo=UTC) + timedelta(hours=0)
    ((_, _, window),) = english_windows("we met yesterday", now) or [(0, 0, None)]
    assert window is not None and window.start == datetime(2023, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "query",
    [
        "what did I do yesterday?",
        "where did we eat last Saturday",
        "tent in May 2023",
        "what did Ana buy two weeks ago?",
        "since last month, what changed?",
        "before 05 March 2024, where did I live?",
        "what did we talk about last time?",
        "When did I buy the bike?",
    ],
)
def test_a_query_with_one_common_form_reads_like_dateparser(query: str) -> None:
    for now in DAYS:
        ours, theirs = parse_time_query(query, now), parse_time_query(query, now, common_forms=False)
        assert ours is not None and theirs is not None
        assert (ours.window, ours.order, ours.anchor) == (theirs.window, theirs.order, theirs.anchor)
        assert query_terms(ours.content) == query_terms(theirs.content)


def test_two_expressions_or_a_side_word_go_to_dateparser(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(text: str, now: datetime) -> list[object]:
        calls.append(text)
        return []

    monkeypatch.setattr(timeparse, "dateparser_windows", counting)
    parse_time_query("what did I do yesterday?", DAYS[0])
    assert calls == []
    parse_time_query("yesterday and last week", DAYS[0])
    parse_time_query("last summer, two days ago", DAYS[0])  # one from the rule layer, one common form
    parse_time_query("since last month", DAYS[0])  # a side word: dateparser reads it as it did
    assert len(calls) == 3


def test_a_memory_with_a_side_word_is_grounded_by_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dateparser(text: str, now: datetime) -> list[object]:
        raise AssertionError("dateparser called")

    monkeypatch.setattr(timeparse, "dateparser_windows", no_dateparser)
    said = datetime(2024, 6, 10, 9, tzinfo=UTC)
    window = grounded_window("Remind me to call Tom about the tent before 05 March 2024.", said)
    assert window == TimeWindow(None, datetime(2024, 3, 5, tzinfo=UTC))
    parsed = parse_time_query("since last month I have been sick", said, side_words=True)
    assert parsed is not None and parsed.window == TimeWindow(datetime(2024, 5, 1, tzinfo=UTC))
