"""The SQL side of keeping FAISS current: the vector change log (migration 8).

Triggers append one ``vector_changes`` row per change of a record's place in the
vector index (embedded, re-embedded, status changed, removed), in the writer's own
transaction. A reader asks for the row ids changed past a sequence number and reads
their current state; it never needs to know who wrote or how.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.vectors import VectorTable, checked

__all__ = [
    "VectorState",
    "active_counts",
    "changed_rowids",
    "current_vectors",
    "data_version",
    "last_sequence",
    "prune",
    "pruned_to",
]

_PRUNED_KEY = "vector_changes_pruned_to"
_CHUNK = 500

VectorState = tuple[dict[str, tuple[list[int], npt.NDArray[np.float32]]], list[int]]
"""``({user_id: (rowids, matrix)}, rowids that left the index)``."""


def data_version(store: SQLiteRecordStore) -> int:
    """SQLite's counter of commits by *other* connections (cheap: no table is read)."""
    row = store.fetchone("PRAGMA data_version")
    return 0 if row is None else int(row[0])


def last_sequence(store: SQLiteRecordStore) -> int:
    """The newest change's sequence number (0 when nothing changed yet)."""
    row = store.fetchone("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'")
    return 0 if row is None else int(row[0])


def pruned_to(store: SQLiteRecordStore) -> int:
    """Changes up to this sequence number are gone from the log."""
    return int(store.get_meta(_PRUNED_KEY) or 0)


def changed_rowids(store: SQLiteRecordStore, after: int, upto: int) -> list[int]:
    """Row ids changed in ``(after, upto]``, each once."""
    rows = store.fetchall(
        "SELECT DISTINCT record_rowid FROM vector_changes WHERE seq > ? AND seq <= ?", (after, upto)
    )
    return [int(r[0]) for r in rows]


def current_vectors(
    store: SQLiteRecordStore,
    rowids: Sequence[int],
    model: str,
    dim: int,
    *,
    table: VectorTable = "vectors",
) -> VectorState:
    """Where each row id belongs now: its user's vectors (in ``table``) if active, else gone."""
    found: dict[str, tuple[list[int], list[bytes]]] = {}
    seen: set[int] = set()
    for start in range(0, len(rowids), _CHUNK):
        chunk = list(rowids[start : start + _CHUNK])
        marks = ", ".join("?" * len(chunk))
        for user_id, rowid, blob in store.fetchall(
            f"SELECT r.user_id, v.rowid, v.vec FROM {checked(table)} v JOIN records r ON r.rowid = v.rowid "
            f"WHERE v.rowid IN ({marks}) AND v.model = ? AND r.status = 'active'",
            (*chunk, model),
        ):
            ids, blobs = found.setdefault(str(user_id), ([], []))
            ids.append(int(rowid))
            blobs.append(blob)
            seen.add(int(rowid))
    active = {
        user: (ids, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dim))
        for user, (ids, blobs) in found.items()
    }
    return active, [i for i in rowids if i not in seen]


def active_counts(store: SQLiteRecordStore, model: str, *, table: VectorTable = "vectors") -> dict[str, int]:
    """How many active records of each user have an embedding from this model (in ``table``)."""
    rows = store.fetchall(
        f"SELECT r.user_id, COUNT(*) FROM {checked(table)} v JOIN records r ON r.rowid = v.rowid "
        "WHERE r.status = 'active' AND v.model = ? GROUP BY r.user_id",
        (model,),
    )
    return {str(r[0]): int(r[1]) for r in rows}


def prune(store: SQLiteRecordStore, keep: int) -> int:
    """Drop all but the newest ``keep`` changes; returns how many went.

    A process whose index is older than what is left rebuilds from SQLite instead.
    """
    with store.transaction():
        cut = last_sequence(store) - keep
        if cut <= pruned_to(store):
            return 0
        gone = store.execute("DELETE FROM vector_changes WHERE seq <= ?", (cut,)).rowcount
        store.set_meta(_PRUNED_KEY, str(cut))
    return int(gone)
