"""The keyword path: BM25 over the SQLite full-text index, Chinese-aware.

Query and memories are tokenised by the same function (:mod:`dreammem.text.tokenize`),
so Chinese words cut by jieba match on both sides; ids, amounts and names match
exactly because they are tokens too.
"""

from __future__ import annotations

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.text.tokenize import query_terms

__all__ = ["KeywordPath"]


class KeywordPath:
    """FTS5 ``bm25()`` ranking of the user's active memories."""

    name = "keyword"

    def __init__(self, store: SQLiteRecordStore) -> None:
        self._store = store

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Memories sharing words with the query, best BM25 first."""
        terms = query_terms(query.text)
        return [
            Candidate(rowid, score)
            for rowid, score in self._store.keyword_search(query.user_id, terms, query.limit)
        ]
