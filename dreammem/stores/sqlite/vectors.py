"""The ``vectors`` table: one embedding per record and model (FAISS is rebuilt from it)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from dreammem.stores.sqlite.codec import chunks
from dreammem.stores.sqlite.connection import SQLiteConnection
from dreammem.types import Status

__all__ = ["VECTOR_TABLES", "VectorRows", "VectorTable", "checked"]

VectorTable = Literal["vectors", "second_vectors"]
"""The tables of stored embeddings: the store's model, and the opt-in second model's."""

VECTOR_TABLES: tuple[VectorTable, ...] = ("vectors", "second_vectors")


def checked(table: VectorTable) -> VectorTable:
    """The table name, checked before it goes into SQL.

    Raises:
        ValueError: not one of :data:`VECTOR_TABLES`.
    """
    if table not in VECTOR_TABLES:
        raise ValueError(f"unknown vector table {table!r}")
    return table


class VectorRows(SQLiteConnection):
    """Stored embeddings of the SQLite store."""

    def put_vectors(
        self,
        rowids: Sequence[int],
        model: str,
        vectors: npt.NDArray[np.float32],
        *,
        table: VectorTable = "vectors",
    ) -> None:
        """Store embeddings (the FAISS index can be rebuilt from them)."""
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as conn:
            conn.executemany(
                f"INSERT OR REPLACE INTO {checked(table)} (rowid, model, vec) VALUES (?, ?, ?)",
                [(rid, model, data[i].tobytes()) for i, rid in enumerate(rowids)],
            )

    def clear_vectors(self) -> None:
        """Drop every stored embedding and the model they were made with (before a model switch)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM vectors")
            conn.execute("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim')")

    def iter_active_vectors(
        self, model: str, dim: int, batch: int = 10_000, *, table: VectorTable = "vectors"
    ) -> Iterator[tuple[str, list[int], npt.NDArray[np.float32]]]:
        """Stored embeddings of active records, as ``(user_id, rowids, matrix)`` batches."""
        cursor = self.execute(
            f"SELECT r.user_id, v.rowid, v.vec FROM {checked(table)} v JOIN records r ON r.rowid = v.rowid "
            "WHERE r.status = 'active' AND v.model = ? ORDER BY r.user_id, v.rowid",
            (model,),
        )
        while True:
            with self._lock:
                rows = cursor.fetchmany(batch)
            if not rows:
                return
            by_user: dict[str, tuple[list[int], list[bytes]]] = {}
            for user_id, rowid, blob in rows:
                ids, blobs = by_user.setdefault(user_id, ([], []))
                ids.append(int(rowid))
                blobs.append(blob)
            for user_id, (ids, blobs) in by_user.items():
                matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dim)
                yield user_id, ids, matrix

    def vectors_of(self, user_id: str, model: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of these records of this user, by record id."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for chunk in chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                # "+r.user_id": the id index finds the rows; a user index would read all of theirs.
                "SELECT r.id, v.vec FROM vectors v JOIN records r ON r.rowid = v.rowid "
                f"WHERE +r.user_id = ? AND v.model = ? AND r.id IN ({marks})",
                (user_id, model, *chunk),
            )
            found.update((str(r[0]), np.frombuffer(r[1], dtype=np.float32)) for r in rows)
        return found

    def recent_vectors(self, user_id: str, model: str, limit: int) -> npt.NDArray[np.float32]:
        """Embeddings of this user's ``limit`` most recent records (any status), in one query.

        One index range per status (``records_user_status_time``), merged: ordering all of
        the user's records by time would read and sort every one of them on each recall.
        """
        per_status = [x for s in Status for x in (model, user_id, s.value, int(limit))]
        rows = self.fetchall(_RECENT, (*per_status, int(limit)))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        blob = b"".join(r[0] for r in rows)
        return np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)

    def rows_missing_vectors(self, model: str) -> list[tuple[int, str, str]]:
        """Active records with no embedding from this model: ``(rowid, user_id, id)``."""
        rows = self.fetchall(
            "SELECT r.rowid, r.user_id, r.id FROM records r LEFT JOIN vectors v "
            "ON v.rowid = r.rowid AND v.model = ? WHERE v.rowid IS NULL AND r.status = 'active'",
            (model,),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def missing_second_vectors(
        self, model: str, rowids: Sequence[int] | None = None
    ) -> list[tuple[int, str]]:
        """Active records (among ``rowids``; ``None``: all) with no second embedding from this model.

        Returns:
            ``(rowid, content)`` pairs.
        """
        if rowids is None:
            return [(int(r[0]), str(r[1])) for r in self.fetchall(_MISSING_SECOND, (model,))]
        found: list[tuple[int, str]] = []
        for chunk in chunks(list(rowids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(f"{_MISSING_SECOND} AND r.rowid IN ({marks})", (model, *chunk))
            found.extend((int(r[0]), str(r[1])) for r in rows)
        return found

    def keep_second_model(self, model: str) -> int:
        """Drop the second embeddings of any other model (the option changed); returns how many."""
        with self.transaction() as conn:
            return int(conn.execute("DELETE FROM second_vectors WHERE model != ?", (model,)).rowcount)

    def count_vectors(self, model: str, user_id: str | None = None) -> int:
        """How many active records (of one user) have an embedding from this model."""
        scope, params = ("", [model]) if user_id is None else (" AND r.user_id = ?", [model, user_id])
        return self._scalar(
            "SELECT COUNT(*) FROM vectors v JOIN records r ON r.rowid = v.rowid "
            f"WHERE r.status = 'active' AND v.model = ?{scope}",
            params,
        )


_MISSING_SECOND = (
    "SELECT r.rowid, r.content FROM records r LEFT JOIN second_vectors s "
    "ON s.rowid = r.rowid AND s.model = ? WHERE s.rowid IS NULL AND r.status = 'active'"
)
_RECENT_ONE = (
    "SELECT * FROM (SELECT r.event_time AS t, v.vec AS vec FROM records r "
    "JOIN vectors v ON v.rowid = r.rowid AND v.model = ? WHERE r.user_id = ? AND r.status = ? "
    "ORDER BY r.event_time DESC LIMIT ?)"
)
_RECENT = f"SELECT vec FROM ({' UNION ALL '.join(_RECENT_ONE for _ in Status)}) ORDER BY t DESC LIMIT ?"
"""The most recent vectors of one user: the newest ``limit`` of each status, then of all."""
