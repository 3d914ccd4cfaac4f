"""Keyed memories: records addressed by a path and a key inside one user's scope.

Key-value stores built on DreamMem (the LangGraph ``BaseStore`` adapter, for one)
address a memory by a *path* (a tuple of labels, e.g. ``("alice", "preferences")``)
and a *key*. Such a memory is an ordinary semantic record, so recall finds it like
any other, with:

* ``slot`` = ``"keyed:"`` + the JSON list ``[*path, key]``. A new value for the same
  path and key supersedes the old record through the write path's slot rule: the
  old value stays in history (``DreamMemory.history``), marked superseded, and is
  never silently overwritten.
* ``system["keyed"]`` = ``{"path", "key", "value", "indexed", "created_at"}``: the
  structured value as given and when the key was first written. It is a library note
  (:data:`~dreammem.system_meta.KEYED_KEY`), apart from the caller's ``metadata``: a
  caller's ``metadata={"keyed": ...}`` makes no record a keyed entry.

Deleting a key soft-deletes its active record (status ``deleted``, kept for audit).
The second-level dream neither archives nor merges keyed records (:func:`is_keyed`):
a value stays until its key is written again or deleted.
Paths are listed across users only as labels (:func:`keyed_paths`); every read of
values is scoped to one user.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreammem.errors import ValidationError
from dreammem.system_meta import KEYED_KEY
from dreammem.types import MemoryRecord
from dreammem.write.keyed_slots import KEYED_SLOT_PREFIX, is_keyed

if TYPE_CHECKING:
    from dreammem.memory import DreamMemory

__all__ = [
    "KeyedEntry",
    "delete_keyed",
    "get_keyed",
    "is_keyed",
    "keyed_entry",
    "keyed_paths",
    "list_keyed",
    "put_keyed",
    "rank_keyed",
]


@dataclass(frozen=True, slots=True)
class KeyedEntry:
    """The keyed view of one record.

    Attributes:
        path: The labels the entry lives under.
        key: Its key inside the path.
        value: The structured value as it was put.
        indexed: False when the writer asked to keep it out of query ranking.
        created_at: When the key was first written (kept across updates).
        updated_at: When this value was written.
        record: The underlying memory record (``record.id`` is the trace id).
    """

    path: tuple[str, ...]
    key: str
    value: dict[str, Any]
    indexed: bool
    created_at: datetime
    updated_at: datetime
    record: MemoryRecord


def _labels(path: Sequence[str]) -> list[str]:
    labels = list(path)
    if not all(isinstance(label, str) and label for label in labels):
        raise ValidationError(f"path labels must be non-empty strings, got {tuple(path)!r}")
    return labels


def _slot(path: Sequence[str], key: str) -> str:
    if not isinstance(key, str) or not key:
        raise ValidationError("key must be a non-empty str")
    return KEYED_SLOT_PREFIX + json.dumps([*_labels(path), key], ensure_ascii=True)


def _path_prefix(prefix: Sequence[str]) -> str:
    """The slot prefix shared by every entry under ``prefix`` (a JSON list left open)."""
    labels = _labels(prefix)
    opened = json.dumps(labels, ensure_ascii=True)[:-1]
    return KEYED_SLOT_PREFIX + (opened + "," if labels else opened)


def keyed_entry(record: MemoryRecord) -> KeyedEntry:
    """Read the keyed view of a record written by :func:`put_keyed`."""
    meta = record.system.get(KEYED_KEY)
    if not isinstance(meta, Mapping):
        raise ValidationError(f"record {record.id} is not a keyed memory")
    # None on a key's first version: it was created with its record.
    first = meta.get("created_at")
    return KeyedEntry(
        path=tuple(meta["path"]),
        key=str(meta["key"]),
        value=dict(meta["value"]),
        indexed=bool(meta.get("indexed", True)),
        created_at=datetime.fromisoformat(first) if first else record.created_at,
        updated_at=record.created_at,
        record=record,
    )


def get_keyed(memory: DreamMemory, *, user_id: str, path: Sequence[str], key: str) -> KeyedEntry | None:
    """The current value of a key, or None when it was never put or was deleted."""
    found = memory.slot_records(user_id=user_id, slot=_slot(path, key), limit=1)
    return keyed_entry(found[0]) if found else None


def put_keyed(
    memory: DreamMemory,
    *,
    user_id: str,
    path: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    text: str,
    indexed: bool = True,
) -> KeyedEntry:
    """Write a value under a key; an older value of the key is superseded, not lost.

    Args:
        memory: The memory to write to.
        user_id: The scope.
        path: The labels the entry lives under.
        key: Its key.
        value: A JSON-serialisable mapping, stored as given.
        text: What recall matches the entry by (e.g. the value's text fields).
        indexed: False keeps the entry out of :func:`rank_keyed` scoring.

    Raises:
        ValidationError: empty text, a bad path or key, or a value that is not JSON.
    """
    if not isinstance(value, Mapping):
        raise ValidationError(f"value must be a mapping, got {type(value).__name__}")
    slot = _slot(path, key)
    previous = get_keyed(memory, user_id=user_id, path=path, key=key)
    created = previous.created_at if previous is not None else None
    meta = {"path": _labels(path), "key": key, "value": dict(value), "indexed": bool(indexed)}
    first = created.isoformat() if created else None
    record = memory.remember_keyed(text, user_id=user_id, slot=slot, entry={**meta, "created_at": first})
    return keyed_entry(record)


def delete_keyed(memory: DreamMemory, *, user_id: str, path: Sequence[str], key: str) -> bool:
    """Soft-delete the current value of a key; False when there was none."""
    entry = get_keyed(memory, user_id=user_id, path=path, key=key)
    if entry is None:
        return False
    memory.forget(entry.record.id, user_id=user_id)
    return True


def list_keyed(memory: DreamMemory, *, user_id: str, prefix: Sequence[str] = ()) -> list[KeyedEntry]:
    """Current entries of a user under a path prefix.

    Ordered by path (in the order each path first got a live entry), then by when
    each key was first written: the order a dict-of-dicts store keeps.
    """
    records = memory.slot_records(user_id=user_id, slot_prefix=_path_prefix(prefix), oldest_first=True)
    entries = [keyed_entry(r) for r in records]
    first_seen: dict[tuple[str, ...], datetime] = {}
    for entry in entries:
        seen = first_seen.get(entry.path)
        first_seen[entry.path] = entry.created_at if seen is None else min(seen, entry.created_at)
    return sorted(entries, key=lambda e: (first_seen[e.path], e.path, e.created_at))


def keyed_paths(memory: DreamMemory) -> list[tuple[str, ...]]:
    """Every path holding at least one live entry, across users, sorted."""
    paths = {
        tuple(json.loads(slot[len(KEYED_SLOT_PREFIX) :])[:-1])
        for slot in memory.slot_names(KEYED_SLOT_PREFIX)
    }
    return sorted(paths)


def rank_keyed(
    memory: DreamMemory, query: str, *, user_id: str, entries: Sequence[KeyedEntry], depth: int = 10
) -> list[tuple[KeyedEntry, float | None]]:
    """Order entries by DreamMem recall for a query, best first.

    Entries recall ranks come first with their recall score; the rest (not indexed,
    or below recall's cut) follow in their given order with score None.

    Args:
        memory: The memory the entries live in.
        query: What to rank for.
        user_id: The scope.
        entries: The candidates (e.g. :func:`list_keyed` after filtering).
        depth: How many ranked entries the caller needs; recall runs for a few
            times that many hits (other memories of the user compete for them),
            because every recalled hit costs a record load and an access update.
    """
    if not entries:
        return []
    by_id = {e.record.id: e for e in entries}
    indexed = {i for i, e in by_id.items() if e.indexed}
    ranked: list[tuple[KeyedEntry, float | None]] = []
    if indexed:
        k = min(1000, max(10, 3 * depth))
        result = memory.recall(query, user_id=user_id, k=k)
        ranked = [(by_id[h.id], h.score) for h in result if h.id in indexed]
    seen = {e.record.id for e, _ in ranked}
    return ranked + [(e, None) for e in entries if e.record.id not in seen]
