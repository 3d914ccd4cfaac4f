"""Store contracts: small ABCs that every backend implements.

* :class:`RecordStore` holds the records (the source of truth), their full-text index
  and the dream queue.
* :class:`VectorIndex` holds one embedding per active record, scoped by user
  (defined in :mod:`dreammem.stores.vector_base`, re-exported here).
* :class:`GraphStore` holds entity and memory nodes and the edges between them.

Methods are sync and batch-first; each has an ``a``-prefixed async twin that runs it
in a worker thread unless a backend overrides it. Capabilities are declared in
``capabilities``, never probed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from dreammem.stores.graph_base import (
    GraphEntity,
    GraphItem,
    GraphNeighbor,
    GraphRelation,
    GraphStats,
    GraphStore,
    records_to_graph_items,
)
from dreammem.stores.vector_base import VectorIndex
from dreammem.types import Kind, Layer, MemoryRecord, Status

__all__ = [
    "DreamLogRow",
    "GraphEntity",
    "GraphItem",
    "GraphNeighbor",
    "GraphRelation",
    "GraphStats",
    "GraphStore",
    "RecordStore",
    "TimeSpan",
    "VectorIndex",
    "records_to_graph_items",
]


TimeSpan = tuple[datetime | None, datetime | None]
"""A half-open window ``[start, end)`` of event times a record's own dates point at (``None``: open)."""


@dataclass(frozen=True, slots=True)
class DreamLogRow:
    """One dream in the dream log; ``report`` and ``undo`` are JSON text."""

    dream_id: str
    user_id: str
    level: int
    trigger: str
    started_at: str
    finished_at: str
    status: str
    report: str
    undo: str


