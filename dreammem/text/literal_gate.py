r"""Skip regular expressions that cannot match a text, by the literal words every match contains.

Python's ``re`` tries a long alternation of words (``\b(?:email|phone|slack|...)\b``) at
every position of a text: a leading ``\b`` or ``re.IGNORECASE`` rules out its fast scan for a
first character. The rule code of the write path runs dozens of such patterns on each
statement, and most of them match nothing. A :class:`LiteralGate` reads each pattern once
and finds, for every way the pattern can match, a literal that the match must contain: a
word prefix ("a word of the text starts with ``email``", from ``\bemail``) or a plain
substring ("the text contains ``:``", from ``\d{1,2}:\d{2}``). When a text contains none of a
pattern's literals, the pattern cannot match it and is not run.

The gate is exact: it only ever skips a pattern that would have found nothing. It reads
ASCII texts only (lower-casing an ASCII text is what ``re.IGNORECASE`` does to it; a literal
that is not ASCII, such as a Chinese word, can then never occur), and any syntax it does not
know makes a pattern "always run". A text that is not ASCII runs every pattern.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["GatedText", "LiteralGate"]

_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_")
_SPECIAL = frozenset(".^$*+?{}[]\\|()")
_ZERO_WIDTH_ESCAPES = frozenset("bBAZ")
# An ASCII text as its lower-cased words: every non-word character becomes a space.
_TO_WORDS = str.maketrans(
    {c: " " for c in map(chr, range(128)) if c not in _WORD_CHARS}
    | {c: c.lower() for c in string.ascii_uppercase}
)


class _Unknown(Exception):
    """Syntax the gate does not read: the pattern always runs."""


@dataclass(frozen=True, slots=True)
class _Needles:
    """A condition every match meets: a word starts with one of ``words``, or one of ``anywhere`` occurs.

    Both empty: the match cannot happen in an ASCII text (it needs a character that is not ASCII).
    """

    words: frozenset[str] = frozenset()
    anywhere: frozenset[str] = frozenset()

    def __or__(self, other: _Needles) -> _Needles:
        return _Needles(self.words | other.words, self.anywhere | other.anywhere)

    def score(self) -> tuple[float, int]:
        """How rarely the condition holds: longer literals are rarer, a word prefix rarer than a substring."""
        lengths = [len(w) + 2 for w in self.words] + [len(a) for a in self.anywhere]
        return min(lengths, default=float("inf")), -len(lengths)


def _best(candidates: list[_Needles]) -> _Needles | None:
    return max(candidates, key=_Needles.score, default=None)


def _ascii_literal(char: str) -> str | None:
    """The lower-cased character, ``None`` when it is not ASCII and has no case (it never occurs)."""
    if char.isascii():
        return char.lower()
    if char.lower() != char or char.upper() != char:
        raise _Unknown(char)  # under IGNORECASE a cased letter may match an ASCII one ("K" and "k")
    return None


class _Parser:
    """A reader of the ``re`` syntax the rule code uses, to the literals its matches contain."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0

    def peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.text[at] if at < len(self.text) else ""

    def alternation(self, *, after_boundary: bool) -> _Needles | None:
        """``a|b|...`` up to a closing parenthesis or the end: the union of its branches."""
        branches = [self.sequence(after_boundary=after_boundary)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence(after_boundary=after_boundary))
        if any(b is None for b in branches):
            return None
        out = _Needles()
        for branch in branches:
            assert branch is not None
            out |= branch
        return out

    def sequence(self, *, after_boundary: bool) -> _Needles | None:
        """One branch: the most telling of the conditions its required parts give."""
        candidates: list[_Needles] = []
        run, run_is_word = "", False  # consecutive literal characters, and whether a word starts there
        impossible = False
        boundary = after_boundary  # a word character here starts a word (after \\b, a space, ...)

        def close() -> None:
            nonlocal run
            if run:
                candidates.append(_Needles(anywhere=frozenset({run})))
                if run_is_word:
                    prefix = _word_prefix(run)
                    candidates.append(_Needles(words=frozenset({prefix})))
            run = ""

        while (char := self.peek()) and char not in "|)":
            if char == "\\" and self.peek(1) in _ZERO_WIDTH_ESCAPES:
                self.pos += 2
                close()
                boundary = boundary or char + self.text[self.pos - 1] == "\\b"
                continue
            if char in "^$":
                self.pos += 1
                close()
                continue
            if self.text.startswith(("(?=", "(?!", "(?<=", "(?<!"), self.pos):
                self.pos += 3 if self.peek(2) in "=!" else 4
                self.alternation(after_boundary=False)  # zero-width: read past it
                self.expect(")")
                close()
                continue
            nonword = self.text.startswith(("\\s", "\\W"), self.pos)  # what follows starts a word
            atom, literal = self.atom(after_boundary=boundary and not run)
            low, required = self.quantifier()
            if literal is not None and required:
                if not run:
                    run_is_word = boundary and literal in _WORD_CHARS
                run += literal
                if low != "one":
                    close()
            else:
                close()
                if atom is not None and required:
                    if not atom.words and not atom.anywhere:
                        impossible = True
                    candidates.append(atom)
            if literal == "" and required:
                impossible = True  # a character that never occurs in an ASCII text
            boundary = required and (nonword or (bool(literal) and literal not in _WORD_CHARS))
        close()
        if impossible:
            return _Needles()
        return _best(candidates)

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise _Unknown(self.text[self.pos :])
        self.pos += 1

    def atom(self, *, after_boundary: bool) -> tuple[_Needles | None, str | None]:
        """One atom: its condition, and the character when it is one literal ("" for a non-ASCII one)."""
        char = self.peek()
        if char == "(":
            self.pos += 1
            if self.text.startswith("?:", self.pos):
                self.pos += 2
            elif self.text.startswith("?P<", self.pos):
                self.pos = self.text.index(">", self.pos) + 1
            elif self.peek() == "?":
                raise _Unknown(self.text[self.pos :])
            inner = self.alternation(after_boundary=after_boundary)
            self.expect(")")
            return inner, None
        if char == "[":
            return self.char_class(), None
        if char == ".":
            self.pos += 1
            return None, None
        if char == "\\":
            self.pos += 1
            if self.peek() == "d":
                self.pos += 1
                return _Needles(anywhere=frozenset(string.digits)), None
            escaped = self.escaped_char()
            return None, None if escaped is None else _ascii_literal(escaped) or ""
        if char in _SPECIAL:
            raise _Unknown(self.text[self.pos :])
        self.pos += 1
        return None, _ascii_literal(char) or ""

    def char_class(self) -> _Needles | None:
        """``[...]``: the ASCII characters it takes (``None`` for a negated or a wide class)."""
        self.expect("[")
        negated = self.peek() == "^"
        self.pos += negated
        chars: set[str] = set()
        unknown = negated
        first = True
        while (char := self.peek()) != "]" or first:
            if not char:
                raise _Unknown("unterminated class")
            first = False
            self.pos += 1
            if char == "\\" and self.peek() == "d":
                self.pos += 1
                chars.update(string.digits)
                continue
            low = self.escaped_char() if char == "\\" else char
            if low is None:
                unknown = True  # \w, \s ...
                continue
            char = low
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 2
                high = self.escaped_char() if self.text[self.pos - 1] == "\\" else self.text[self.pos - 1]
                if high is None:
                    raise _Unknown("a class range ending in a category")
                if ord(high) - ord(char) > 128:
                    unknown = True
                    continue
                for code in range(ord(char), ord(high) + 1):
                    lit = _ascii_literal(chr(code))
                    if lit is not None:
                        chars.add(lit)
                continue
            lit = _ascii_literal(char)
            if lit is not None:
                chars.add(lit)
        self.pos += 1
        return None if unknown else _Needles(anywhere=frozenset(chars))

    def escaped_char(self) -> str | None:
        r"""The character an escape stands for (``\u4e00``, ``\.``), its backslash read; ``None``: a class."""
        char = self.peek()
        self.pos += 1
        digits = {"x": 2, "u": 4, "U": 8}.get(char)
        if digits is not None:
            code = self.text[self.pos : self.pos + digits]
            self.pos += digits
            return chr(int(code, 16))
        if char in "wWsSdD":
            return None
        if not char or char.isalnum():
            raise _Unknown("\\" + char)
        return char

    def quantifier(self) -> tuple[str, bool]:
        """The quantifier after an atom: ("one" | "many", whether the atom is required)."""
        char = self.peek()
        if char in ("?", "*", "+"):
            self.pos += 1
            kind, required = ("one", False) if char == "?" else ("many", char == "+")
        elif char == "{":
            match = re.compile(r"\{(\d*)(,?)(\d*)\}").match(self.text, self.pos)
            if match is None:
                raise _Unknown(self.text[self.pos :])
            self.pos = match.end()
            low = int(match.group(1) or 0)
            kind, required = "many", low >= 1
        else:
            return "one", True
        if self.peek() in ("?", "+"):
            self.pos += 1  # lazy or possessive
        return kind, required


