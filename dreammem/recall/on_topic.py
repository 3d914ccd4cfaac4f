"""The content gate for dream summaries: a summary answers only questions it shares a word with.

A dream summary condenses several turns of one session. Its embedding sits between their
topics, and under the relevance floor it may stand in for any of its sources, so for a
question about something else entirely it could still rank among the first hits. A
summary is therefore kept only when it shares at least one content word with the
question, compared as the keyword index compares them (FTS5's porter stems, jieba's
words for Chinese): "what colour is the garden shed?" keeps "user: We repainted the
garden shed green", "Recommend a science fiction film" drops "user: I had a long
meeting this morning.; ...". Other records are judged by the relevance floor alone
(:mod:`dreammem.recall.gate`); a hit found by time and a path that answers alone
(a topic-free "what did we talk about last time?") are not held to it.
"""

from __future__ import annotations

from functools import lru_cache

from dreammem.stores.fts5_terms import Fts5Tokens
from dreammem.text.tokenize import STOPWORDS, query_terms, tokenize
from dreammem.types import Kind, MemoryRecord

__all__ = ["on_topic"]

_TOKENS = Fts5Tokens()


@lru_cache(maxsize=1024)
def _stems(text: str) -> frozenset[str]:
    [found] = _TOKENS.tokens([" ".join(t for t in tokenize(text) if t not in STOPWORDS)])
    return frozenset(found)


def on_topic(query: str, record: MemoryRecord) -> bool:
    """False only for a dream summary that shares no content word with the query."""
    if record.kind is not Kind.SUMMARY:
        return True
    terms = query_terms(query)
    if not terms:
        return True
    return not _stems(" ".join(terms)).isdisjoint(_stems(record.content))
