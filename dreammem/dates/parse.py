"""Time expressions in recall queries, in English and Chinese, relative to a reference time.

English is parsed by **dateparser** (``dateparser.search.search_dates`` to find the
expressions, ``DateDataParser.get_date_data`` for their granularity, with the settings
``RELATIVE_BASE`` = the query's reference time and ``PREFER_DATES_FROM = "past"``).
It is well kept, understands absolute and relative dates ("in May 2023", "on 7 May",
"May 3, 2023", "yesterday", "last week", "3 weeks ago", "last Saturday") and tells
whether an expression names a day, a week, a month or a year, which is what turns a
date into a window. Its Chinese support finds "昨天", "上周", "五月" and "去年" but
misreads month-day dates ("10月3日" came back as 17 December) and drops weekdays
("上周五" became "上周"), so Chinese goes through the rule layer below, which is also
what handles everything dateparser misses or gets wrong (checked on dateparser 1.5):

* ordering words: "last time", "recently", "上次", "最近" (the most recent matching
  memory), "first time", "第一次" (the earliest); a question about the present state
  ("currently", "now", "so far", "目前", "现在") asks for the most recent too: what holds
  now is the newest thing said about it;
* "before X" / "after X" / "X之前" / "X以后": an open window when X is a date, an
  event anchor otherwise (the recall path looks up when X happened); with nothing
  to anchor on ("what did I say before?", "我之前说的") it means "previously";
* Chinese dates: "2023年5月", "5月7日", "今年三月", "五月", "三周前", "昨天", "上个星期",
  "上上周", "上周五", "去年";
* seasons and school holidays ("last summer", "the summer of 2022", "今年暑假", "去年冬天"),
  weekends and "the second week of November";
* its false positives: a match must carry a real time word, so "we", "a second",
  "I may go" or "did I march" are not dates.

A cheap regular-expression gate runs first: a query without any time-like word is
answered without calling dateparser at all. dateparser only ever sees short spans
around time words (at most :data:`MAX_DATEPARSER_SPANS` of them, each at most
:data:`SPAN_CHARS` characters), never the whole query, so its cost does not grow with
the query's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from dreammem.dates.rules import MONTH, TimeWindow, period_window, rule_windows
from dreammem.dates.words import english_windows
from dreammem.dates.years import NUMBERS, no_year_spans, not_a_year
from dreammem.text.literal_gate import GatedText, LiteralGate
from dreammem.text.short_cache import short_text_cache

__all__ = [
    "ANCHOR_CHARS",
    "MAX_DATEPARSER_SPANS",
    "SPAN_CHARS",
    "TimeQuery",
    "TimeWindow",
    "dateparser_windows",
    "mentions_time",
    "parse_time_query",
]

MAX_DATEPARSER_SPANS = 4
"""At most this many spans of a query go through dateparser (the first ones)."""
ANCHOR_CHARS = 120
"""An event anchor ("before the trip to Paris") is at most this many characters."""
SPAN_CHARS = 48
"""A span is the time word with up to this many characters of context, cut at spaces."""

Order = Literal["latest", "earliest"]
Side = Literal["before", "after"]


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """What a query says about time.

    Attributes:
        window: Event times the query is about, when it names a date or period.
        order: ``"latest"`` for "last time"/"recently"/"上次", ``"earliest"`` for "first time".
        asks_when: The query asks for a time ("when did ...", "什么时候").
        anchor: An event the query is before or after ("before the trip to Paris").
        anchor_side: Whether the wanted memories lie ``"before"`` or ``"after"`` the anchor.
        expressions: The time expressions found, as written.
        content: The query with the time expressions taken out (for content matching).
    """

    window: TimeWindow | None = None
    order: Order | None = None
    asks_when: bool = False
    anchor: str | None = None
    anchor_side: Side | None = None
    expressions: tuple[str, ...] = ()
    content: str = ""


# -- vocabulary ---------------------------------------------------------------------------

# The present state: what holds now is the newest of what was said about it (an ordering word).
_PRESENT = (
    r"\b(?:currently|current|now|nowadays|so\s+far|these\s+days|at\s+the\s+moment|at\s+present)\b"
    r"|目前|现在|如今|当前|至今"
)

_GATE = re.compile(
    r"\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|past|previous(?:ly)?|recent(?:ly)?|lately|earlier|"
    r"earliest|first|before|after|since|until|till|prior|when|week(?:end)?s?|months?|years?|days?|"
    r"morning|evening|night|mon|tue|wed|thu|fri|sat|sun|spring|summer|autumn|fall|winter|"
    rf"{MONTH}|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    rf"|{_PRESENT}"
    r"|[年月日号周天昨前后次期拜春夏秋冬假]|什么时候|何时|几点|最近|近来",
    re.IGNORECASE,
)

_LATEST = re.compile(
    r"\b(?:the\s+)?(?:last|previous)\s+time\b|\bmost\s+recent(?:ly)?\b|\brecent(?:ly)?\b|\blately\b"
    rf"|\blatest\b|上次|上回|上一次|最近|近来|最新|{_PRESENT}",
    re.IGNORECASE,
)
_EARLIEST = re.compile(
    r"\b(?:the\s+|for\s+the\s+)?first\s+time\b|\bearliest\b|第一次|头一次|最早|最初", re.IGNORECASE
)
_WHEN = re.compile(
    r"\bwhen\b|\bwhat\s+(?:time|date|day|year|month)\b|\bwhich\s+(?:day|date|year|month|week)\b"
    r"|\bhow\s+long\s+ago\b|什么时候|何时|哪天|哪一天|几号|哪年|哪一年|几月|几点|多久以前",
    re.IGNORECASE,
)
_EN_SIDE = re.compile(
    r"\b(?P<kw>before|prior\s+to|earlier\s+than|until|till|after|since|later\s+than)\b", re.IGNORECASE
)
_ZH_SIDE = re.compile(r"(?P<kw>之前|以前|之后|以后|以来)")
# The patterns read first, skipped where a match cannot be (grounding reads every dated turn).
_QUERY_GATE = LiteralGate([_GATE, _LATEST, _EARLIEST, _WHEN, _EN_SIDE, _ZH_SIDE])
_PREVIOUSLY = re.compile(r"\bpreviously\b|\bearlier\b|以前|之前|先前|此前", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,.;!?，。；！？、]")
_ANCHOR_STOP = re.compile(
    r"^(?:the|a|an|my|our|your|his|her|their|we|i|you|he|she|they|it|that|this|then|did|do|was|were)$",
    re.IGNORECASE,
)
_ZH_PRONOUN = re.compile(r"^[我你他她它们咱在从的了就还也都]*$")

# A dateparser match must carry one of these, or it is a false positive.
_REAL_TIME_WORD = re.compile(
    r"\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|week|weekend|month|year|day|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|evening|night)s?\b",
    re.IGNORECASE,
)
_MONTH_WORD = re.compile(
    rf"^(?:(?:in|on|of|since|during|until|early|late|mid|this|last|next)\s+)?{MONTH}$", re.I
)
_MONTH_IN = re.compile(rf"\b{MONTH}\b", re.IGNORECASE)
_MONTH_CONTEXT = re.compile(
    r"\b(?:in|of|since|during|until|early|late|mid|before|after|by)\s*$", re.IGNORECASE
)

# When a memory itself talks about a time ("last week", "yesterday", "on 7 May").
_MENTION = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|this\s+morning|"
    r"(?:last|this|next|past)\s+(?:week(?:end)?|month|year|night|time|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|winter)|"
    r"(?:on|since|until|in)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"weekend|(?:19|20)\d{2}|"
    rf"{MONTH}\s+\d{{1,2}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}|(?:in|since|during)\s+{MONTH})\b"
    r"|昨天|前天|今天|上周|上个|上星期|去年|前年|今年|\d+月|[一二三四五六七八九十]+月|\d+年|[一二三四五六七八九十\d]+天前",
    re.IGNORECASE,
)


@short_text_cache
def mentions_time(text: str) -> bool:
    """True when the text refers to a time ("yesterday", "last week", "on 7 May", "上周").

    Cached for short texts (:mod:`dreammem.text.short_cache`): the temporal path asks it
    of its candidates' texts, the same stored turns query after query, and the expression
    costs about 30 us on a 70-character line.
    """
    return _MENTION.search(text) is not None


# -- dateparser ------------------------------------------------------------------------------


def _no_year_number(match: str, text: str, position: int) -> bool:
    """Whether a match's only date is one 3-4 digit number that is no year (:func:`.not_a_year`).

    ``match`` starts at ``position`` in ``text``. "We spent 4821 USD", "€1200 and", "1500 km",
    "Room 1204": dateparser reads the year 4821, 1200, 1500 or 1204.
    """
    numbers = list(NUMBERS.finditer(match))
    if len(numbers) != 1 or not 3 <= len(numbers[0].group()) <= 4 or _MONTH_IN.search(match):
        return False
    if _REAL_TIME_WORD.search(NUMBERS.sub(" ", match)):  # "1999 last week": a time word beside it
        return False
    return not_a_year(text, position + numbers[0].start(), position + numbers[0].end())


def _plausible(match: str, text: str, position: int) -> bool:
    """Reject dateparser's false positives ("we", "a second", "I may go", "did I march", "1999 dollars")."""
    if _no_year_number(match, text, position):
        return False
    stripped = match.strip()
    if _MONTH_WORD.match(stripped):
        # A bare month name counts capitalised, with a preposition, or after one ("in may").
        before = text[max(0, position - 32) : position]
        return stripped[:1].isupper() or " " in stripped or bool(_MONTH_CONTEXT.search(before))
    return _REAL_TIME_WORD.search(match) is not None


