"""The verbatim guard: nothing that matters may be paraphrased away.

Every number, date, amount, id, name, brand and hard limit ("only", "must", "never",
"不超过", "只能", ...) of a source record must appear verbatim in whatever replaces
it (a summary, a pattern, a merged record); otherwise the source is kept as it is.
A replacement may not carry a number that none of its sources has either (an
invented number rejects the replacement). An LLM's summary must also carry most of
each source's content words (:func:`uncarried_words`): a source with nothing protected
("紧急情况现在发短信给我", "I shop on Sunday mornings now") that a summary leaves out
entirely would otherwise be archived into a line that no longer says it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from dreammem.text.entities import Entity, extract_entities
from dreammem.text.tokenize import contains_cjk, query_terms, tokenize
from dreammem.text.vocabulary import HARD_LIMITS

__all__ = [
    "contains",
    "entities",
    "invented_numbers",
    "missing_tokens",
    "numbers",
    "protected_tokens",
    "uncarried_words",
]


CARRY_SHARE = 0.5
"""Least share of a source's content words a summary must carry to stand in for it."""

_ENTITY_KINDS = frozenset({"amount", "date", "id", "email", "phone", "url", "name"})
_DIGITS = re.compile(r"(?<![0-9A-Za-z])[0-9A-Za-z]*\d[0-9A-Za-z]*(?:[.,:/]\d[0-9A-Za-z]*)*%?")
_CN_NUMBER = re.compile(
    r"[零〇一二两三四五六七八九十百千万亿]*[十百千万亿][零〇一二两三四五六七八九十百千万亿]*"
    r"|[零〇一二两三四五六七八九]+(?=[元块天年月日号周个次人岁%])"
)
_BRAND = re.compile(r"\b(?:[A-Z]{2,}[A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*)\b")
_LATIN_LIMITS = tuple(w for w in HARD_LIMITS if w.isascii())
_CJK_LIMITS = tuple(w for w in HARD_LIMITS if not w.isascii())


@lru_cache(maxsize=4096)
def entities(text: str) -> tuple[Entity, ...]:
    """The entities of a text, cached (jieba's name tagging is the costly part of a dream)."""
    return tuple(extract_entities(text))


@lru_cache(maxsize=4096)
def _protected(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for entity in entities(text):
        if entity.kind in _ENTITY_KINDS:
            found[entity.text] = None
    for pattern in (_DIGITS, _CN_NUMBER, _BRAND):
        for match in pattern.finditer(text):
            found[match.group(0)] = None
    lowered = text.casefold()
    for word in _LATIN_LIMITS:
        if _word_in(word, lowered):
            found[word] = None
    for word in _CJK_LIMITS:
        if word in text:
            found[word] = None
    # Only tokens that stand on their own in the source (jieba may cut "A0" out of "0A0").
    return tuple(t for t in found if contains(text, t))


def protected_tokens(text: str) -> tuple[str, ...]:
    """The tokens of a text that a replacement must carry verbatim, in order."""
    return _protected(text)


_PIECE = re.compile(r"[0-9A-Za-z]+|.", re.DOTALL)
_GLUED_BEFORE = frozenset(f"{d}{p}" for d in "0123456789" for p in ".,")
_GLUED_AFTER = frozenset(f"{p}{d}" for d in "0123456789" for p in ".,")


class _Pieces:
    """A text cut into maximal ASCII letter/digit runs and single other characters.

    A token "stands on its own" in the text when it is a run of consecutive pieces:
    then it is not glued to letters or digits on either side. Windows of ``p`` pieces
    are collected once per piece count, so every membership test afterwards costs
    O(1), and checking any number of tokens stays linear in the text's length.
    """

    __slots__ = ("_ends", "_free_end", "_free_start", "_starts", "_text", "_windows")

    def __init__(self, text: str) -> None:
        self._text = text
        spans = [m.span() for m in _PIECE.finditer(text)]
        self._starts = [s for s, _ in spans]
        self._ends = [e for _, e in spans]
        # "50" is not in "50,000" and "3" is not in "2.3": a digit run ends where the number does.
        self._free_start = [
            not (text[s].isdigit() and text[max(s - 2, 0) : s] in _GLUED_BEFORE) for s in self._starts
        ]
        self._free_end = [not (text[e - 1].isdigit() and text[e : e + 2] in _GLUED_AFTER) for e in self._ends]
        self._windows: dict[int, frozenset[str]] = {}

    def windows(self, count: int) -> frozenset[str]:
        """Every run of ``count`` consecutive pieces that respects the digit rule."""
        found = self._windows.get(count)
        if found is None:
            text, last = self._text, count - 1
            found = self._windows[count] = frozenset(
                text[start:end]
                for start, end, free_start, free_end in zip(
                    self._starts, self._ends[last:], self._free_start, self._free_end[last:], strict=False
                )
                if free_start and free_end
            )
        return found


@lru_cache(maxsize=64)
def _pieces(text: str) -> _Pieces:
    return _Pieces(text)


def _word_in(token: str, text: str) -> bool:
    """True when ``token`` occurs in ``text`` not glued to letters or digits on either side."""
    if not token:
        return True
    return token in _pieces(text).windows(sum(1 for _ in _PIECE.finditer(token)))


def contains(text: str, token: str) -> bool:
    """True when the token appears verbatim in the text (hard limits: any case)."""
    if token in _LATIN_LIMITS:
        return _word_in(token, text.casefold())
    return _word_in(token, text)


def missing_tokens(source: str, replacement: str) -> tuple[str, ...]:
    """Protected tokens of ``source`` that ``replacement`` does not carry verbatim."""
    return tuple(t for t in protected_tokens(source) if not contains(replacement, t))


def numbers(text: str) -> tuple[str, ...]:
    """Every number in a text (digit runs and Chinese numerals), in order."""
    found = [m.group(0) for m in _DIGITS.finditer(text)]
    found.extend(m.group(0) for m in _CN_NUMBER.finditer(text))
    return tuple(dict.fromkeys(found))


def invented_numbers(replacement: str, sources: Sequence[str] | Iterable[str]) -> tuple[str, ...]:
    """Numbers in ``replacement`` that appear in none of the ``sources``."""
    texts = list(sources)
    return tuple(n for n in numbers(replacement) if not any(contains(s, n) for s in texts))


def uncarried_words(source: str, replacement: str) -> tuple[str, ...]:
    """The source's content words the replacement lacks, when it lacks too many (else ``()``).

    The replacement carries the source when it has at least :data:`CARRY_SHARE` of the
    source's distinct content words (a Chinese word counts when it appears in the text).
    """
    terms = query_terms(source)
    if not terms:
        return ()
    words = set(tokenize(replacement))
    lacking = tuple(t for t in terms if t not in words and not (contains_cjk(t) and t in replacement))
    return lacking if len(lacking) > (1 - CARRY_SHARE) * len(terms) else ()
