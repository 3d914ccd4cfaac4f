"""The keyword path: BM25 over the SQLite full-text index, Chinese-aware.

Query and memories are tokenised by the same function (:mod:`dreammem.text.tokenize`),
so Chinese words cut by jieba match on both sides; ids, amounts and names match
exactly because they are tokens too.
"""

from __future__ import annotations

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.base import RecordStore
from dreammem.text.tokenize import query_terms

__all__ = ["KeywordPath"]


class KeywordPath:
    """FTS5 ``bm25()`` ranking of the user's active memories.

    Args:
        store: The record store.
        max_term_share: Leave out terms found in more than this share of the indexed
            memories when a rarer one remains (``None`` keeps every term).
    """

    name = "keyword"
    """Reads only the query's words, user and limit: runs before the query is embedded."""

    def __init__(self, store: RecordStore, *, max_term_share: float | None = None) -> None:
        self._store = store
        self.max_term_share = max_term_share

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Memories sharing words with the query, best BM25 first."""
        terms = query_terms(query.text)
        return [
            Candidate(rowid, score)
            for rowid, score in self._store.keyword_search(
                query.user_id, terms, query.limit, max_term_share=self.max_term_share
            )
        ]
