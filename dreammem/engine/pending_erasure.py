"""A purge's compaction, recorded durably so that a crash cannot leave the purged bytes behind.

A purge commits the deletion of its rows together with a mark in the store's
metadata (:data:`PENDING_KEY`) and the purged record ids (:data:`ERASED_KEY`, ids
only, the last :data:`KEPT_IDS`). The mark is cleared only after the FAISS files
were rewritten and SQLite compacted its file. A process killed in between (or a
compaction that had to wait for another process's reader) leaves the mark, and the
next open of the store, or the next purge, finishes the work with :func:`finish`:
it deletes the FAISS files (derived data, rebuilt from SQLite when next needed),
compacts, and then clears the mark.

The kept ids let a purge of a memory that is already gone be run again: it finishes
what is pending instead of answering "no such memory".
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from dreammem.errors import DreamMemError
from dreammem.stores.base import RecordStore

__all__ = ["ERASED_KEY", "KEPT_IDS", "PENDING_KEY", "erased", "finish", "is_pending", "mark", "vector_files"]

log = logging.getLogger(__name__)

PENDING_KEY = "erasure_pending"
"""Metadata key: ``"1"`` while a committed purge still waits for its compaction."""
ERASED_KEY = "erased_ids"
"""Metadata key: the ids of the most recently purged records (a JSON list, no content)."""
KEPT_IDS = 10_000
"""How many purged ids are kept for reruns."""


def mark(store: RecordStore, ids: Sequence[str]) -> None:
    """Inside the purge's transaction: record that its compaction is pending, and its ids."""
    kept = [i for i in erased(store) if i not in set(ids)]
    store.set_meta(ERASED_KEY, json.dumps([*kept, *ids][-KEPT_IDS:]))
    store.set_meta(PENDING_KEY, "1")


def is_pending(store: RecordStore) -> bool:
    """True while a committed purge has not compacted yet."""
    return store.get_meta(PENDING_KEY) == "1"


def erased(store: RecordStore) -> list[str]:
    """The ids of the most recently purged records, oldest first."""
    raw = store.get_meta(ERASED_KEY)
    return [] if raw is None else [str(i) for i in json.loads(raw)]


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
        compacted = store.compact()
    except DreamMemError as exc:  # degradation boundary: the mark stays, the next open or purge retries
        log.warning("finishing a pending erasure failed, retried at the next open or purge: %s", exc)
        return False
    if not compacted:
        return False
    store.set_meta(PENDING_KEY, "0")  # only after the bytes are gone
    return True
