"""A purge's compaction, recorded durably so that a crash cannot leave the purged bytes behind.

A purge commits the deletion of its rows together with a mark in the store's
metadata (:data:`PENDING_KEY`) and the purged records (:data:`ERASED_KEY`, digests
of user and id, no content, the last :data:`KEPT_IDS`). The mark is cleared only after the FAISS files
were rewritten and SQLite compacted its file. A process killed in between (or a
compaction that had to wait for another process's reader) leaves the mark, and the
next open of the store, or the next purge, finishes the work with :func:`finish`:
it deletes the FAISS files (derived data, rebuilt from SQLite when next needed),
compacts, and then clears the mark.

The kept ids let a purge of a memory that is already gone be run again: it finishes
what is pending instead of answering "no such memory".
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from dreammem.errors import DreamMemError
from dreammem.stores.base import RecordStore

__all__ = [
    "ERASED_KEY",
    "KEPT_IDS",
    "PENDING_KEY",
    "finish",
    "is_pending",
    "mark",
    "vector_files",
    "was_erased",
]

log = logging.getLogger(__name__)

PENDING_KEY = "erasure_pending"
"""Metadata key: ``"1"`` while a committed purge still waits for its compaction."""
ERASED_KEY = "erased_ids"
"""Metadata key: the most recently purged records, as digests of user and id (a JSON list)."""
KEPT_IDS = 10_000
"""How many purged ids are kept for reruns."""


def mark(store: RecordStore, user_id: str, ids: Sequence[str]) -> None:
    """Inside the purge's transaction: record that its compaction is pending, and its ids."""
    new = [_token(user_id, i) for i in ids]
    kept = [t for t in _tokens(store) if t not in set(new)]
    store.set_meta(ERASED_KEY, json.dumps([*kept, *new][-KEPT_IDS:]))
    store.set_meta(PENDING_KEY, "1")


def is_pending(store: RecordStore) -> bool:
    """True while a committed purge has not compacted yet."""
    return store.get_meta(PENDING_KEY) == "1"


def was_erased(store: RecordStore, user_id: str, memory_id: str) -> bool:
    """True when this user's record ``memory_id`` is among the most recently purged."""
    return _token(user_id, memory_id) in _tokens(store)


def _tokens(store: RecordStore) -> list[str]:
    raw = store.get_meta(ERASED_KEY)
    return [] if raw is None else [str(t) for t in json.loads(raw)]


def _token(user_id: str, memory_id: str) -> str:
    """A purged record as a digest of its user and id: scoped, and no user id stays on disk."""
    return hashlib.sha256(f"{user_id}\x1f{memory_id}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def vector_files(first: Path | None) -> list[Path]:
    """The FAISS files of a store (the first index, second-model ones, and their temp files)."""
    if first is None or not first.parent.is_dir():
        return []
    patterns = [first.name, f"{first.stem}.second-*{first.suffix}"]
    return sorted({p for pattern in patterns for p in _with_temps(first.parent, pattern)})


def _with_temps(folder: Path, pattern: str) -> Iterable[Path]:
    yield from folder.glob(pattern)
    yield from folder.glob(f".{pattern}.*.tmp")  # a write killed before its rename


def finish(store: RecordStore, files: Sequence[Path]) -> bool:
    """Finish a pending erasure: drop the FAISS files, compact, clear the mark.

    Returns:
        True when nothing is pending any more; False when the compaction must wait
        (another process still reads an older snapshot): the mark stays.
    """
    if not is_pending(store):
        return True
    for file in files:
        file.unlink(missing_ok=True)
    try:
        if not store.compact():
            return False
        store.set_meta(PENDING_KEY, "0")  # only after the bytes are gone
    except DreamMemError as exc:  # degradation boundary: the mark stays, the next open or purge retries
        log.warning("finishing a pending erasure failed, retried at the next open or purge: %s", exc)
        return False
    return True
