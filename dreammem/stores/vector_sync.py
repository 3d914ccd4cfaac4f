"""Keeps a FAISS index current with the embeddings in SQLite, across processes.

SQLite is the source of truth; FAISS is derived. Every process holds its own FAISS
index in memory, so a write by one process must reach the others' indexes:

* **the check** (every recall): ``PRAGMA data_version``, which changes exactly when
  another connection committed (microseconds; no table is read);
* **the refresh** (only when it changed): the row ids in the vector change log past
  the sequence this index reflects (triggers of migration 8 append them in every
  writer's transaction), read in their current state: an active row with an
  embedding of this model is added if the index lacks it, anything else removed.
  Cost follows the number of changes, not the size of the store
  (docs/BENCHMARKS.md, "cross-process refresh").

On open the index file is trusted only when it is whole, of this format and model
dimension, not newer than the log and not older than its pruned part; it is then
brought forward through the log and its per-user counts are checked against SQLite.
Anything else is rebuilt from SQLite, never used as it is.
"""

from __future__ import annotations

import logging
import threading

from dreammem.errors import BackendError
from dreammem.stores import vector_log
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.vectors import VectorTable

__all__ = ["VectorSync"]

log = logging.getLogger(__name__)

_KEEP_CHANGES = 200_000
"""Log entries kept when pruning on flush; an index older than that rebuilds."""


class VectorSync:
    """Loads, refreshes, rebuilds and writes one FAISS index from a SQLite store.

    Args:
        store: The record store holding the embeddings and the change log.
        index: The index to keep current.
        model: The embedding model whose vectors the index holds.
        keep_changes: Change-log entries kept when :meth:`flush` prunes.
        table: The table of stored embeddings the index is derived from.
    """

    def __init__(
        self,
        store: SQLiteRecordStore,
        index: FaissVectorIndex,
        model: str,
        *,
        keep_changes: int = _KEEP_CHANGES,
        table: VectorTable = "vectors",
    ) -> None:
        self._store = store
        self.table: VectorTable = table
        self.index = index
        self.model = model
        self.keep_changes = keep_changes
        self._lock = threading.RLock()
        self._seen_version: int | None = None

    def load(self) -> bool:
        """Open the index: the file if it can be trusted, else a rebuild.

        Returns:
            True when the file was used (brought forward through the change log).
        """
        with self._lock:
            if self.index.load_file() and self._usable(self.index.sequence):
                self._seen_version = None
                self.refresh()
                if self._matches_store():
                    return True
            self.rebuild()
            return False

    def _usable(self, sequence: int | None) -> bool:
        if sequence is None or sequence < 0:
            return False
        if sequence > vector_log.last_sequence(self._store):
            log.warning("FAISS file %s is ahead of its database: rebuilding", self.index.path)
            return False
        return sequence >= vector_log.pruned_to(self._store)

    def _matches_store(self) -> bool:
        held, stored = (
            self.index.counts(),
            vector_log.active_counts(self._store, self.model, table=self.table),
        )
        if held != stored:
            log.warning(
                "FAISS file %s holds %d vectors of %d users where SQLite has %d of %d: rebuilding",
                self.index.path,
                sum(held.values()),
                len(held),
                sum(stored.values()),
                len(stored),
            )
            return False
        return True

    def rebuild(self) -> None:
        """Rebuild the index from every active embedding in SQLite and write the file."""
        with self._lock:
            # Read the position first: a change committed while the vectors are read is
            # either in them already or applied again by the next refresh (idempotent).
            version = vector_log.data_version(self._store)
            sequence = vector_log.last_sequence(self._store)
            self.index.reset()
            for user_id, rowids, matrix in self._store.iter_active_vectors(
                self.model, self.index.dim, table=self.table
            ):
                self.index.add(user_id, rowids, matrix)
            self.index.sequence = sequence
            self._seen_version = version
            try:
                self.index.flush()
            except BackendError as exc:  # the index in memory is whole; close() tries again
                log.warning("could not write the rebuilt FAISS file: %s", exc)

    def refresh(self, *, own: bool = False) -> int:
        """Apply what other processes committed since the last call.

        With ``own``, this process's own commits too (every change past the index's
        sequence, whoever made it): for an index that writes do not update directly.

        Returns:
            How many changed row ids were looked at (0 when nobody else wrote).

        Raises:
            BackendError: SQLite could not be read (the index stays as it was).
        """
        with self._lock:
            version = vector_log.data_version(self._store)
            if version == self._seen_version and not own:
                return 0
            after = self.index.sequence
            upto = vector_log.last_sequence(self._store)
            if after is None or after < vector_log.pruned_to(self._store):
                self.rebuild()
                return upto
            changed = vector_log.changed_rowids(self._store, after, upto)
            active, gone = vector_log.current_vectors(
                self._store, changed, self.model, self.index.dim, table=self.table
            )
            self.index.remove(gone)
            for user_id, (rowids, matrix) in active.items():
                # Rows held with the same vector (this process's own writes) stay: replacing
                # them costs a pass over the shard. An edited, re-embedded row is replaced.
                held = self.index.holds(user_id, rowids, matrix)
                stale = [n for n, same in enumerate(held) if not same]
                if stale:
                    self.index.add(user_id, [rowids[n] for n in stale], matrix[stale])
            self.index.sequence = upto
            self._seen_version = version
            return len(changed)

    def _past_own_changes(self) -> None:
        """Move the index's sequence to the end of the log when only this process wrote since its refresh.

        This process's own writes reach its index as they commit, but only a refresh
        moved the sequence, so a writer that never recalled wrote a file the next
        process had to bring forward through every one of its changes, or rebuild once
        the log was pruned past it (a million-memory build: 36 s and 1.5 GB more to open).
        The end of the log is read before the check, so a commit after it is not claimed.
        """
        upto = vector_log.last_sequence(self._store)
        if (
            self.index.sequence is not None
            and self._seen_version is not None
            and vector_log.data_version(self._store) == self._seen_version
        ):
            self.index.sequence = max(self.index.sequence, upto)

    def flush(self) -> None:
        """Write the index file if it changed, and prune the change log.

        Raises:
            BackendError: the file cannot be written (the database is unaffected).
        """
        with self._lock:
            try:
                self._past_own_changes()
            except BackendError as exc:  # the file keeps its older position: the next open replays from it
                log.info("moving the FAISS file's change-log position skipped: %s", exc)
            self.index.flush()
            try:
                vector_log.prune(self._store, self.keep_changes)
            except BackendError as exc:  # housekeeping: another process prunes next time
                log.info("pruning the vector change log skipped: %s", exc)
