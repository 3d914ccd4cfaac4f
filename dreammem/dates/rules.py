"""The rule layer of time parsing: what dateparser misses or misreads, and time windows.

* :class:`TimeWindow`, a half-open interval of event times, and the calendar period
  (day, week, month, year) around a date;
* Chinese dates and relative times ("2023年5月", "5月7日", "今年三月", "三周前", "昨天",
  "上个星期", "上上周", "上周五"), ISO dates, English seasons, weekends and "the second
  week of November";
* seasons and school holidays inside a year, English and Chinese ("last summer", "今年暑假",
  "去年冬天", "寒假"): the season's months, never the whole year ("今年" alone is the year);
* spans reaching back to now ("the past three months", "over the last 10 days", "过去三个月"):
  from that many units ago to the end of today, not the one month or week "three months ago" is.

:mod:`dreammem.dates.parse` combines these with dateparser's matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dreammem.text.literal_gate import GatedText, LiteralGate
from dreammem.text.vocabulary import MONTHS, NUMBER_WORDS

__all__ = ["MONTH", "TimeWindow", "add_months", "month_number", "period_window", "rule_windows"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open interval ``[start, end)`` of event times; ``None`` leaves a side open."""

    start: datetime | None = None
    end: datetime | None = None

    def contains(self, other: TimeWindow) -> bool:
        """True when ``other`` lies inside this window."""
        lo = self.start is None or (other.start is not None and other.start >= self.start)
        hi = self.end is None or (other.end is not None and other.end <= self.end)
        return lo and hi

    def intersect(self, other: TimeWindow) -> TimeWindow:
        """The overlap of two windows (may be empty: ``start >= end``)."""
        starts = [s for s in (self.start, other.start) if s is not None]
        ends = [e for e in (self.end, other.end) if e is not None]
        return TimeWindow(max(starts) if starts else None, min(ends) if ends else None)

    def hull(self, other: TimeWindow) -> TimeWindow:
        """The smallest window covering both."""
        start = None if self.start is None or other.start is None else min(self.start, other.start)
        end = None if self.end is None or other.end is None else max(self.end, other.end)
        return TimeWindow(start, end)

    @property
    def empty(self) -> bool:
        """True when no time can fall inside."""
        return self.start is not None and self.end is not None and self.start >= self.end


# -- vocabulary ---------------------------------------------------------------------------

MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_NUM = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"

# -- calendar helpers ---------------------------------------------------------------------


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, tz: Any) -> datetime:
    return datetime(year, month, 1, tzinfo=tz)


def _next_month(d: datetime) -> datetime:
    return d.replace(year=d.year + 1, month=1) if d.month == 12 else d.replace(month=d.month + 1)


def _until(start: datetime, step: Callable[[datetime], datetime]) -> TimeWindow:
    """From ``start`` to ``step(start)``; a period running past year 9999 ends with the calendar."""
    try:
        end = step(start)
    except (OverflowError, ValueError):  # "9999 USD ... last month" read as the year 9999
        end = datetime.max.replace(tzinfo=start.tzinfo)
    return TimeWindow(start, end)


def period_window(d: datetime, period: str) -> TimeWindow:
    """The calendar period containing ``d``."""
    if period == "year":
        return _until(datetime(d.year, 1, 1, tzinfo=d.tzinfo), lambda s: s.replace(year=s.year + 1))
    if period == "month":
        return _until(_month_start(d.year, d.month, d.tzinfo), _next_month)
    if period == "week":
        return _until(_day(d) - timedelta(days=d.weekday()), lambda s: s + timedelta(days=7))
    return _until(_day(d), lambda s: s + timedelta(days=1))