def _word_prefix(run: str) -> str:
    """The leading word characters of a literal run."""
    for at, char in enumerate(run):
        if char not in _WORD_CHARS:
            return run[:at]
    return run


def _needles(pattern: re.Pattern[str]) -> _Needles | None:
    """The condition every match of ``pattern`` meets in an ASCII text (``None``: it cannot tell)."""
    if pattern.flags & (re.VERBOSE | re.ASCII | re.LOCALE):
        return None
    parser = _Parser(pattern.pattern)
    try:
        needles = parser.alternation(after_boundary=False)
        if parser.pos != len(pattern.pattern):
            return None
    except (_Unknown, ValueError):
        return None
    return needles


class LiteralGate:
    """Which of some compiled patterns may match a text (see the module docstring).

    Args:
        patterns: The patterns the gate answers for; any other pattern always runs.
    """

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        # One bit per pattern, found by the pattern's id: hashing a compiled pattern hashes its code.
        self._patterns = list(dict.fromkeys(patterns))  # keeps the ids alive
        self._bits = {id(p): 1 << i for i, p in enumerate(self._patterns)}
        self._always = 0
        prefixes: dict[str, int] = {}
        anywhere: dict[str, int] = {}
        for pattern in self._patterns:
            bit = self._bits[id(pattern)]
            needles = _needles(pattern)
            if needles is None:
                self._always |= bit
                continue
            for prefix in needles.words:
                prefixes[prefix] = prefixes.get(prefix, 0) | bit
            for literal in needles.anywhere:
                anywhere[literal] = anywhere.get(literal, 0) | bit
        self._prefixes = prefixes
        self._lengths = sorted({len(p) for p in prefixes})
        self._anywhere = list(anywhere.items())

    def possible(self, text: str) -> int | None:
        """The bits of the gate's patterns that may match ``text`` (``None``: it cannot tell, not ASCII)."""
        if not text.isascii():
            return None
        found = self._always
        prefixes, lengths = self._prefixes, self._lengths
        for word in text.translate(_TO_WORDS).split():
            for length in lengths:
                if length > len(word):
                    break
                found |= prefixes.get(word[:length], 0)
        lowered = text.lower()
        for literal, bits in self._anywhere:
            if bits & ~found and literal in lowered:
                found |= bits
        return found

    def may_match(self, pattern: re.Pattern[str], text: str) -> bool:
        """False only when ``pattern`` is proven not to match ``text``."""
        return self.view(text).may_match(pattern)

    def view(self, text: str) -> GatedText:
        """``text`` with the gate's answer, to search it with the patterns that may match."""
        return GatedText(text, self.possible(text), self._bits)


@dataclass(frozen=True, slots=True)
class GatedText:
    """A text and a gate's answer for it: searches that cannot match return at once."""

    text: str
    possible: int | None
    """The bits of the gate's patterns that may match (``None``: all may)."""
    bits: dict[int, int]
    """The gate's bit of each pattern it answers for, by ``id``; any other pattern always runs."""

    def may_match(self, pattern: re.Pattern[str]) -> bool:
        """False only when ``pattern`` is proven not to match the text."""
        if self.possible is None:
            return True
        bit = self.bits.get(id(pattern))
        return bit is None or bool(self.possible & bit)

    def search(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """``pattern.search(text)``."""
        return pattern.search(self.text) if self.may_match(pattern) else None

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """``pattern.match(text)`` (a match at the start is a match anywhere: the same gate holds)."""
        return pattern.match(self.text) if self.may_match(pattern) else None

    def finditer(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """``pattern.finditer(text)``."""
        return pattern.finditer(self.text) if self.may_match(pattern) else iter(())

    def sub(self, pattern: re.Pattern[str], repl: str) -> str:
        """``pattern.sub(repl, text)``."""
        return pattern.sub(repl, self.text) if self.may_match(pattern) else self.text