_TIME_SEED = re.compile(rf"{_REAL_TIME_WORD.pattern}|\b{MONTH}\b", re.IGNORECASE)


def _time_spans(text: str) -> list[tuple[int, int]]:
    """Short spans around the time words of a text, merged, the first few only."""
    spans: list[tuple[int, int]] = []
    half = SPAN_CHARS // 2
    for m in _TIME_SEED.finditer(text):
        start = max(0, m.start() - half)
        end = min(len(text), m.end() + half)
        # Cut at spaces so that no word is split (a span may then be a little shorter).
        if start > 0 and (space := text.find(" ", start, m.start())) >= 0:
            start = space + 1
        if end < len(text) and (space := text.rfind(" ", m.end(), end)) >= 0:
            end = space
        if spans and start <= spans[-1][1] and end - spans[-1][0] <= SPAN_CHARS * 2:
            spans[-1] = (spans[-1][0], end)
        elif len(spans) == MAX_DATEPARSER_SPANS:
            break
        else:
            spans.append((max(start, spans[-1][1]) if spans else start, end))
    return spans


def dateparser_windows(text: str, now: datetime) -> Iterator[tuple[int, int, TimeWindow]]:
    """``(start, end, window)`` of what dateparser finds in the first time spans of a text."""
    from dateparser.date import DateDataParser  # noqa: PLC0415 - dateparser is slow to import: only for queries naming a date
    from dateparser.search import search_dates  # noqa: PLC0415 - as above

    naive_now = now.replace(tzinfo=None)
    settings: dict[str, Any] = {"RELATIVE_BASE": naive_now, "PREFER_DATES_FROM": "past"}
    parser = DateDataParser(languages=["en"], settings=settings)
    for offset, span_end in _time_spans(text):
        span = text[offset:span_end]
        cursor = 0
        for surface, _ in search_dates(span, languages=["en"], settings=settings) or []:
            position = span.find(surface, cursor)
            if position < 0:
                position = span.find(surface)
            cursor = max(cursor, position + len(surface))
            if position < 0 or not _plausible(surface, text, offset + position):
                continue
            data = parser.get_date_data(surface)
            if data is None or data.date_obj is None:
                continue
            point = data.date_obj.replace(tzinfo=now.tzinfo)
            start = offset + position
            yield start, start + len(surface), period_window(point, data.period or "day")


