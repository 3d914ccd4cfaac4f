"""Reranker training groups from a store's own turns, with no annotated questions.

A user has memories, not questions about them. Inside a conversation two signals
point from one text to another that is relevant to it:

- ``question``: a turn asks something ("How was the pottery class on Sunday?") and
  the next turn by another speaker answers it: the question sentences are the
  query, the answering turn the positive;
- ``reply``: a reply refers back to what it answers ("Adoption agencies? That is
  brave!"): the reply is the query, the turn before it the positive.

Queries with fewer than ``min_query_words`` content words ("How are you?") are
skipped: they point at nothing in particular. Hard negatives come from the first
stage itself (a :class:`CandidateSource`, e.g. the store's own recall without a
reranker): what it ranks high for the query but is not its positive. The turns
between and around the query's turn and its positive (``guard`` on each side) are
never negatives: they are the query itself or likely relevant to it.

Everything here is pure apart from the candidate source; the groups feed
:func:`dreammem.rerank.training.mine_pairs` like annotated ones.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from dreammem.errors import ConfigError
from dreammem.rerank.training import QueryGroup
from dreammem.text.tokenize import query_terms

__all__ = [
    "CandidateSource",
    "PairKind",
    "SelfQuery",
    "SelfSupervisedConfig",
    "StoredTurn",
    "parse_kinds",
    "self_queries",
    "self_supervised_groups",
]

PairKind = Literal["question", "reply"]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_QUESTION_END = ("?", "？")


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One stored turn, in the order it was said.

    Attributes:
        text: The memory's content as stored (what the reranker will score).
        thread: The conversation or session it belongs to: pairs never cross threads.
        speaker: Who said it, if known; a leading ``"<speaker>: "`` is left out of
            queries made from it, and a question's answer must come from someone else.
    """

    text: str
    thread: str
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class SelfQuery:
    """A query made from one turn, the turn relevant to it, and the turns never negative.

    Attributes:
        kind: Which signal made it.
        query: The query text.
        source: Index of the turn the query was made from.
        positive: Index of the relevant turn.
        guarded: Indices of the turns never drawn as negatives (query, positive, neighbours).
    """

    kind: PairKind
    query: str
    source: int
    positive: int
    guarded: frozenset[int]


@dataclass(frozen=True, slots=True)
class SelfSupervisedConfig:
    """Which self-supervised queries are made and how their negatives are drawn.

    Attributes:
        kinds: The signals used (``question``, ``reply``).
        min_query_words: Content words (stop words left out) a query needs.
        depth: First-stage candidates asked for per query (the negative pool).
        guard: Turns on each side of the query and its positive never drawn as negatives.
        max_groups: Keep at most this many queries (a seeded sample); ``None``: all.
        seed: Seeds the sample.
    """

    kinds: tuple[PairKind, ...] = ("question", "reply")
    min_query_words: int = 3
    depth: int = 30
    guard: int = 1
    max_groups: int | None = None
    seed: int = 42

    def __post_init__(self) -> None:
        if not self.kinds or any(k not in ("question", "reply") for k in self.kinds):
            raise ConfigError("kinds must name 'question' and/or 'reply'")
        if self.min_query_words < 1 or self.depth < 1 or self.guard < 0:
            raise ConfigError("min_query_words and depth must be at least 1, guard at least 0")
        if self.max_groups is not None and self.max_groups < 1:
            raise ConfigError("max_groups must be at least 1 (or None for all)")


def parse_kinds(spec: str) -> tuple[PairKind, ...]:
    """``"question,reply"`` as kinds, in order, without repeats.

    Raises:
        ConfigError: an unknown kind, or none.
    """
    names = list(dict.fromkeys(n.strip() for n in spec.split(",") if n.strip()))
    kinds: list[PairKind] = []
    for name in names:
        if name == "question":
            kinds.append("question")
        elif name == "reply":
            kinds.append("reply")
        else:
            raise ConfigError(f"unknown self-supervised kind {name!r}: use question and/or reply")
    if not kinds:
        raise ConfigError("name at least one self-supervised kind (question, reply)")
    return tuple(kinds)


class CandidateSource(Protocol):
    """The first stage: memory texts for a query, best first (at most ``depth``)."""

    def __call__(self, query: str, depth: int, /) -> Sequence[str]:
        """Rank the store's memories for ``query``."""
        ...


def _spoken(turn: StoredTurn) -> str:
    """The turn's words without a leading ``"<speaker>: "``."""
    text = turn.text.strip()
    if turn.speaker and text.startswith(f"{turn.speaker}:"):
        return text[len(turn.speaker) + 1 :].strip()
    return text


def _questions(text: str) -> str:
    """The sentences of ``text`` that ask something, joined; empty when none does."""
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    return " ".join(s for s in sentences if s.endswith(_QUESTION_END))


def _guard(turns: Sequence[StoredTurn], low: int, high: int, width: int) -> frozenset[int]:
    thread = turns[low].thread
    span = range(max(0, low - width), min(len(turns), high + width + 1))
    return frozenset(i for i in span if turns[i].thread == thread)


def _other_speaker(a: StoredTurn, b: StoredTurn) -> bool:
    return a.speaker is None or b.speaker is None or a.speaker != b.speaker


def self_queries(turns: Sequence[StoredTurn], config: SelfSupervisedConfig | None = None) -> list[SelfQuery]:
    """The self-supervised queries of a list of turns (in the order they were said).

    Each turn followed, in its thread, by a turn of another speaker gives at most
    one ``question`` query (its question sentences -> the next turn) and that next
    turn one ``reply`` query (it -> this turn). With ``max_groups`` a seeded sample
    is kept, in the original order.
    """
    cfg = config or SelfSupervisedConfig()
    found: list[SelfQuery] = []
    for i in range(len(turns) - 1):
        here, after = turns[i], turns[i + 1]
        if here.thread != after.thread or not _other_speaker(here, after):
            continue
        guarded = _guard(turns, i, i + 1, cfg.guard)
        if "question" in cfg.kinds:
            asked = _questions(_spoken(here))
            if len(query_terms(asked)) >= cfg.min_query_words:
                found.append(SelfQuery("question", asked, i, i + 1, guarded))
        if "reply" in cfg.kinds:
            reply = _spoken(after)
            if len(query_terms(reply)) >= cfg.min_query_words:
                found.append(SelfQuery("reply", reply, i + 1, i, guarded))
    if cfg.max_groups is not None and len(found) > cfg.max_groups:
        keep = sorted(random.Random(cfg.seed).sample(range(len(found)), cfg.max_groups))
        found = [found[i] for i in keep]
    return found


def self_supervised_groups(
    turns: Sequence[StoredTurn],
    candidates: CandidateSource,
    config: SelfSupervisedConfig | None = None,
) -> list[QueryGroup]:
    """Training groups from the turns alone: self-supervised queries, first-stage negatives.

    Args:
        turns: The store's turns, in the order they were said.
        candidates: The first stage, asked once per query for ``config.depth`` texts.
        config: Which queries and how deep.

    Returns:
        One :class:`QueryGroup` per query; its candidates are the first stage's
        results without the guarded turns (the query's own, its positive, their neighbours).
    """
    cfg = config or SelfSupervisedConfig()
    groups: list[QueryGroup] = []
    for item in self_queries(turns, cfg):
        near = {turns[i].text for i in item.guarded}
        ranked = [text for text in candidates(item.query, cfg.depth) if text not in near]
        groups.append(QueryGroup(item.query, (turns[item.positive].text,), tuple(ranked)))
    return groups
