"""The memory index: long-term memory mapped by task type, counterpart and knowledge type.

The second-level dream rebuilds it (table ``memory_index``, migration 4). Facets:

* ``knowledge``: ``layer/kind``, e.g. ``semantic/preference``, ``procedural/task_trace``;
* ``counterpart``: people, organisations and contacts the memory mentions (normalised);
* ``task_type``: ``metadata["task_type"]`` of the record, else the ``task_type`` (or
  ``goal``) of its session's task state.

The recall path that reads it is :class:`dreammem.recall.memory_index.MemoryIndexPath`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dreammem.recall.memory_index import COUNTERPART_KINDS
from dreammem.stores.base import IndexRow, RecordStore
from dreammem.text.entities import extract_entities
from dreammem.types import MemoryRecord

__all__ = ["build_rows", "read_rows", "replace_rows", "task_types"]


def task_types(store: RecordStore, user_id: str) -> dict[str, str]:
    """Task type by session id, from the sessions' task states (``task_type``, else ``goal``)."""
    types: dict[str, str] = {}
    for session_id, state in store.task_states(user_id).items():
        value = state.get("task_type")
        if value is None:
            value = state.get("goal")
        if value:
            types[session_id] = " ".join(str(value).casefold().split())
    return types


def build_rows(records: Iterable[MemoryRecord], sessions: Mapping[str, str]) -> list[IndexRow]:
    """Index rows for active records."""
    rows: dict[IndexRow, None] = {}
    for record in records:
        if not record.is_active:
            continue
        rows[("knowledge", f"{record.layer.value}/{record.kind.value}", record.id)] = None
        for entity in extract_entities(record.content):
            if entity.kind in COUNTERPART_KINDS:
                rows[("counterpart", entity.key, record.id)] = None
        task = record.metadata.get("task_type")
        task_key = str(task).casefold() if task else sessions.get(record.session_id or "")
        if task_key:
            rows[("task_type", " ".join(task_key.split()), record.id)] = None
    return list(rows)


def read_rows(store: RecordStore, user_id: str) -> list[IndexRow]:
    """The user's current index rows."""
    return store.index_rows(user_id)


def replace_rows(store: RecordStore, user_id: str, rows: Sequence[IndexRow]) -> None:
    """Replace the user's index (call inside a transaction)."""
    store.replace_index_rows(user_id, rows)
