"""Which numbers in a text are years: the 3-4 digit numbers dateparser may read as one.

A bare number is no year when a sign or a unit marks it as an amount or a label ("€1200",
"1999 dollars", "order #2023"), when it lies outside the years of a conversation ("1000
guests", "Room 1204"), or when it counts the plural after it ("we expect 2000 guests"),
unless a year word precedes it ("in 1066", "since 1850"). :mod:`dreammem.dates.parse`
drops dateparser's reading of such numbers.
"""

from __future__ import annotations

import re

__all__ = ["NUMBERS", "no_year_spans", "not_a_year"]

NUMBERS = re.compile(r"\d+")
"""A run of digits."""
_CONVERSATION_YEARS = range(1900, 2100)
_YEAR_BEFORE = re.compile(r"\b(?:in|since|until|till|circa|year)\s*$", re.IGNORECASE)
_SIGN_BEFORE = re.compile(r"[$€£¥#]\s*$")  # a currency sign, or a number sign ("order #2023")
_UNIT_AFTER = re.compile(
    r"^\s*(?:usd|eur|gbp|jpy|cny|rmb|chf|cad|aud|dollars?|bucks|euros?|pounds?|yen|yuan|"
    r"kr|km|kms|kilomet(?:er|re)s?|miles?|kg|kgs|kilos?|lbs?|calories|kcal|steps|words|pages|"
    r"people|followers|points|meters?|metres?|feet|ft)\b",
    re.IGNORECASE,
)
# A counted thing after the number ("expect 2000 guests", "sold 2023 tickets"): a lowercase word
# that reads as a plural (not "was", "this", "bus", "famous", "class"). A determiner or a time
# preposition before the number may still make it a year ("the 2020 olympics", "my 2019 taxes",
# "during 2021 prices rose"), and so may a number opening the text: those are read as before.
_COUNTED_AFTER = re.compile(
    r"^\s+(?!(?:always|perhaps|towards|afterwards|besides|news|series|yes|its)\b)[a-z]+(?<![siua])s\b"
)
_WORD_BEFORE = re.compile(r"(\w+)\W*$")
_YEAR_MAY_FOLLOW = frozenset(
    "the a an my your his her our their its this that these those each every last next "
    "during from to by before after around about of between and through throughout early late mid".split()
)


def not_a_year(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` is no year, though dateparser may read one.

    It is an amount or a label (a currency or unit beside it: "$1200", "4821 USD", "1999
    dollars"; a number sign before it: "order #2023"), or, with no year word before it ("in
    1066" and "since 1850" stay years), it lies outside 1900-2099 ("1000 guests", "Room
    1204", "PIN 4321") or counts the plural after it ("we expect 2000 guests"; "the 2020
    olympics" stays a year).
    """
    if _SIGN_BEFORE.search(text[max(0, start - 8) : start]) or _UNIT_AFTER.match(text[end:]):
        return True
    if _YEAR_BEFORE.search(text[max(0, start - 12) : start]):
        return False
    return int(text[start:end]) not in _CONVERSATION_YEARS or _counted(text, start, end)


def _counted(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` counts the plural after it ("we had 2000 guests")."""
    if not _COUNTED_AFTER.match(text[end:]):
        return False
    before = _WORD_BEFORE.search(text[max(0, start - 16) : start])
    return before is not None and before.group(1).casefold() not in _YEAR_MAY_FOLLOW


def no_year_spans(text: str) -> list[tuple[int, int]]:
    """The 3-4 digit numbers of a text that are no years: no time words (dateparser's reading is dropped)."""
    numbers = (m for m in NUMBERS.finditer(text) if 3 <= len(m.group()) <= 4)
    return [m.span() for m in numbers if not_a_year(text, *m.span())]
