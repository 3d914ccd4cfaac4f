"""Store contracts: the record store composed of small role ABCs, and the other stores' contracts.

* :class:`RecordStore` holds the records (the source of truth), their full-text index,
  their embeddings and the dream's data. It is the composition of the roles in
  :mod:`dreammem.stores.roles` (records, history, keyword, times, embeddings, dream
  queue, task state, dream log, erasure, lifecycle); a caller may type against one role.
* :class:`VectorIndex` holds one embedding per active record, scoped by user
  (defined in :mod:`dreammem.stores.vector_base`, re-exported here).
* :class:`GraphStore` holds entity and memory nodes and the edges between them.

Methods are sync and batch-first. The record store has no async methods: the
facade's ``a``-prefixed twins (:mod:`dreammem.twins`) run its sync calls in a worker
thread. ``VectorIndex.asearch`` and ``GraphStore``'s ``aneighbors``, ``aupsert`` and
``aremove`` are the only async twins of the stores (a thread each, unless overridden).
Capabilities are declared in ``capabilities`` as :class:`RecordCapability`,
:class:`GraphCapability` or :class:`VectorCapability` members, and never probed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dreammem.stores.capabilities import (
    REQUIRED_CAPABILITIES,
    GraphCapability,
    RecordCapability,
    VectorCapability,
)
from dreammem.stores.graph_base import (
    GraphEntity,
    GraphItem,
    GraphNeighbor,
    GraphRelation,
    GraphStats,
    GraphStore,
    records_to_graph_items,
)
from dreammem.stores.roles.dreams import DreamLog, DreamLogRow, DreamQueue, TaskStates
from dreammem.stores.roles.embeddings import StoredEmbeddings
from dreammem.stores.roles.erasure import Erasure
from dreammem.stores.roles.history import RecordHistory
from dreammem.stores.roles.keyword import KeywordIndex
from dreammem.stores.roles.lifecycle import StoreLifecycle
from dreammem.stores.roles.records import RecordLookups, RecordQuery, RecordReads, RecordWrites
from dreammem.stores.roles.times import TimeIndex, TimeSpan
from dreammem.stores.surroundings import Surroundings, read_one_by_one
from dreammem.stores.vector_base import VectorIndex

__all__ = [
    "REQUIRED_CAPABILITIES",
    "DreamLog",
    "DreamLogRow",
    "DreamQueue",
    "Erasure",
    "GraphCapability",
    "GraphEntity",
    "GraphItem",
    "GraphNeighbor",
    "GraphRelation",
    "GraphStats",
    "GraphStore",
    "KeywordIndex",
    "RecordCapability",
    "RecordHistory",
    "RecordLookups",
    "RecordQuery",
    "RecordReads",
    "RecordStore",
    "RecordWrites",
    "StoreLifecycle",
    "StoredEmbeddings",
    "Surroundings",
    "TaskStates",
    "TimeIndex",
    "TimeSpan",
    "VectorCapability",
    "VectorIndex",
    "records_to_graph_items",
]


class RecordStore(
    StoreLifecycle,
    RecordReads,
    RecordLookups,
    RecordWrites,
    RecordHistory,
    KeywordIndex,
    TimeIndex,
    StoredEmbeddings,
    DreamQueue,
    TaskStates,
    DreamLog,
    Erasure,
):
    """The source of truth: records, their keyword index and embeddings, the dream's tables.

    Every role of :mod:`dreammem.stores.roles` together. Every read and write is scoped
    by user id; writes made inside :meth:`transaction` commit or roll back together. Row
    ids (``int``) are the ids of the vector index. ``capabilities`` holds at least
    :data:`REQUIRED_CAPABILITIES`, and the optional ones the backend has.
    """

    capabilities: frozenset[RecordCapability] = frozenset()

    def recent_vectors(self, user_id: str, model: str, limit: int) -> npt.NDArray[np.float32]:
        """Embeddings of this user's ``limit`` most recent records (by event time, any status), one per row.

        The default reads the records, then their vectors; a backend may do it in one query.
        """
        recent = self.find(user_id, statuses=None, limit=limit)
        found = self.vectors_of(user_id, model, [r.id for r in recent])
        rows = [found[r.id] for r in recent if r.id in found]
        return np.stack(rows).astype(np.float32, copy=False) if rows else np.zeros((0, 0), dtype=np.float32)

    def surroundings(
        self, user_id: str, rowids: Sequence[int], seeds: Sequence[int], *, pinned: bool
    ) -> Surroundings:
        """What a recall reads about these candidates (records, ``seeds``' neighbours, ...), at once.

        See :mod:`dreammem.stores.surroundings`. The default makes the single reads; a store
        declaring ``RecordCapability.GATHERED_READS`` answers in one round trip.
        """
        return read_one_by_one(self, user_id, rowids, seeds, pinned=pinned)
