"""The memory-index recall path (name ``index``): route a query to memories by facet.

The second-level dream builds the index (:mod:`dreammem.dream.memory_index`); this
path reads it: counterparts named in the query, knowledge-type words ("prefer",
"must", "上次", "怎么"...) and task-type words select memories. Add ``"index"`` to
``RecallConfig.paths`` to use it.
"""

from __future__ import annotations

import re

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.base import RecordStore
from dreammem.text.entities import extract_entities, normalize_entity
from dreammem.text.tokenize import query_terms

__all__ = ["COUNTERPART_KINDS", "MemoryIndexPath"]

COUNTERPART_KINDS = frozenset({"name", "email", "phone"})
_KNOWLEDGE_WORDS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(r"\b(?:prefer\w*|like|likes|favou?rite|want)\b|偏好|喜欢|习惯", re.IGNORECASE),
        ("semantic/preference", "semantic/pattern"),
    ),
    (
        re.compile(
            r"\b(?:must|limit|budget|deadline|rule|allowed|constraint\w*)\b|不超过|限制|预算|截止|必须|只能",
            re.IGNORECASE,
        ),
        ("semantic/constraint",),
    ),
    (
        re.compile(r"\b(?:how (?:to|do|did)|steps?|lesson\w*|procedure)\b|怎么|步骤|教训", re.IGNORECASE),
        ("procedural/task_trace",),
    ),
    (
        re.compile(r"\b(?:last time|previously|before|earlier|happened)\b|上次|之前|以前", re.IGNORECASE),
        ("episodic/summary", "episodic/turn", "episodic/event"),
    ),
)


class MemoryIndexPath:
    """Recall through the memory index: route a query to memories by facet."""

    name = "index"

    def __init__(self, store: RecordStore) -> None:
        self._store = store

    def _wanted(self, text: str) -> list[tuple[str, str]]:
        wanted = [("counterpart", e.key) for e in extract_entities(text) if e.kind in COUNTERPART_KINDS]
        for pattern, keys in _KNOWLEDGE_WORDS:
            if pattern.search(text):
                wanted.extend(("knowledge", k) for k in keys)
        return wanted

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Active memories whose index entries match the query, most matched facets first."""
        wanted = self._wanted(query.text)
        terms = {normalize_entity(t) for t in query_terms(query.text)}
        tasks = self._store.index_keys(query.user_id, "task_type")
        wanted.extend(("task_type", key) for key in tasks if terms & set(key.split()))
        rows = self._store.index_search(query.user_id, wanted, query.limit)
        return [Candidate(rowid, float(hits)) for rowid, hits in rows]