def _cn_int(text: str) -> int:
    """An integer from ASCII digits or Chinese numerals up to 99 ("十二", "二十三", "两")."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (_CN_DIGITS.get(ones, 0) if ones else 0)
    value = 0
    for char in text:
        value = value * 10 + _CN_DIGITS[char]
    return value


# -- rule layer ------------------------------------------------------------------------------


_ZH_RELATIVE: dict[str, tuple[str, int]] = {
    "今天": ("day", 0),
    "昨天": ("day", -1),
    "前天": ("day", -2),
    "大前天": ("day", -3),
    "本周": ("week", 0),
    "这周": ("week", 0),
    "这个星期": ("week", 0),
    "上周": ("week", -1),
    "上星期": ("week", -1),
    "上个星期": ("week", -1),
    "上个礼拜": ("week", -1),
    "上礼拜": ("week", -1),
    "上上周": ("week", -2),
    "上上个星期": ("week", -2),
    "本月": ("month", 0),
    "这个月": ("month", 0),
    "上个月": ("month", -1),
    "上月": ("month", -1),
    "上上个月": ("month", -2),
    "今年": ("year", 0),
    "去年": ("year", -1),
    "前年": ("year", -2),
}
_ZH_WEEKDAY = re.compile(r"(?P<rel>上上|上|这|本)?(?:个)?(?:星期|周|礼拜)(?P<d>[一二三四五六日天])")
_ZH_WEEKDAYS = "一二三四五六"
_ZH_RELATIVE_RE = re.compile("|".join(sorted(map(re.escape, _ZH_RELATIVE), key=len, reverse=True)))
_ZH_YMD = re.compile(rf"(?P<y>\d{{4}})年(?:(?P<m>{_CN_NUM})月(?:(?P<d>{_CN_NUM})[日号])?)?")
_ZH_MD = re.compile(rf"(?P<rel>今年|去年|前年)?(?P<m>{_CN_NUM})月(?:份)?(?:(?P<d>{_CN_NUM})[日号])?")
_ZH_AGO = re.compile(rf"(?P<n>{_CN_NUM})(?:个)?(?P<u>天|日|周|星期|礼拜|个月|年)(?:前|之前|以前)")
_ISO_DATE = re.compile(r"\b(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})\b")
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
_EN_SEASON = re.compile(
    r"\b(?:(?P<rel>last|this|past)\s+)?(?P<s>spring|summer|autumn|fall|winter)"
    r"(?:\s+(?:of\s+)?(?P<y>\d{4}))?\b",
    re.IGNORECASE,
)
# Chinese seasons and school holidays: (first month, length in months). 暑假 is July-August,
# 寒假 January-February (the school calendar), the seasons are the meteorological ones.
_ZH_SEASONS = {
    "春天": (3, 3), "春季": (3, 3), "夏天": (6, 3), "夏季": (6, 3), "秋天": (9, 3), "秋季": (9, 3),
    "冬天": (12, 3), "冬季": (12, 3), "暑假": (7, 2), "寒假": (1, 2),
}  # fmt: skip
_ZH_SEASON = re.compile(
    rf"(?:(?P<rel>今年|去年|前年)|(?P<ago>{_CN_NUM})年(?:前|之前|以前)|(?P<y>\d{{4}})年)?(?:的)?"
    rf"(?P<s>{'|'.join(_ZH_SEASONS)})"
)
_ZH_YEAR_OFFSET = {"今年": 0, "去年": 1, "前年": 2}
_EN_WEEKEND = re.compile(r"\b(?P<rel>last|this|past|the)\s+weekend\b", re.IGNORECASE)
_EN_NTH_WEEK = re.compile(
    rf"\b(?:the\s+)?(?P<n>first|second|third|fourth|last)\s+week\s+of\s+(?P<m>{MONTH})(?:,?\s+(?P<y>\d{{4}}))?\b",
    re.IGNORECASE,
)
_NTH = {"first": 0, "second": 1, "third": 2, "fourth": 3}
_SPAN_COUNTS = {**{w: n for w, n in NUMBER_WORDS.items() if n >= 2}, "few": 3, "couple of": 2}
_EN_SPAN = re.compile(
    r"\b(?:past|last|previous)\s+(?P<n>\d{1,3}|couple\s+of|"
    + "|".join(k for k in _SPAN_COUNTS if k != "couple of")
    + r")\s+(?P<u>day|week|month|year)s\b",
    re.IGNORECASE,
)
"""A span reaching back to now: "the past three months", "over the last 10 days", "the past few weeks"
(not "three months ago", one month; not "last week", the calendar week before this one)."""
_ZH_SPAN = re.compile(rf"(?:过去|近)(?:的)?(?P<n>{_CN_NUM}|几)(?:个)?(?P<u>天|日|周|星期|礼拜|个月|月|年)")
"""The same in Chinese: "过去三个月", "近两周", "过去几天" ("最近" is an ordering word, read first)."""
# The rules' patterns, skipped on a text with none of the literals a match needs (a Chinese
# one never runs on an ASCII text): grounding reads every dated turn with them.
_GATE = LiteralGate(
    [
        _ISO_DATE, _ZH_YMD, _ZH_MD, _ZH_AGO, _ZH_WEEKDAY, _ZH_SEASON, _ZH_RELATIVE_RE,
        _EN_NTH_WEEK, _EN_SEASON, _EN_WEEKEND, _EN_SPAN, _ZH_SPAN,
    ]
)  # fmt: skip


def month_number(name: str) -> int:
    """The month (1-12) of an English month name or its abbreviation."""
    prefix = name[:3].lower()
    return next(n for n, m in enumerate(MONTHS, 1) if m.startswith(prefix))


def add_months(d: datetime, months: int) -> datetime:
    """The first day of the month ``months`` after (or before) ``d``'s month."""
    index = d.year * 12 + d.month - 1 + months
    return d.replace(year=index // 12, month=index % 12 + 1, day=1)


def _date(year: int, month: int, day: int, tz: Any) -> datetime | None:
    """A date, or None when it does not exist (2023-02-30)."""
    try:
        return datetime(year, month, day, tzinfo=tz)
    except ValueError:
        return None


def rule_windows(text: str, now: datetime) -> Iterator[tuple[int, int, TimeWindow]]:
    """``(start, end, window)`` for each expression the rule layer understands."""
    tz = now.tzinfo
    gated = _GATE.view(text)
    for m in gated.finditer(_ISO_DATE):
        if (found := _date(int(m["y"]), int(m["m"]), int(m["d"]), tz)) is not None:
            yield m.start(), m.end(), period_window(found, "day")
    for m in gated.finditer(_ZH_YMD):
        month = _cn_int(m["m"]) if m["m"] else 1
        found = _date(int(m["y"]), month, _cn_int(m["d"]) if m["d"] else 1, tz)
        if found is not None:
            yield (
                m.start(),
                m.end(),
                period_window(found, "day" if m["d"] else "month" if m["m"] else "year"),
            )
    for m in gated.finditer(_ZH_MD):
        if m.start() > 0 and text[m.start() - 1] == "年":
            continue  # part of a full date, handled above
        month, day_of_month = _cn_int(m["m"]), _cn_int(m["d"]) if m["d"] else None
        if m["rel"]:
            year = now.year - _ZH_YEAR_OFFSET[m["rel"]]
        else:
            year = now.year if (month, day_of_month or 1) <= (now.month, now.day) else now.year - 1
        found = _date(year, month, day_of_month or 1, tz)
        if found is not None:
            yield m.start(), m.end(), period_window(found, "day" if day_of_month else "month")
    for m in gated.finditer(_ZH_SPAN):
        n = 3 if m["n"] == "几" else _cn_int(m["n"])
        unit = {"天": "day", "日": "day", "个月": "month", "月": "month", "年": "year"}.get(m["u"], "week")
        yield m.start(), m.end(), _span_back(now, unit, n)
    for m in gated.finditer(_ZH_AGO):
        n, unit = _cn_int(m["n"]), m["u"]
        if unit in ("天", "日"):
            yield m.start(), m.end(), period_window(now - timedelta(days=n), "day")
        elif unit in ("周", "星期", "礼拜"):
            yield m.start(), m.end(), period_window(now - timedelta(weeks=n), "week")
        elif unit == "个月":
            yield m.start(), m.end(), period_window(add_months(now, -n), "month")
        else:
            yield m.start(), m.end(), period_window(now.replace(year=now.year - n, day=1), "year")
    for m in gated.finditer(_ZH_WEEKDAY):
        weekday = _ZH_WEEKDAYS.find(m["d"]) if m["d"] in _ZH_WEEKDAYS else 6
        monday = _day(now) - timedelta(days=now.weekday())
        if m["rel"] in ("上", "上上"):
            monday -= timedelta(weeks=len(m["rel"]))
        elif m["rel"] is None and weekday > now.weekday():
            monday -= timedelta(weeks=1)  # a bare weekday is the most recent one
        yield m.start(), m.end(), period_window(monday + timedelta(days=weekday), "day")
    yield from _zh_seasons(gated, now)
    for m in gated.finditer(_ZH_RELATIVE_RE):
        unit, offset = _ZH_RELATIVE[m.group()]
        if unit == "day":
            point = now + timedelta(days=offset)
        elif unit == "week":
            point = now + timedelta(weeks=offset)
        elif unit == "month":
            point = add_months(now, offset)
        else:
            point = now.replace(year=now.year + offset, day=1)
        yield m.start(), m.end(), period_window(point, unit)
    yield from _english_rules(gated, now)


def _season_start(month: int, now: datetime, *, year: int | None, last: bool, length: int) -> datetime:
    """The start of a season: in ``year`` when given, else the latest one begun by ``now``.

    ``last`` ("last summer") skips a season still under way.
    """
    if year is not None:
        return _month_start(year, month, now.tzinfo)
    start = _month_start(now.year, month, now.tzinfo)
    while start > now:
        start = start.replace(year=start.year - 1)
    if last and add_months(start, length) > now:
        start = start.replace(year=start.year - 1)
    return start


def _zh_seasons(text: GatedText, now: datetime) -> Iterator[tuple[int, int, TimeWindow]]:
    """Chinese seasons ("今年暑假", "去年冬天", "三年前的夏天", "2022年寒假"): their months in that year.

    Without a year, the latest one begun by ``now``.
    """
    for m in text.finditer(_ZH_SEASON):
        month, length = _ZH_SEASONS[m["s"]]
        start = _season_start(month, now, year=_zh_year(m, now), last=False, length=length)
        yield m.start(), m.end(), TimeWindow(start, add_months(start, length))


def _zh_year(m: re.Match[str], now: datetime) -> int | None:
    """The year a Chinese season names: "今年", "三年前", "2022年", or none."""
    if m["rel"]:
        return now.year - _ZH_YEAR_OFFSET[m["rel"]]
    if m["ago"]:
        return now.year - _cn_int(m["ago"])
    return int(m["y"]) if m["y"] else None


def _span_back(now: datetime, unit: str, n: int) -> TimeWindow:
    """From the start of the day ``n`` units (day, week, month, year) before ``now`` to the end of today."""
    today = _day(now)
    if unit == "day":
        start = today - timedelta(days=n)
    elif unit == "week":
        start = today - timedelta(weeks=n)
    else:
        months = n if unit == "month" else 12 * n
        start = add_months(today, -months)  # from the first of that month: never shorter than asked
    return TimeWindow(start, today + timedelta(days=1))


def _english_rules(text: GatedText, now: datetime) -> Iterator[tuple[int, int, TimeWindow]]:
    for m in text.finditer(_EN_SPAN):
        count = m["n"].lower()
        n = int(count) if count.isdigit() else _SPAN_COUNTS[" ".join(count.split())]
        yield m.start(), m.end(), _span_back(now, m["u"].lower(), n)
    for m in text.finditer(_EN_NTH_WEEK):
        month = month_number(m["m"])
        year = int(m["y"]) if m["y"] else now.year if month <= now.month else now.year - 1
        first = _month_start(year, month, now.tzinfo)
        if m["n"].lower() == "last":
            end = _next_month(first)
            yield m.start(), m.end(), TimeWindow(end - timedelta(days=7), end)
        else:
            start = first + timedelta(days=7 * _NTH[m["n"].lower()])
            yield m.start(), m.end(), TimeWindow(start, start + timedelta(days=7))
    for m in text.finditer(_EN_SEASON):
        month, length = _SEASONS[m["s"].lower()]
        last = (m["rel"] or "").lower() == "last"
        start = _season_start(month, now, year=int(m["y"]) if m["y"] else None, last=last, length=length)
        yield m.start(), m.end(), TimeWindow(start, add_months(start, length))
    for m in text.finditer(_EN_WEEKEND):
        saturday = _day(now) - timedelta(days=(now.weekday() - 5) % 7)
        if (m["rel"] or "").lower() in ("last", "past") and saturday + timedelta(days=2) > now:
            saturday -= timedelta(days=7)
        yield m.start(), m.end(), TimeWindow(saturday, saturday + timedelta(days=2))
