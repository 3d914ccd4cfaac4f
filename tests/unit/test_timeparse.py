"""Time expressions in English and Chinese, against a fixed reference time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from dreammem.dates.parse import TimeWindow, mentions_time, parse_time_query

NOW = datetime(2023, 10, 20, 14, 0, tzinfo=UTC)  # a Friday


def _days(window: TimeWindow | None) -> tuple[date | None, date | None]:
    assert window is not None
    return (
        window.start.date() if window.start is not None else None,
        window.end.date() if window.end is not None else None,
    )


D = date


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did I eat yesterday?", D(2023, 10, 19), D(2023, 10, 20)),
        ("what happened last week", D(2023, 10, 9), D(2023, 10, 16)),
        ("three weeks ago", D(2023, 9, 25), D(2023, 10, 2)),
        ("what did I do in May 2023", D(2023, 5, 1), D(2023, 6, 1)),
        ("what happened on 7 May", D(2023, 5, 7), D(2023, 5, 8)),
        ("the meeting on 2023-05-07", D(2023, 5, 7), D(2023, 5, 8)),
        ("Who did Maria have dinner with on May 3, 2023?", D(2023, 5, 3), D(2023, 5, 4)),
        ("where did we go in June", D(2023, 6, 1), D(2023, 7, 1)),
        ("what about last month", D(2023, 9, 1), D(2023, 10, 1)),
        ("last Saturday", D(2023, 10, 14), D(2023, 10, 15)),
        ("What did I do last weekend?", D(2023, 10, 14), D(2023, 10, 16)),
        ("last summer", D(2023, 6, 1), D(2023, 9, 1)),
        ("in the summer of 2022", D(2022, 6, 1), D(2022, 9, 1)),
        ("Which country was Tim visiting in the second week of November?", D(2022, 11, 8), D(2022, 11, 15)),
        ("Where was John between August 11 and August 15 2023?", D(2023, 8, 11), D(2023, 8, 16)),
        ("我昨天吃了什么", D(2023, 10, 19), D(2023, 10, 20)),
        ("上周发生了什么", D(2023, 10, 9), D(2023, 10, 16)),
        ("上个星期的会议", D(2023, 10, 9), D(2023, 10, 16)),
        ("上上周", D(2023, 10, 2), D(2023, 10, 9)),
        ("五月去了哪里", D(2023, 5, 1), D(2023, 6, 1)),
        ("去年的旅行", D(2022, 1, 1), D(2023, 1, 1)),
        ("2023年5月的会议", D(2023, 5, 1), D(2023, 6, 1)),
        ("2023年5月7日", D(2023, 5, 7), D(2023, 5, 8)),
        ("5月7日的晚饭", D(2023, 5, 7), D(2023, 5, 8)),
        ("11月3日", D(2022, 11, 3), D(2022, 11, 4)),
        ("今年三月", D(2023, 3, 1), D(2023, 4, 1)),
        ("三天前", D(2023, 10, 17), D(2023, 10, 18)),
        ("两个月前", D(2023, 8, 1), D(2023, 9, 1)),
        ("前天", D(2023, 10, 18), D(2023, 10, 19)),
        ("上周五", D(2023, 10, 13), D(2023, 10, 14)),
        ("星期三", D(2023, 10, 18), D(2023, 10, 19)),
        ("上个月", D(2023, 9, 1), D(2023, 10, 1)),
        # A season or school holiday inside a year is its months, not the whole year.
        ("今年暑假去了哪里？", D(2023, 7, 1), D(2023, 9, 1)),
        ("去年暑假", D(2022, 7, 1), D(2022, 9, 1)),
        ("去年的冬天很冷", D(2022, 12, 1), D(2023, 3, 1)),
        ("寒假做了什么", D(2023, 1, 1), D(2023, 3, 1)),
        ("夏天我们去了海边", D(2023, 6, 1), D(2023, 9, 1)),
        ("前年春天", D(2021, 3, 1), D(2021, 6, 1)),
        ("2022年的寒假", D(2022, 1, 1), D(2022, 3, 1)),
        ("this summer vacation", D(2023, 6, 1), D(2023, 9, 1)),
        # A span reaching back to now is every day of it, not the one month "three months ago" is.
        ("what did I buy in the past three months?", D(2023, 7, 1), D(2023, 10, 21)),
        ("the trips I took over the last 10 days", D(2023, 10, 10), D(2023, 10, 21)),
        ("my workouts in the past few weeks", D(2023, 9, 29), D(2023, 10, 21)),
        ("过去三个月买了什么", D(2023, 7, 1), D(2023, 10, 21)),
        ("近两周的会议", D(2023, 10, 6), D(2023, 10, 21)),
    ],
)
def test_windows(query: str, start: date, end: date) -> None:
    parsed = parse_time_query(query, NOW)
    assert parsed is not None
    assert _days(parsed.window) == (start, end)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("before May 2023", None, D(2023, 5, 1)),
        ("anything after 7 May?", D(2023, 5, 8), None),
        ("since last week", D(2023, 10, 9), None),
        ("until June 2023", None, D(2023, 7, 1)),
        ("2023年5月之前的会议", None, D(2023, 5, 1)),
        ("2023年5月以后", D(2023, 6, 1), None),
        ("五月以来", D(2023, 5, 1), None),
    ],
)
def test_open_windows(query: str, start: date | None, end: date | None) -> None:
    parsed = parse_time_query(query, NOW)
    assert parsed is not None
    assert _days(parsed.window) == (start, end)
    assert parsed.anchor is None


@pytest.mark.parametrize(
    "query",
    [
        "What is the wifi password?",
        "I may go to the park",
        "Did I march with them?",
        "I have a second opinion",
        "we talked about dogs",
        "Tell me about my dog",
        "我的宠物叫什么名字",
        "日本的首都是哪里",
        "I know the answer, and the snow melted",  # "now" inside another word is no time
    ],
)
def test_no_time_means_none(query: str) -> None:
    assert parse_time_query(query, NOW) is None


@pytest.mark.parametrize(
    ("query", "order"),
    [
        ("what did we discuss last time?", "latest"),
        ("What did Melanie paint recently?", "latest"),
        ("上次我们聊了什么", "latest"),
        ("最近买了什么", "latest"),
        ("what did I say before?", "latest"),
        ("我之前说的预算是多少", "latest"),
        ("the first time I went hiking", "earliest"),
        ("我第一次去北京", "earliest"),
        # the present state: what holds now is the newest thing said about it
        ("How many bikes do I currently own?", "latest"),
        ("Which team am I on now?", "latest"),
        ("How long have I been in my current role?", "latest"),
        ("How many chapters have I written so far?", "latest"),
        ("我现在住在哪里？", "latest"),
        ("目前我用什么手机？", "latest"),
    ],
)
def test_order_words(query: str, order: str) -> None:
    parsed = parse_time_query(query, NOW)
    assert parsed is not None
    assert parsed.order == order
    assert parsed.window is None


@pytest.mark.parametrize(
    ("query", "anchor", "side"),
    [
        ("what did I buy before the trip to Paris?", "trip to Paris", "before"),
        ("Which city was John in before traveling to Chicago?", "traveling to Chicago", "before"),
        ("what happened after my surgery", "surgery", "after"),
        ("去日本之前我买了什么", "去日本", "before"),
        ("搬家以后，我们去了哪家餐厅", "搬家", "after"),
    ],
)
def test_event_anchors(query: str, anchor: str, side: str) -> None:
    parsed = parse_time_query(query, NOW)
    assert parsed is not None
    assert parsed.anchor is not None and anchor in parsed.anchor
    assert parsed.anchor_side == side
    assert anchor not in parsed.content


def test_when_questions_and_content() -> None:
    parsed = parse_time_query("When did Caroline go to the LGBTQ support group?", NOW)
    assert parsed is not None and parsed.asks_when and parsed.window is None
    assert parsed.content == "did Caroline go to the LGBTQ support group?"
    zh = parse_time_query("我什么时候去的北京", NOW)
    assert zh is not None and zh.asks_when
    dated = parse_time_query("Where did Joanna travel to in July 2022?", NOW)
    assert dated is not None and "July" not in dated.content and "Joanna" in dated.content


def test_reference_time_moves_relative_dates() -> None:
    earlier = datetime(2022, 3, 2, 9, 0, tzinfo=UTC)
    parsed = parse_time_query("what did I do yesterday", earlier)
    assert parsed is not None
    assert _days(parsed.window) == (D(2022, 3, 1), D(2022, 3, 2))
    may = parse_time_query("in May", earlier)  # May of the previous year: dates prefer the past
    assert may is not None and _days(may.window) == (D(2021, 5, 1), D(2021, 6, 1))


def test_naive_and_other_timezones_are_accepted() -> None:
    naive = parse_time_query("yesterday", NOW.replace(tzinfo=None))
    assert naive is not None and naive.window is not None and naive.window.start is not None
    assert naive.window.start.tzinfo is not None
    shifted = parse_time_query("yesterday", NOW.astimezone(timezone(timedelta(hours=8))))
    assert shifted is not None and _days(shifted.window) == (D(2023, 10, 19), D(2023, 10, 20))


def test_impossible_dates_are_ignored() -> None:
    parsed = parse_time_query("2023年2月30日 and 2023-02-30", NOW)
    assert parsed is None or parsed.window is None


def test_window_algebra() -> None:
    a = TimeWindow(datetime(2023, 1, 1, tzinfo=UTC), datetime(2023, 2, 1, tzinfo=UTC))
    b = TimeWindow(datetime(2023, 1, 15, tzinfo=UTC), None)
    assert a.contains(TimeWindow(datetime(2023, 1, 2, tzinfo=UTC), datetime(2023, 1, 3, tzinfo=UTC)))
    assert not a.contains(b)
    assert a.intersect(b) == TimeWindow(datetime(2023, 1, 15, tzinfo=UTC), datetime(2023, 2, 1, tzinfo=UTC))
    assert a.hull(b).end is None
    assert TimeWindow(a.end, a.start).empty


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday", True),
        ("We ran a charity race last Sunday", True),
        ("The concert is on 7 May", True),
        ("我们上周去了公园", True),
        ("I love painting sunsets", False),
        ("我喜欢画画", False),
    ],
)
def test_mentions_time(text: str, expected: bool) -> None:
    assert mentions_time(text) is expected


def test_amounts_are_not_time_mentions() -> None:
    assert not mentions_time("it cost 1250 dollars")
    assert mentions_time("back in 2019 we met")
