"""The naming path (name ``naming``): a question asking for named things votes for lines that name some.

"Which US cities has John visited?", "What books has Tim read?", "他去过哪些城市？" ask
for a list of things, and the lines that answer them name the things: a place, a title,
a person ("I just finished "A Dance with Dragons"", "we went to a show in Boston"). The
lines that share the question's words without naming anything ("I love reading!") rank
beside them on every other path. The path takes the candidates the paths before it found
for this recall (``RecallQuery.earlier``), in their fused vote, and keeps the lines that
name something the question does not already name, so fusing it adds one vote for them.

What counts as naming, by rule, no model:

- English: a capitalised word inside a sentence (after a lower-case word, a digit or a
  comma: not the sentence's first word), or a quoted title;
- Chinese: a person, place or organisation name by jieba's part-of-speech tags
  (:func:`dreammem.text.entities.extract_entities`);
- not a name: the speakers of the candidate lines (their records' ``speaker``: "Thanks,
  Melanie!" addresses a speaker) and any word of the question ("Tim" in "What books has
  Tim read?").

A question that does not ask for a list (no "which/what <plural noun>", no "哪些") gets
``[]`` and the path changes nothing. On by default at weight 1.0, chosen by LoCoMo folds
held out beside the person path (:mod:`dreammem.recall.person`), which it complements:
without it the vote costs a multi-hop question. Measured in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.earlier import EarlierLinesPath
from dreammem.recall.speaker import speaker_of
from dreammem.text.entities import extract_entities
from dreammem.text.short_cache import short_text_cache
from dreammem.text.tokenize import contains_cjk
from dreammem.text.vocabulary import MONTHS, WEEKDAYS

__all__ = ["NamingPath", "asks_for_names", "names_in"]

_ASKING = re.compile(
    r"^\W*(?:(?:in|to|from|at|with|for|of)\s+)?(?:which|what)\s+((?:[\w/'’-]+\s+){1,3})", re.IGNORECASE
)
"""The first words after a leading "which" / "what" ("In which countries ...")."""

_VERBS = frozenset(
    "is are was were am be been do does did has have had can could will would shall should may might "
    "must".split()
)
"""Where the thing asked for ends: "What books *has* Tim read?" (and "What *does* ..." asks for no thing)."""

_NOT_PLURAL = frozenset({"this", "his", "its", "hers", "yours", "ours", "us", "as", "whose"})
"""Words ending in s that are no plural noun."""

_ZH_LIST = re.compile(r"哪些|哪几")
"""Chinese "which (ones)": a list question."""

_INNER_CAPITAL = re.compile(r"(?<=[a-z0-9,;] )[A-Z][A-Za-z'’-]*[A-Za-z]")
"""A capitalised word or acronym inside an English sentence (not its first word)."""

_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")
"""A quoted title ("The Name of the Wind")."""


def asks_for_names(question: str) -> bool:
    """Whether the question asks for a list of things ("which/what <plural noun> ...", "哪些")."""
    if _ZH_LIST.search(question):
        return True
    match = _ASKING.search(question)
    if match is None:
        return False
    for word in match.group(1).casefold().split():
        if word in _VERBS:
            return False
        if word.endswith("s") and not word.endswith("ss") and word not in _NOT_PLURAL:
            return True
    return False


_TIME_WORDS = frozenset((*WEEKDAYS, *(f"{day}s" for day in WEEKDAYS), *MONTHS))
"""Capitalised in English, but times, not things named."""


@short_text_cache
def names_in(text: str) -> tuple[str, ...]:
    """The names a line uses (casefolded): inner capitalised words, quoted titles, Chinese names.

    Cached for short lines (:mod:`dreammem.text.short_cache`): the same turns come back again.
    """
    found = [m.group(0) for m in _INNER_CAPITAL.finditer(text) if m.group(0).casefold() not in _TIME_WORDS]
    found += [m.group(1) for m in _QUOTED.finditer(text)]
    if contains_cjk(text):
        found += [e.text for e in extract_entities(text) if e.kind == "name"]
    return tuple(name.casefold() for name in found)


def _names_something(known: Iterable[str], question: str) -> Callable[[str], bool]:
    """Whether a line names something besides the known speakers and the question's own words."""
    skip = set(known)
    asked = question.casefold()
    words = set(re.findall(r"\w+", asked))

    def new_name(name: str) -> bool:
        if name in skip:
            return False
        return name not in asked if contains_cjk(name) else not set(re.findall(r"\w+", name)) <= words

    return lambda text: any(new_name(name) for name in names_in(text))


class NamingPath(EarlierLinesPath):
    """The lines naming something, among the other paths' candidates, for a question asking for a list.

    Arguments as :class:`~dreammem.recall.earlier.EarlierLinesPath`'s.
    """

    name = "naming"

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The candidate lines that name something, best voted first ([] unless asked for a list)."""
        if not asks_for_names(query.text):
            return []
        lines = self.lines(query)
        speakers = {s for _, record in lines if (s := speaker_of(record)) is not None}
        names_something = _names_something(speakers, query.text)
        out = [c for c, record in lines if names_something(record.content)]
        return out[: query.limit]
