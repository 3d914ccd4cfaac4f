"""Common English relative dates read without dateparser, with dateparser's own windows.

dateparser costs ~5 ms per text; most time words in conversation are a handful of
relative forms ("yesterday", "this morning", "last week", "two days ago", "last Saturday"),
full dates ("05 March 2024", "March 5, 2024") and months ("May 2023"). For these
:func:`english_windows` gives the calendar windows that
:func:`dreammem.dates.parse.dateparser_windows` gives (compared with dateparser
1.5 by ``benchmarks/time_words.py`` on generated phrases said on many days of three
years, the benches' texts and LoCoMo), so a text whose every time word is one of them
never reaches dateparser. When anything time-like is left over (a digit, a month or
weekday name, "morning", "this", "ago", ...; numbers only when they could be a day or
a year) it returns ``None`` and the caller asks
dateparser about the whole text, as before.

Two differences, both on dateparser's side: in some sentences dateparser loses a plain
expression ("I told Tom about it last week, he was glad" gives nothing), which these
rules still read; and its match sometimes keeps a neighbouring word ("yesterday and").
:func:`~dreammem.dates.parse.parse_time_query` uses them for a text with one
time expression; two or more go to dateparser, which decides how they combine.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from dreammem.dates.rules import MONTH, TimeWindow, add_months, month_number, period_window
from dreammem.text.literal_gate import LiteralGate
from dreammem.text.vocabulary import NUMBER_WORDS, WEEKDAYS

__all__ = ["english_windows"]

_NUMBERS = {"a": 1, "an": 1, **NUMBER_WORDS}
_DAY_WORDS = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}

_EXPRESSION = re.compile(
    r"\b(?:(?P<day>yesterday|today|tonight|tomorrow)|(?P<night>last\s+night)"
    r"|(?P<part>this\s+(?:morning|afternoon|evening))"
    r"|(?P<n>\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<unit>day|week|month|year)s?\s+ago"
    r"|(?P<rel>last|this|next)\s+(?P<period>week|month|year)"
    rf"|last\s+(?P<weekday>{'|'.join(WEEKDAYS)})"
    rf"|(?P<d>\d{{1,2}})\s+(?P<m>{MONTH})\s+(?P<y>\d{{4}})"
    rf"|(?P<m2>{MONTH})\s+(?P<d2>\d{{1,2}}),?\s+(?P<y2>\d{{4}})"
    rf"|(?P<m3>{MONTH})\s+(?P<y3>\d{{4}}))\b",
    re.IGNORECASE,
)
_INERT_NUMBER = re.compile(r"(?:^|(?<=[\s#$€£(]))(?:\d{3}|\d{5,})(?=[.,;:!?)]?(?:\s|$))")
"""A number of three or of five or more digits standing alone (an amount, an order number):
dateparser reads none of them as a date (one or two digits can be a day, four a year)."""

_LEFTOVER = re.compile(
    r"\d|\b(?:ago|last|next|this|past|previous|coming|now|noon|midnight|dawn|dusk|"
    r"yesterday|today|tonight|tomorrow|morning|afternoon|evening|night|"
    r"day|week|weekend|fortnight|month|year|decade|century|centuries|"
    r"hours?|hrs?|minutes?|mins?|seconds?|secs?|am|pm|"
    r"mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|"
    rf"{'|'.join(WEEKDAYS)}|{MONTH})s?\b",
    re.IGNORECASE,
)
"""Words that mean the text holds more than the forms above: dateparser has to read it."""

_GATE = LiteralGate([_EXPRESSION, _LEFTOVER])
"""Both patterns, skipped on a text with none of the literals a match needs (most of a dated turn)."""


def _window(m: re.Match[str], now: datetime) -> TimeWindow:
    if m["day"]:
        return period_window(now + timedelta(days=_DAY_WORDS[m["day"].lower()]), "day")
    if m["part"]:
        return period_window(now, "day")
    if m["night"]:
        return period_window(now - timedelta(days=1), "day")
    if m["unit"]:
        n = int(m["n"]) if m["n"].isdigit() else _NUMBERS[m["n"].lower()]
        return _shifted(now, m["unit"].lower(), -n)
    if m["period"]:
        offset = {"last": -1, "this": 0, "next": 1}[m["rel"].lower()]
        return _shifted(now, m["period"].lower(), offset)
    if m["y"] or m["y2"]:
        day, month, year = (m["d"], m["m"], m["y"]) if m["y"] else (m["d2"], m["m2"], m["y2"])
        return period_window(datetime(int(year), month_number(month), int(day), tzinfo=now.tzinfo), "day")
    if m["y3"]:
        return period_window(datetime(int(m["y3"]), month_number(m["m3"]), 1, tzinfo=now.tzinfo), "month")
    weekday = WEEKDAYS.index(m["weekday"].lower())
    back = (now.weekday() - weekday) % 7 or 7  # the latest one before today
    return period_window(now - timedelta(days=back), "day")


def _shifted(now: datetime, unit: str, n: int) -> TimeWindow:
    """The calendar ``unit`` that holds ``now`` moved by ``n`` units."""
    if unit == "day":
        return period_window(now + timedelta(days=n), "day")
    if unit == "week":
        return period_window(now + timedelta(weeks=n), "week")
    if unit == "month":
        return period_window(add_months(now, n), "month")
    return period_window(now.replace(year=now.year + n, day=1), "year")


def english_windows(text: str, now: datetime) -> list[tuple[int, int, TimeWindow]] | None:
    """``(start, end, window)`` of each common relative date, or None when dateparser must read the text.

    Args:
        text: The text (a query, or a memory's words) with other parsers' matches blanked.
        now: The reference time; its time zone is kept.

    Returns:
        The matches in text order (``[]`` when the text has no time word at all), or
        ``None`` when a time-like word is left that these forms do not cover.
    """
    found: list[tuple[int, int, TimeWindow]] = []
    rest: list[str] = []
    cursor = 0
    for m in _GATE.view(text).finditer(_EXPRESSION):
        try:
            found.append((m.start(), m.end(), _window(m, now)))
        except ValueError:  # no such day ("31 February 2023"): dateparser decides
            return None
        rest.append(text[cursor : m.start()])
        cursor = m.end()
    rest.append(text[cursor:])
    if any(_GATE.view(_INERT_NUMBER.sub(" ", part)).search(_LEFTOVER) for part in rest):
        return None
    return found