def _common_windows(
    text: str, now: datetime, *, side_words: bool = False
) -> list[tuple[int, int, TimeWindow]] | None:
    """The window dateparser would find, when the only time word is one common relative date (else None).

    Two or more expressions go to dateparser as before (how they combine, "last weekend
    before April 10, 2023", is its reading; the caller also sends a text the rule layer
    found something in), and so do a text with "before", "after", "since" or "until"
    (unless ``side_words``) and a match outside the spans dateparser would be shown (past
    :data:`MAX_DATEPARSER_SPANS`).
    """
    if not side_words and _EN_SIDE.search(text):
        return None  # "since last month", "before 05 March 2024": dateparser's reading, as before
    found = english_windows(text, now)
    if found is None or len(found) > 1:
        return None
    if not found:
        return found
    spans = _time_spans(text)
    if all(any(s <= start and end <= e for s, e in spans) for start, end, _ in found):
        return found
    return None


# -- the parser ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Found:
    start: int
    end: int
    window: TimeWindow
    side: Side | None = None
    inclusive: bool = False

    def bounded(self) -> TimeWindow:
        """The window this expression asks for, opened on one side by before/after."""
        w = self.window
        if self.side == "before":
            return TimeWindow(None, w.end if self.inclusive else w.start)
        if self.side == "after":
            return TimeWindow(w.start if self.inclusive else w.end, None)
        return w


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _combine(found: list[_Found]) -> TimeWindow | None:
    """One window from several expressions: the most specific closed ones spanned, open ones intersected."""
    windows = [f.bounded() for f in found]
    closed = [w for w in windows if w.start is not None and w.end is not None]
    open_ = [w for w in windows if w.start is None or w.end is None]
    specific = [w for w in closed if not any(o != w and w.contains(o) for o in closed)]
    result: TimeWindow | None = None
    for w in specific:
        result = w if result is None else result.hull(w)
    for w in open_:
        result = w if result is None else result.intersect(w)
    return result


