"""The feedback path (name ``feedback``): BM25 again, the query expanded from its own best matches.

Pseudo-relevance feedback: the keyword path's top memories for this recall are taken
as relevant; words that several of them share and the query lacks are added to the
query's words, and the expanded query is searched once more. A memory that answers in
other words than the question's ("pottery class" for "what does she do on weekends?")
can match the words of its neighbours.

It reuses the keyword path's candidates of this recall (``RecallQuery.earlier``), so
it must run after it; without them it returns ``[]``. Add ``"feedback"`` to
``RecallConfig.paths`` to use it (off by default; measured in docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.base import RecordStore
from dreammem.text.tokenize import query_terms

__all__ = ["FeedbackPath", "expansion_terms"]


def expansion_terms(
    query: Sequence[str], feedback: Iterable[str], *, terms: int = 5, min_docs: int = 2
) -> list[str]:
    """Words of the feedback texts (best first) worth adding to the query's words.

    A word counts ``1 / rank`` for each feedback text it is in; words in fewer than
    ``min_docs`` texts, and the query's own words, are left out.

    Args:
        query: The query's terms.
        feedback: The feedback texts, best first.
        terms: How many words at most.
        min_docs: In how many feedback texts a word must be.
    """
    own = set(query)
    weight: dict[str, float] = {}
    docs: dict[str, int] = {}
    for rank, text in enumerate(feedback, 1):
        for term in query_terms(text):
            if term in own:
                continue
            weight[term] = weight.get(term, 0.0) + 1.0 / rank
            docs[term] = docs.get(term, 0) + 1
    chosen = [t for t in weight if docs[t] >= min_docs]
    return sorted(chosen, key=lambda t: -weight[t])[:terms]


class FeedbackPath:
    """BM25 over the query's words plus words shared by the keyword path's best matches.

    Args:
        store: The record store.
        docs: How many of the keyword path's best candidates are read.
        terms: How many words are added at most.
        min_docs: In how many of those candidates an added word must be.
        max_term_share: As :class:`~dreammem.recall.keyword.KeywordPath` (frequent
            words are left out of the search when a rarer one remains).
    """

    name = "feedback"

    def __init__(
        self,
        store: RecordStore,
        *,
        docs: int = 5,
        terms: int = 5,
        min_docs: int = 2,
        max_term_share: float | None = None,
    ) -> None:
        self._store = store
        self.docs = docs
        self.terms = terms
        self.min_docs = min_docs
        self.max_term_share = max_term_share

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Memories matching the expanded query, best BM25 first (``[]`` when nothing is added)."""
        top = list(query.earlier.get("keyword", ()))[: self.docs]
        if not top:
            return []
        records = self._store.get_by_rowids(query.user_id, [c.rowid for c in top])
        texts = [records[c.rowid].content for c in top if c.rowid in records]
        own = query_terms(query.text)
        added = expansion_terms(own, texts, terms=self.terms, min_docs=self.min_docs)
        if not added:
            return []
        found = self._store.keyword_search(
            query.user_id, [*own, *added], query.limit, max_term_share=self.max_term_share
        )
        return [Candidate(rowid, score) for rowid, score in found]
