"""The word lists several parts of DreamMem share, in one place.

Day and month names are read by the time rules (:mod:`dreammem.dates`), the speaker and
naming rules (a capitalised "Monday" is a time, not a person) and the write path's
schedule slot. Hard-limit words ("must", "never", "不超过", ...) are read by the write
path (a statement that bounds something is a constraint), the dream's scoring (such a
record is kept at high priority) and the dream's guard (a replacement must carry them
verbatim). Each reader builds its patterns from these tuples with :func:`word_pattern`,
so a word added here reaches every reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "CONSTRAINT_TOPICS",
    "HARD_LIMITS",
    "MONTHS",
    "NUMBER_WORDS",
    "WEEKDAYS",
    "ZH_WEEKDAYS",
    "word_pattern",
]

NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
"""English counts spelled out, one to twelve (time expressions: "three weeks ago", "the past two months")."""

WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
"""English day names, Monday first (the index is :meth:`datetime.weekday`)."""

MONTHS: tuple[str, ...] = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
"""English month names, January first (the index plus one is the month number)."""

ZH_WEEKDAYS: tuple[str, ...] = (
    *(f"{prefix}{day}" for prefix in ("星期", "周") for day in "一二三四五六日"),
    "星期天",
)
"""Chinese day names, in both common forms."""

HARD_LIMITS: tuple[str, ...] = (
    "not exceed",
    "no more than",
    "no later than",
    "no less than",
    "at most",
    "at least",
    "must not",
    "mustn't",
    "must",
    "never",
    "only",
    "cannot",
    "can't",
    "do not",
    "don't",
    "maximum",
    "minimum",
    "mandatory",
    "forbidden",
    "prohibited",
    "不超过",
    "不得",
    "不能",
    "不可",
    "不要",
    "只能",
    "只用",
    "仅",
    "必须",
    "务必",
    "禁止",
    "绝不",
    "至少",
    "最多",
    "上限",
    "以内",
)
"""Words that bound what may happen: English ones match case-insensitively on word boundaries."""

CONSTRAINT_TOPICS: tuple[str, ...] = (
    "deadline",
    "budget",
    "limit",
    "required",
    "require",
    "allergy",
    "allergic",
    "截止",
    "预算",
    "过敏",
)
"""Words that name a bound without stating it ("my budget", "截止"): with the hard limits, what
makes a user's statement a constraint."""


def word_pattern(words: Iterable[str]) -> str:
    """A regex alternation of ``words``: Latin ones on word boundaries, others anywhere, longest first.

    The apostrophe of a Latin word also matches a typographic one and none ("can't", "can’t", "cant").
    """
    ordered = sorted(set(words), key=len, reverse=True)
    latin = [re.escape(w).replace("'", "['’]?") for w in ordered if w.isascii()]
    other = [re.escape(w) for w in ordered if not w.isascii()]
    parts = ([rf"\b(?:{'|'.join(latin)})\b"] if latin else []) + other
    return "|".join(parts)
