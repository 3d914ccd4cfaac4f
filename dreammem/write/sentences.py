"""Updates between paragraphs, decided sentence by sentence.

A long turn is never decided as a whole (:func:`dreammem.write.resolve.is_compact`):
superseding it would retire every fact it holds, and most of a paragraph is about
something else. Its sentences are decided instead: each sentence of the newer record
that states a value is compared with each such sentence of the older one by
:func:`~dreammem.write.updates.decide`, without the closest-statement fallback (a shared
attribute family, or a name the user shares, must tie the two sentences). Only a
replacement by an explicit change cue counts (rule ``change_cue``: "I've been using it along
with my other two bikes" / "... I just got a new one, so I'll actually have four bikes"): a
paragraph restates and elaborates, so two sentences only about the same subject, a "now"
beside another value, or a newer sentence that says all of the older one and more are not
enough to cast doubt on a paragraph. The older record is
then marked possibly outdated (rule :data:`SENTENCE_UPDATE`), never superseded, with both
sentences in the reason, so recall ranks the newer record first and ``history()`` says why.

Ordinary conversation is full of sentences that look like changes ("a new laptop", "a new
trip") beside older ones of the same broad family ("tools", "travel"). Guards keep those
apart: :mod:`dreammem.write.resolve` asks only about an older record of another session
(within one session a paragraph goes on with what was just said); the two records must be
about one subject by meaning (their similarity reaches the embedder's same-subject
threshold, :data:`dreammem.write.resolve.SAME_SUBJECT`); the two sentences must share
:data:`MIN_SHARED` topic words (a contraction of a function word, "I'm", "I've", is none).
Of the older records a newer one would mark so, only the closest is marked (:func:`strongest`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from dreammem.text.tokenize import STOPWORDS
from dreammem.write.rules import is_question
from dreammem.write.statements import Statement, analyse
from dreammem.write.updates import Action, Decision, decide

__all__ = [
    "MIN_SHARED",
    "SENTENCE_UPDATE",
    "sentence_update",
    "shared_words",
    "split_sentences",
    "strongest",
    "value_sentences",
]

SENTENCE_UPDATE = "sentence_update"
"""The rule name of a mark decided between two sentences of longer records."""

T = TypeVar("T")

MIN_SHARED = 3
"""Topic words two sentences must share for one to replace the other."""

_CHANGE_CUE = "change_cue"
"""The rule of :func:`~dreammem.write.updates.decide` that counts between sentences (a supersede)."""

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_APOSTROPHE = re.compile(r"['’]")
_MAX_SENTENCES = 24
"""Only a paragraph's first sentences are read (bounded pairs on huge input)."""


def split_sentences(text: str) -> list[str]:
    """The non-empty sentences of a text, stripped (English and Chinese end marks)."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text.strip()) if s.strip()]


@functools.lru_cache(maxsize=8192)
def value_sentences(text: str) -> tuple[Statement, ...]:
    """The sentences of ``text`` that could change or be changed: not questions, a value of a known kind."""
    analysed = (analyse(s) for s in split_sentences(text)[:_MAX_SENTENCES] if not is_question(s))
    return tuple(s for s in analysed if s.states_value and (s.families or s.strong_cues))


def shared_words(new: Statement, old: Statement) -> frozenset[str]:
    """The topic words two statements share, less contractions of function words ("i'm", "it's")."""
    return frozenset(w for w in new.topics & old.topics if _APOSTROPHE.split(w)[0] not in STOPWORDS)


def strongest(
    decisions: Sequence[tuple[T, Decision]], similarity: Callable[[T], float]
) -> list[tuple[T, Decision]]:
    """The decisions less every sentence-level mark but the strongest (most shared words, then closest)."""
    marks = [i for i, (_, d) in enumerate(decisions) if d.rule == SENTENCE_UPDATE]
    if len(marks) < 2:
        return list(decisions)
    keep = max(marks, key=lambda i: (decisions[i][1].overlap, similarity(decisions[i][0])))
    return [cd for i, cd in enumerate(decisions) if i == keep or cd[1].rule != SENTENCE_UPDATE]


def sentence_update(new_text: str, old_text: str, similarity: float, *, related: bool) -> Decision | None:
    """A mark of the older text when one of its sentences is replaced by one of the newer text's.

    Args:
        new_text: The newer record's text.
        old_text: The older record's text.
        similarity: The two records' embedding cosine similarity (for the reason).
        related: That similarity reaches the embedder's same-subject threshold.

    Returns:
        An unsure decision (a mark, rule :data:`SENTENCE_UPDATE`) naming both sentences,
        or None when no sentence of the newer text replaces one of the older text.
    """
    if not related:
        return None
    best: tuple[int, Decision, Statement, Statement] | None = None
    for new in value_sentences(new_text):
        for old in value_sentences(old_text):
            decision = decide(new, old, similarity=similarity, closest=False)
            if decision is None or decision.rule != _CHANGE_CUE:
                continue
            shared = len(shared_words(new, old))
            if shared >= MIN_SHARED and (best is None or shared > best[0]):
                best = (shared, decision, new, old)
    if best is None:
        return None
    overlap, decision, new, old = best
    why = f"{decision.reason}; the sentence {new.text!r} replaces {old.text!r}"
    return Decision(Action.UNSURE, SENTENCE_UPDATE, why, overlap)
