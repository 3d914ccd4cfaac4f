"""One unit of work: the records' transaction, then the derived indexes after the commit.

Inside the transaction a :class:`UnitOfWork` writes to the record store and notes
what changed; when the body finishes it bumps the vector generation and stages the
graph changes (both still inside the transaction). After the commit the engine calls
:meth:`UnitOfWork.apply`: FAISS gets the new active vectors and loses the inactive
ones, and the graph outbox is replayed. If that fails, FAISS is rebuilt from SQLite;
a crash before it happens is repaired on reopen (the FAISS file's change-log position
is behind the log, which is replayed from there).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from dreammem.dates.grounding import ground_records
from dreammem.embed.base import Embedder
from dreammem.engine.vectors import Vectors
from dreammem.stores.base import RecordStore
from dreammem.stores.graph_sync import GraphSync
from dreammem.text.tokenize import tokenize
from dreammem.types import MemoryRecord, Status

__all__ = ["UnitOfWork"]

log = logging.getLogger(__name__)


class UnitOfWork:
    """What one write changes; made by :meth:`dreammem.engine.Engine.unit`, never directly."""

    def __init__(
        self,
        store: RecordStore,
        vectors: Vectors,
        graph: GraphSync | None,
        embedder: Callable[[Sequence[str]], Embedder],
    ) -> None:
        self.store = store
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder
        self._inserted: list[tuple[MemoryRecord, int, npt.NDArray[np.float32]]] = []
        self._rewritten: dict[str, MemoryRecord] = {}
        self._final: dict[str, MemoryRecord] = {}
        self._before: dict[str, MemoryRecord | None] = {}  # as the unit found each record (None: new)
        self._deleted: list[MemoryRecord] = []
        self._rebuild = False

    def insert(
        self,
        records: Sequence[MemoryRecord],
        vectors: npt.NDArray[np.float32],
        *,
        terms: Sequence[str],
        context_terms: Sequence[str] | None = None,
        model: str,
    ) -> list[int]:
        """Insert records with their keyword text, embeddings and grounded dates; returns their row ids."""
        rowids = self.store.insert(records, terms, context_terms)
        self.store.put_vectors(rowids, model, vectors)
        ground_records(self.store, records, rowids)
        for n, (record, rowid) in enumerate(zip(records, rowids, strict=True)):
            self._inserted.append((record, rowid, vectors[n]))
            self._final[record.id] = record
            self._before[record.id] = None  # new: the graph learns it whatever follows
        return rowids

    def update(self, records: Sequence[MemoryRecord], *, read: Sequence[MemoryRecord] = ()) -> None:
        """Write changed records back (each must exist).

        A record whose content changed gets its keyword terms and its embedding
        rewritten too, so recall finds it by what it says now.

        Args:
            records: The records as they are to be stored.
            read: The stored versions of some of them, as the caller read them in this
                transaction and unchanged since: they are not read again.
        """
        stored = {r.id: r for r in read}
        unread = [r for r in records if r.id not in stored]
        for user_id in {r.user_id for r in unread}:
            ids = [r.id for r in unread if r.user_id == user_id]
            stored.update((r.id, r) for r in self.store.get(user_id, ids))
        self.store.update(records)
        for record in records:
            self._final[record.id] = record
            before = stored.get(record.id)
            self._before.setdefault(record.id, before)
            if before is not None and before.content != record.content:
                self._rewritten[record.id] = record

    def delete(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Delete records outright (undo only); returns the ids that existed."""
        gone = [dataclasses.replace(r, status=Status.DELETED) for r in self.store.get(user_id, list(ids))]
        self._deleted.extend(gone)
        self._rebuild = True
        return self.store.delete(user_id, ids)

    @property
    def rebuilds(self) -> bool:
        """True when FAISS is rebuilt after the commit (an erasure, an undo's deletes)."""
        return self._rebuild

    def rebuild_vectors(self) -> None:
        """Rebuild FAISS from SQLite after the commit instead of updating it."""
        self._rebuild = True

    def stage(self) -> None:
        """Inside the transaction, last: re-embed rewritten records, count the change, stage the graph."""
        if self._rewritten:
            self._reembed([self._final[i] for i in self._rewritten])
        self._vectors.bump_generation()
        if self._graph is not None:
            self._graph.stage([*self._deleted, *(r for r in self._final.values() if self._graph_changed(r))])

    def _graph_changed(self, record: MemoryRecord) -> bool:
        """Whether the graph's item of this record differs from before the unit (or it is new).

        The graph keeps a memory's entities (read off its text), its event time and
        whether it is active: a record whose only change is elsewhere (a mark, an
        importance) has the same item, and is not written to the graph again.
        """
        before = self._before.get(record.id)
        return before is None or _graph_key(before) != _graph_key(record)

    def _reembed(self, records: Sequence[MemoryRecord]) -> None:
        embedder = self._embedder([r.content for r in records])
        vectors = embedder.embed_documents([r.content for r in records])
        for n, record in enumerate(records):
            rowid = self.store.rowids(record.user_id, [record.id])[record.id]
            self.store.set_match_terms(rowid, " ".join(tokenize(record.content)))
            self.store.put_vectors([rowid], embedder.name, vectors[n : n + 1])
            self._inserted = [entry for entry in self._inserted if entry[0].id != record.id]
            self._inserted.append((record, rowid, vectors[n]))

    def apply(self) -> None:
        """After the commit: bring FAISS and the graph in step; rebuild FAISS if that fails."""
        try:
            if self._rebuild:
                self._vectors.rebuild()
            else:
                self._update_vectors()
        except Exception as exc:  # degradation boundary: the derived index is rebuilt from SQLite
            log.warning("updating the vector index after a write failed (%s); rebuilding it", exc)
            self._vectors.rebuild()
        if self._graph is not None:
            self._graph.flush()

    def _update_vectors(self) -> None:
        by_user: dict[str, tuple[list[int], list[npt.NDArray[np.float32]]]] = {}
        for record, rowid, vector in self._inserted:
            if self._final[record.id].is_active:
                rowids, rows = by_user.setdefault(record.user_id, ([], []))
                rowids.append(rowid)
                rows.append(vector)
        for user_id, (rowids, rows) in by_user.items():
            self._vectors.add(user_id, rowids, np.stack(rows))
        self._vectors.drop_inactive(list(self._final.values()))


def _graph_key(record: MemoryRecord) -> tuple[str, datetime, bool]:
    """What a record's graph item is made of (:func:`dreammem.stores.graph_base.records_to_graph_items`)."""
    return (record.content, record.event_time, record.is_active)
