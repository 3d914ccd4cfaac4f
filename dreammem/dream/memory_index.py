"""The memory index: long-term memory mapped by task type, counterpart and knowledge type.

The second-level dream rebuilds it (table ``memory_index``, migration 4). Facets:

* ``knowledge``: ``layer/kind``, e.g. ``semantic/preference``, ``procedural/task_trace``;
* ``counterpart``: people, organisations and contacts the memory mentions (normalised);
* ``task_type``: ``metadata["task_type"]`` of the record, else the ``task_type`` (or
  ``goal``) of its session's task state.

:class:`MemoryIndexPath` is a recall path (name ``index``) that routes a query through
it: counterparts named in the query, knowledge-type words ("prefer", "must", "上次",
"怎么"...) and task-type words select memories. Add ``"index"`` to
``RecallConfig.paths`` to use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.text.entities import extract_entities, normalize_entity
from dreammem.text.tokenize import query_terms
from dreammem.types import MemoryRecord

__all__ = ["MemoryIndexPath", "build_rows", "read_rows", "replace_rows", "task_types"]

IndexRow = tuple[str, str, str]
"""``(facet, key, record_id)``."""

_COUNTERPART_KINDS = frozenset({"name", "email", "phone"})
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


def task_types(store: SQLiteRecordStore, user_id: str) -> dict[str, str]:
    """Task type by session id, from the sessions' task states."""
    rows = store.fetchall(
        "SELECT session_id, COALESCE(json_extract(state, '$.task_type'), json_extract(state, '$.goal')) "
        "FROM task_state WHERE user_id = ?",
        (user_id,),
    )
    return {str(r[0]): " ".join(str(r[1]).casefold().split()) for r in rows if r[1]}


def build_rows(records: Iterable[MemoryRecord], sessions: Mapping[str, str]) -> list[IndexRow]:
    """Index rows for active records."""
    rows: dict[IndexRow, None] = {}
    for record in records:
        if not record.is_active:
            continue
        rows[("knowledge", f"{record.layer.value}/{record.kind.value}", record.id)] = None
        for entity in extract_entities(record.content):
            if entity.kind in _COUNTERPART_KINDS:
                rows[("counterpart", entity.key, record.id)] = None
        task = record.metadata.get("task_type")
        task_key = str(task).casefold() if task else sessions.get(record.session_id or "")
        if task_key:
            rows[("task_type", " ".join(task_key.split()), record.id)] = None
    return list(rows)


def read_rows(store: SQLiteRecordStore, user_id: str) -> list[IndexRow]:
    """The user's current index rows."""
    rows = store.fetchall("SELECT facet, key, record_id FROM memory_index WHERE user_id = ?", (user_id,))
    return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]


def replace_rows(store: SQLiteRecordStore, user_id: str, rows: Sequence[IndexRow]) -> None:
    """Replace the user's index (call inside a transaction)."""
    store.execute("DELETE FROM memory_index WHERE user_id = ?", (user_id,))
    store.executemany(
        "INSERT OR IGNORE INTO memory_index (user_id, facet, key, record_id) VALUES (?, ?, ?, ?)",
        [(user_id, f, k, r) for f, k, r in rows],
    )


class MemoryIndexPath:
    """Recall through the memory index: route a query to memories by facet."""

    name = "index"

    def __init__(self, store: SQLiteRecordStore) -> None:
        self._store = store

    def _wanted(self, text: str) -> list[tuple[str, str]]:
        wanted = [("counterpart", e.key) for e in extract_entities(text) if e.kind in _COUNTERPART_KINDS]
        for pattern, keys in _KNOWLEDGE_WORDS:
            if pattern.search(text):
                wanted.extend(("knowledge", k) for k in keys)
        return wanted

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Active memories whose index entries match the query, most matched facets first."""
        wanted = self._wanted(query.text)
        terms = {normalize_entity(t) for t in query_terms(query.text)}
        tasks = self._store.fetchall(
            "SELECT DISTINCT key FROM memory_index WHERE user_id = ? AND facet = 'task_type'",
            (query.user_id,),
        )
        wanted.extend(("task_type", str(r[0])) for r in tasks if terms & set(str(r[0]).split()))
        if not wanted:
            return []
        clauses = " OR ".join("(m.facet = ? AND m.key = ?)" for _ in wanted)
        params: list[str | int] = [query.user_id]
        for facet, key in wanted:
            params.extend((facet, key))
        params.append(query.limit)
        rows = self._store.fetchall(
            "SELECT r.rowid, COUNT(*) AS hits FROM memory_index m JOIN records r ON r.id = m.record_id "
            f"WHERE m.user_id = ? AND r.status = 'active' AND ({clauses}) "
            "GROUP BY r.rowid ORDER BY hits DESC, r.importance DESC, r.event_time DESC LIMIT ?",
            params,
        )
        return [Candidate(int(r[0]), float(r[1])) for r in rows]