@dataclass(frozen=True, slots=True)
class _SideWord:
    start: int
    end: int
    side: Side
    inclusive: bool
    anchor_follows: bool  # English "before X"; Chinese "X之前" has the anchor first


def _side_words(text: GatedText) -> list[_SideWord]:
    out = []
    for m in text.finditer(_EN_SIDE):
        kw = " ".join(m["kw"].lower().split())
        side: Side = "before" if kw in ("before", "prior to", "earlier than", "until", "till") else "after"
        out.append(_SideWord(m.start(), m.end(), side, kw in ("until", "till", "since"), True))
    for m in text.finditer(_ZH_SIDE):
        side = "before" if m["kw"] in ("之前", "以前") else "after"
        out.append(_SideWord(m.start(), m.end(), side, m["kw"] == "以来", False))
    return out


def _anchor_span(text: str, word: _SideWord) -> tuple[int, int]:
    """The clause an English keyword precedes, or a Chinese keyword follows (may be empty).

    At most :data:`ANCHOR_CHARS` characters: an anchor is an event, not a paragraph.
    """
    if word.anchor_follows:
        limit = min(len(text), word.end + ANCHOR_CHARS)
        cut = _CLAUSE_END.search(text, word.end, limit)
        end = cut.start() if cut else limit
        start = word.end
        for m in re.finditer(r"\S+", text[word.end : end]):
            if not _ANCHOR_STOP.match(m.group()):
                start = word.end + m.start()
                break
        else:
            start = end
        return start, end
    floor = max(0, word.start - ANCHOR_CHARS)
    cuts = list(_CLAUSE_END.finditer(text, floor, word.start))
    start = cuts[-1].end() if cuts else floor
    clause = text[start : word.start]
    if _ZH_PRONOUN.match(clause.strip()):
        return word.start, word.start
    return start + len(clause) - len(clause.lstrip()), word.start


def _inside(a: _Found, b: _Found) -> bool:
    """True when ``a`` lies strictly inside the longer match ``b``."""
    return a is not b and b.start <= a.start and a.end <= b.end and (b.end - b.start) > (a.end - a.start)