class RecordStore(ABC):
    """The source of truth: records, their keyword index and embeddings, the dream's tables.

    Every read and write is scoped by user id; writes made inside :meth:`transaction`
    commit or roll back together. Row ids (``int``) are the ids of the vector index.
    """

    capabilities: frozenset[str] = frozenset()

    # -- plumbing
    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """One atomic unit of work; nested calls join the outer one."""

    @property
    @abstractmethod
    def schema_version(self) -> int:
        """The highest schema migration applied."""

    @abstractmethod
    def close(self) -> None:
        """Release the store (idempotent); later calls raise ``BackendError``."""

    @abstractmethod
    def get_meta(self, key: str) -> str | None:
        """A value of the store's key/value metadata."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""

    # -- records
    @abstractmethod
    def insert(
        self,
        records: Sequence[MemoryRecord],
        match_texts: Sequence[str],
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Insert records with their keyword terms (and context terms); returns their row ids."""

    @abstractmethod
    def update(self, records: Sequence[MemoryRecord]) -> None:
        """Write the mutable fields of existing records (``BackendError`` if one is missing)."""

    @abstractmethod
    def delete(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Delete records outright with their keyword rows (undo only); returns the ids that existed."""

    @abstractmethod
    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        """Records of this user with these ids, in the order asked (missing ids skipped).

        With ``for_update``, inside :meth:`transaction`, no other writer can change these
        records until the transaction ends: a read-modify-write reads what it changes this way.
        """

    @abstractmethod
    def ids_with_prefix(self, user_id: str, prefix: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` record ids of this user starting with ``prefix`` (any status)."""

    @abstractmethod
    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id."""

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The text of each active record of this user among these row ids (others left out).

        A recall path that reads only what the records say: a backend overrides this to
        skip decoding whole records.
        """
        return {i: r.content for i, r in self.get_by_rowids(user_id, rowids).items() if r.is_active}

    @abstractmethod
    def rowids(self, user_id: str, ids: Sequence[str]) -> dict[str, int]:
        """Row ids of this user's records by record id."""

    @abstractmethod
    def find(
        self,
        user_id: str,
        *,
        statuses: Sequence[Status] | None = (Status.ACTIVE,),
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        slot: str | None = None,
        slot_prefix: str | None = None,
        session_id: str | None = None,
        pinned: bool | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        newest_first: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        """Records of this user matching every given filter, ordered by event time.

        ``offset`` skips that many of them first (paging).
        """

    @abstractmethod
    def session_neighbours(
        self, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        """``{rowid: (previous, next)}``: the active turns around each active session turn of these rows."""

    @abstractmethod
    def twins(self, record: MemoryRecord) -> list[MemoryRecord]:
        """Records with the same text linked to this one by provenance (either way)."""

    def twins_many(self, records: Sequence[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
        """:meth:`twins` of each record (each in its own user's scope), by record id.

        A backend that can read them all at once overrides this (the write path asks
        for the twins of every record a write's decisions touch).
        """
        return {r.id: self.twins(r) for r in records}

    @abstractmethod
    def twins_of(self, user_id: str, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """For each of these records that has a twin (see :meth:`twins`), the twin's id."""

    @abstractmethod
    def derived_from(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user whose provenance names any of these ids."""

    @abstractmethod
    def superseded_by_any(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user that one of these records directly superseded."""

    @abstractmethod
    def filter_rowids(
        self,
        user_id: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        limit: int,
    ) -> set[int] | None:
        """Row ids of this user's active records with these column values (None: over ``limit``)."""

    @abstractmethod
    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Which of these record ids are taken, by any user (ids are unique in a store)."""

    @abstractmethod
    def history_chain(self, user_id: str, record_id: str) -> list[MemoryRecord]:
        """Every record of the same slot or supersede chain as this one, oldest first."""

    @abstractmethod
    def existing_message_keys(self, user_id: str, session_id: str | None, keys: Sequence[str]) -> set[str]:
        """Which of these adapter message keys (``metadata["message_key"]``) are stored."""

    @abstractmethod
    def touch(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Record that recall returned these records (access time and count)."""

    @abstractmethod
    def count(self, user_id: str | None = None, *, status: Status | None = None) -> int:
        """How many records (of one user, of one status)."""

    @abstractmethod
    def slots(self, prefix: str) -> list[str]:
        """Distinct slots of active records, across users, starting with ``prefix``."""

    @abstractmethod
    def users(self) -> list[str]:
        """Every user id with at least one record."""

    # -- erasure
    @abstractmethod
    def erase_records(self, user_id: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[list[str], int]:
        """Hard-delete these records, every row naming them, and their quotes in the dream log.

        Returns the ids that existed and how many dream-log entries were rewritten.
        """

    @abstractmethod
    def erase_user(self, user_id: str) -> int:
        """Hard-delete every row of this user the store owns; returns the dream-log entries deleted."""

    @abstractmethod
    def compact(self) -> bool:
        """Make the store drop the bytes of erased rows; False when it must be called again later."""

    # -- keyword index
    @abstractmethod
    def keyword_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        max_term_share: float | None = None,
    ) -> list[tuple[int, float]]:
        """BM25 over this user's active records: ``(rowid, score)``, best first."""

    @abstractmethod
    def window_rowids(
        self,
        user_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        newest_first: bool = True,
    ) -> list[int]:
        """Row ids of this user's active records with ``since <= event_time < until``.

        In time order, newest first unless asked otherwise; equal times by row id in the
        same direction (:mod:`dreammem.stores.ties`).
        """

    @abstractmethod
    def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
        """Replace one record's keyword terms and context terms."""

    @abstractmethod
    def set_match_terms(self, rowid: int, terms: str) -> None:
        """Replace one record's own keyword terms, keeping its context terms."""

    # -- embeddings
    @abstractmethod
    def put_vectors(self, rowids: Sequence[int], model: str, vectors: npt.NDArray[np.float32]) -> None:
        """Store embeddings of these rows for this model (replacing older ones)."""

    @abstractmethod
    def clear_vectors(self) -> None:
        """Drop every embedding and the model name and dimension they were made with."""

    @abstractmethod
    def iter_active_vectors(
        self, model: str, dim: int, batch: int = 10_000
    ) -> Iterator[tuple[str, list[int], npt.NDArray[np.float32]]]:
        """Embeddings of active records as ``(user_id, rowids, matrix)`` batches."""

    @abstractmethod
    def vectors_of(self, user_id: str, model: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of these records of this user, by record id."""

    def recent_vectors(self, user_id: str, model: str, limit: int) -> npt.NDArray[np.float32]:
        """Embeddings of this user's ``limit`` most recent records (by event time, any status), one per row.

        The default reads the records, then their vectors; a backend may do it in one query.
        """
        recent = self.find(user_id, statuses=None, limit=limit)
        found = self.vectors_of(user_id, model, [r.id for r in recent])
        rows = [found[r.id] for r in recent if r.id in found]
        return np.stack(rows).astype(np.float32, copy=False) if rows else np.zeros((0, 0), dtype=np.float32)

    @abstractmethod
    def rows_missing_vectors(self, model: str) -> list[tuple[int, str, str]]:
        """Active records with no embedding from this model: ``(rowid, user_id, id)``."""

    @abstractmethod
    def count_vectors(self, model: str, user_id: str | None = None) -> int:
        """How many active records (of one user) have an embedding from this model."""

    # -- dream queue
    @abstractmethod
    def enqueue(self, records: Sequence[MemoryRecord]) -> None:
        """Queue records for the user's next dream."""

    @abstractmethod
    def queued(self, user_id: str, limit: int | None = None) -> list[MemoryRecord]:
        """Queued records of this user, oldest first."""

    @abstractmethod
    def queue_size(self, user_id: str) -> int:
        """How many records wait for this user's next dream."""

    @abstractmethod
    def dequeue(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove records from the user's queue."""

    @abstractmethod
    def queue_entries(self, user_id: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """``(record_id, enqueued_at)`` of these queued records."""

    @abstractmethod
    def requeue(self, user_id: str, entries: Sequence[tuple[str, str]]) -> int:
        """Queue entries again (for records that still exist); returns how many."""

    @abstractmethod
    def oldest_queued_at(self, user_id: str) -> datetime | None:
        """When the user's oldest queue entry was made."""

    @abstractmethod
    def dream_users(self) -> list[str]:
        """Users with a queue entry or a logged dream."""

    # -- task state
    @abstractmethod
    def get_task_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The saved task state of a session ({} when none)."""

    @abstractmethod
    def set_task_state(self, user_id: str, session_id: str, state: dict[str, Any], at: datetime) -> None:
        """Replace the task state of a session."""

    @abstractmethod
    def task_states(self, user_id: str) -> dict[str, dict[str, Any]]:
        """Every saved task state of this user, by session id."""

    @abstractmethod
    def latest_task_state(self, user_id: str) -> dict[str, Any]:
        """The task state this user saved last ({} when none)."""

    # -- dream log and journal
    @abstractmethod
    def add_dream(self, row: DreamLogRow) -> None:
        """Log a dream (inside the dream's transaction)."""

    @abstractmethod
    def get_dream(self, dream_id: str) -> DreamLogRow | None:
        """One logged dream, or None."""

    @abstractmethod
    def dream_ids_with_prefix(self, prefix: str, limit: int = 5) -> list[tuple[str, str]]:
        """Up to ``limit`` ``(dream id, user id)`` pairs whose id starts with ``prefix``."""

    @abstractmethod
    def list_dreams(self, user_id: str, limit: int) -> list[DreamLogRow]:
        """The logged dreams of this user, newest first."""

    @abstractmethod
    def dreams_after(self, dream_id: str, user_id: str, status: str) -> list[str]:
        """Ids of this user's dreams of this status logged after ``dream_id``, oldest first."""

    @abstractmethod
    def set_dream_status(self, dream_id: str, status: str, at: datetime) -> None:
        """Mark a logged dream (undone, at this time)."""

    @abstractmethod
    def dream_times(self, user_id: str, level: int) -> tuple[datetime | None, datetime | None]:
        """When the user's first dream of this level started and the last one finished."""

    # -- grounded times (capability "grounded_times"; without it a backend keeps none)
    def grounded_times(self, user_id: str, rowids: Sequence[int]) -> dict[int, TimeSpan | None]:
        """Stored windows of these rows' relative dates (``None``: points nowhere else).

        Rows not grounded yet are left out. A changed text or time drops the row's window.
        """
        return {}

    def put_grounded_times(self, user_id: str, times: Mapping[int, TimeSpan | None]) -> None:
        """Store the windows of rows of this user (rows of other users are skipped)."""
        return None

    def pointing_times(
        self, user_id: str, *, since: datetime | None, until: datetime | None, limit: int
    ) -> tuple[dict[int, TimeSpan], list[int]]:
        """The ``limit`` oldest active rows of this user said in ``[since, until)``, by their windows.

        Returns the stored windows that point somewhere, and the rows not grounded yet (in
        time order); rows whose dates point nowhere else are left out. Without the
        capability every row is not grounded yet.
        """
        return {}, self.window_rowids(user_id, since=since, until=until, limit=limit, newest_first=False)
