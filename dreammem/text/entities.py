"""Rule-based entity extraction: ids, amounts, dates, contacts and names.

These entities feed the keyword path (exact match), the graph path (entity nodes)
and the write path (a turn carrying a *key* entity is written to long-term memory at
once). Everything here is regular expressions over the text; no model is needed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from dreammem.quiet import quiet_jieba
from dreammem.text.tokenize import STOPWORDS, contains_cjk

__all__ = ["KEY_KINDS", "Entity", "extract_entities", "has_key_entity", "normalize_entity"]


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity found in a text: its surface form and its kind."""

    text: str
    kind: str

    @property
    def key(self) -> str:
        """The normalised form used to match the same entity across memories."""
        return normalize_entity(self.text)


KEY_KINDS = frozenset({"id", "amount", "date", "email", "phone", "url"})
"""Entity kinds that make a turn worth writing to long-term memory at once."""

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|"
    r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_CN_NUM = r"[零〇一二两三四五六七八九十百千万亿\d]"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("url", re.compile(r"https?://[^\s<>\"']+")),
    (
        "date",
        re.compile(
            r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b"
            r"|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"
            rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\.?(?:,?\s+\d{{4}})?\b"
            rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
            rf"|\b{_MONTHS}\s+\d{{4}}\b"
            r"|\d{2,4}年(?:\d{1,2}月)?(?:\d{1,2}[日号])?|\d{1,2}月\d{1,2}[日号]",
            re.IGNORECASE,
        ),
    ),
    (
        "amount",
        re.compile(
            r"(?:[$€£¥￥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand))?)"
            r"|\b\d[\d,]*(?:\.\d+)?\s?(?:k\b|%|percent\b|usd\b|eur\b|rmb\b|cny\b|gbp\b|jpy\b"
            r"|dollars?\b|euros?\b|yuan\b|pounds?\b)"
            rf"|(?:人民币)?{_CN_NUM}+(?:\.\d+)?\s?(?:元|块|万元|美元|欧元|英镑)",
            re.IGNORECASE,
        ),
    ),
    (
        "phone",
        re.compile(r"(?<![\w-])\+?\d[\d\s().-]{7,}\d(?![\w-])"),
    ),
    (
        "id",
        re.compile(
            r"#\d{3,}\b|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b"
            r"|\b[A-Z]{2,}\d{3,}\b|\b\d{6,}\b"
        ),
    ),
)
_NAME = re.compile(r"\b[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*)*")
_NOT_NAMES = frozenset(
    [
        "I",
        "I'm",
        "I've",
        "I'd",
        "I'll",
        "Hey",
        "Hi",
        "Hello",
        "Yes",
        "No",
        "Oh",
        "Ok",
        "Okay",
        "Thanks",
        "Thank",
        "Sure",
        "Wow",
        "Well",
        "So",
        "And",
        "But",
        "Or",
        "The",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "It's",
        "Its",
        "My",
        "Your",
        "Our",
        "Their",
        "We",
        "You",
        "He",
        "She",
        "They",
        "What",
        "When",
        "Where",
        "Why",
        "How",
        "Who",
        "Which",
        "Remember",
        "Always",
        "Never",
        "Please",
        "Also",
        "Actually",
        "From",
        "Now",
        "Just",
        "Let",
        "Lets",
        "Let's",
        "Maybe",
        "Great",
        "Good",
        "Nice",
        "Cool",
        "Awesome",
        "Sounds",
        "Glad",
        "Sorry",
        "Really",
        "Definitely",
        "Absolutely",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Today",
        "Tomorrow",
        "Yesterday",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "Did",
        "Do",
        "Does",
        "Is",
        "Are",
        "Was",
        "Were",
        "Have",
        "Has",
        "Had",
        "Can",
        "Could",
        "Would",
        "Should",
        "Will",
        "Any",
        "Some",
        "All",
        "Not",
        "If",
        "Then",
        "Once",
        "Since",
        "After",
        "Before",
        "As",
        "At",
        "In",
        "On",
        "For",
        "With",
        "To",
        "By",
        "Of",
        "Me",
        "Us",
        "Them",
        "Her",
        "Him",
    ]
)


def normalize_entity(text: str) -> str:
    """Casefold and squeeze whitespace, so 'Order #123' and 'order  #123' match."""
    return " ".join(text.casefold().split())


def _names(text: str) -> list[str]:
    names: list[str] = []
    for match in _NAME.finditer(text):
        words = [w for w in match.group(0).split() if w not in _NOT_NAMES]
        # Drop leading/trailing filler words but keep inner ones ("Bank of America").
        while words and words[0].casefold() in STOPWORDS:
            words.pop(0)
        if words:
            names.append(" ".join(words))
    return names


_CACHED_CHARS = 2_000
"""A text up to this long keeps its entities in a small cache: a write reads each turn's
entities three times (its record, its statement's analysis, its graph item)."""


def extract_entities(text: str) -> list[Entity]:
    """All entities in the text, each surface form once, in order of appearance."""
    return list(_cached(text) if len(text) <= _CACHED_CHARS else _extract(text))


def _extract(text: str) -> tuple[Entity, ...]:
    found: list[tuple[int, Entity]] = []
    # One byte per character, 1 where an earlier match lies: overlap tests stay linear.
    taken = bytearray(len(text))
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if taken.find(1, start, end) >= 0:
                continue
            surface = match.group(0).strip(" .,;:()")
            if kind == "phone" and sum(c.isdigit() for c in surface) < 8:
                continue
            if surface:
                taken[start:end] = b"\x01" * (end - start)
                found.append((start, Entity(surface, kind)))
    for match in _NAME.finditer(text):
        if taken.find(1, match.start(), match.end()) >= 0:
            continue
        for name in _names(match.group(0)):
            found.append((match.start(), Entity(name, "name")))
    if contains_cjk(text):
        found.extend((position, Entity(n, "name")) for position, n in _cjk_names(text))
    found.sort(key=lambda item: item[0])
    seen: set[str] = set()
    result: list[Entity] = []
    for _, entity in found:
        if entity.key not in seen:
            seen.add(entity.key)
            result.append(entity)
    return tuple(result)


_cached = functools.lru_cache(maxsize=4096)(_extract)


def _cjk_names(text: str) -> list[tuple[int, str]]:
    """Person, place and organisation names in Chinese text (jieba's POS tags), with positions."""
    quiet_jieba()  # loads the dictionary without its log lines before posseg touches it
    from jieba import posseg  # noqa: PLC0415 - jieba loads its dictionary machinery: only for Chinese text

    names = []
    cursor = 0
    for pair in posseg.cut(text):
        position = text.find(pair.word, cursor)
        if position >= 0:
            cursor = position + len(pair.word)
        if pair.flag in {"nr", "ns", "nt", "nz", "nrt", "eng"} and len(pair.word) > 1:
            names.append((position if position >= 0 else text.find(pair.word), pair.word))
    return names


def has_key_entity(entities: list[Entity]) -> bool:
    """True when any entity is an id, amount, date, email, phone number or URL."""
    return any(e.kind in KEY_KINDS for e in entities)