def _merge_adjacent(found: list[_Found], text: str) -> list[_Found]:
    """Join neighbouring expressions that narrow each other ("May" + "2023")."""
    items = sorted(found, key=lambda f: f.start)
    out: list[_Found] = []
    for item in items:
        last = out[-1] if out else None
        if (
            last is not None
            and not text[last.end : item.start].strip(" ,")
            and (last.window.contains(item.window) or item.window.contains(last.window))
        ):
            narrow = item.window if last.window.contains(item.window) else last.window
            out[-1] = _Found(last.start, item.end, narrow)
        else:
            out.append(item)
    return out


def _near(found: _Found, word: _SideWord) -> bool:
    if found.start <= word.start < found.end:
        return True  # dateparser kept the keyword in its match ("after 7 May")
    if word.anchor_follows:
        return 0 <= found.start - word.end <= 5
    return 0 <= word.start - found.end <= 2


def parse_time_query(
    text: str, now: datetime, *, common_forms: bool = True, side_words: bool = False
) -> TimeQuery | None:
    """Find what a query says about time, relative to ``now``.

    Args:
        text: The query.
        now: The reference time ("yesterday" is the day before it); naive means UTC.
        common_forms: Read a text whose only time expression is a common English one
            ("yesterday", "last week", "two days ago") without dateparser
            (:mod:`dreammem.dates.words`): dateparser's window, where dateparser
            reads it at all (it loses the expression in some sentences), and the
            expression alone where dateparser sometimes keeps a neighbouring word
            ("yesterday and"). False sends every time word to dateparser (for checks).
        side_words: With ``common_forms``, also read "before/after/since/until" beside a
            common form by the rules ("since last month": from the start of last month;
            dateparser loses some of these or reads "before 02 May 2024" as before 1 May).
            Grounding a memory's dates asks for it (it is cheap at write time); queries
            keep dateparser's reading.

    Returns:
        A :class:`TimeQuery`, or ``None`` when the query says nothing about time.
    """
    gated = _QUERY_GATE.view(text)
    if not gated.search(_GATE):
        return None
    now = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    spans: list[tuple[int, int]] = []
    order: Order | None = None
    if m := gated.search(_LATEST):
        order = "latest"
        spans.append(m.span())
    elif m := gated.search(_EARLIEST):
        order = "earliest"
        spans.append(m.span())
    when = gated.search(_WHEN)
    if when:
        spans.append(when.span())
    found = [_Found(s, e, w) for s, e, w in rule_windows(_blank(text, spans), now)]
    masked = _blank(text, spans + [(f.start, f.end) for f in found])
    timed = _blank(masked, no_year_spans(masked))  # "4821 USD ... last month": only "last month" names a time
    if _REAL_TIME_WORD.search(timed) or re.search(MONTH, timed, re.IGNORECASE):
        common = _common_windows(timed, now, side_words=side_words) if common_forms and not found else None
        matches = common if common is not None else dateparser_windows(masked, now)
        found += [_Found(s, e, w) for s, e, w in matches]
    found = _merge_adjacent([f for f in found if not any(_inside(f, o) for o in found)], text)
    anchor: str | None = None
    anchor_side: Side | None = None
    for word in _side_words(gated):
        spans.append((word.start, word.end))
        if not word.anchor_follows and any(f.start <= word.start < f.end for f in found):
            continue  # the suffix of a Chinese expression ("三天以前": three days ago), not a side
        near = [f for f in found if _near(f, word)]
        for f in near:
            f.side, f.inclusive = word.side, word.inclusive
        if near:
            continue
        start, end = _anchor_span(text, word)
        if end > start and anchor is None:
            anchor, anchor_side = text[start:end].strip(), word.side
            spans.append((start, end))
        elif end <= start and order is None and word.side == "before":
            order = "latest"  # "what did I say before?" / "我之前说的": previously
    if anchor is None and order is None and _PREVIOUSLY.search(_blank(text, spans)):
        order = "latest"
    window = _combine(found) if found else None
    if window is None and order is None and not when and anchor is None:
        return None
    spans += [(f.start, f.end) for f in found]
    return TimeQuery(
        window=window,
        order=order,
        asks_when=when is not None,
        anchor=anchor,
        anchor_side=anchor_side,
        expressions=tuple(text[f.start : f.end] for f in found),
        content=" ".join(_blank(text, spans).split()),
    )
