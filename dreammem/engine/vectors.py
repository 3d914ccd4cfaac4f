"""The vector index's lifecycle: bind the embedder, load, refresh or rebuild FAISS.

SQLite is the source of truth; FAISS is derived from the embeddings stored there.
Loading, the cross-process refresh (a ``PRAGMA data_version`` check, then only the
rows in the vector change log) and rebuilding live in
:class:`~dreammem.stores.vector_sync.VectorSync`; this module binds it to the
embedder and applies this process's own writes after their commit. Every change of
the active vectors also bumps ``vector_generation`` in the store's meta table inside
the write's transaction (a counter; the change log is what other processes follow).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from dreammem.config import VectorIndexConfig
from dreammem.embed.base import Embedder
from dreammem.errors import ConfigError, DreamMemError
from dreammem.stores.base import RecordStore, VectorIndex
from dreammem.stores.faiss_index import AnnSettings, FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.vector_sync import VectorSync
from dreammem.types import MemoryRecord

__all__ = ["VectorLifecycle", "Vectors", "claim_model"]

log = logging.getLogger(__name__)


class Vectors(Protocol):
    """What the engine needs of a vector lifecycle (:class:`VectorLifecycle`, or the Neo4j backend's)."""

    @property
    def embedder(self) -> Embedder | None:
        """The bound embedder."""

    @property
    def index(self) -> VectorIndex | None:
        """The open vector index."""

    def bind(self, embedder: Embedder) -> None:
        """Check the embedder against the store and open the index."""

    def unbind(self) -> None:
        """Forget the embedder and its index."""

    def rebuild(self) -> None:
        """Rebuild the index from the stored embeddings."""

    def refresh(self) -> str | None:
        """Apply other processes' writes; the reason when that failed."""

    def bump_generation(self) -> None:
        """Count a change of the active vectors (inside the write's transaction)."""

    def add(self, user_id: str, rowids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors of one user's rows after the commit."""

    def drop_inactive(self, records: Sequence[MemoryRecord]) -> None:
        """Remove the records that left the active set."""

    def flush(self) -> None:
        """Persist the index."""


def claim_model(store: RecordStore, embedder: Embedder) -> None:
    """Check the embedder against the model the store was built with (a new store records it).

    Raises:
        ConfigError: the store was built with another model or dimension.
    """
    stored = store.get_meta("embedding_model")
    stored_dim = store.get_meta("embedding_dim")
    if stored is not None and (stored != embedder.name or int(stored_dim or 0) != embedder.dim):
        raise ConfigError(
            f"this store was built with embedding model {stored!r} (dim {stored_dim}); "
            f"got {embedder.name!r} (dim {embedder.dim}). Open it with the same model, "
            "or re-embed it with `dreammem reindex --model NAME`."
        )
    if stored is None:
        with store.transaction():
            store.set_meta("embedding_model", embedder.name)
            store.set_meta("embedding_dim", str(embedder.dim))


class VectorLifecycle:
    """Owns the FAISS index of one store: opened with the embedder, kept current with SQLite.

    Args:
        store: The record store holding the embeddings and the vector change log.
        path: The FAISS file (``None``: in memory only).
        ann: The approximate-search settings.
    """

    def __init__(self, store: SQLiteRecordStore, path: Path | None, ann: VectorIndexConfig) -> None:
        self._store = store
        self._path = path
        self._ann = AnnSettings(ann.ann_threshold, ann.nprobe, ann.lists_per_sqrt, ann.probe_share)
        self.embedder: Embedder | None = None
        self.index: FaissVectorIndex | None = None
        self._sync: VectorSync | None = None

    def bind(self, embedder: Embedder) -> None:
        """Check the embedder against the store and open the vector index.

        Raises:
            ConfigError: the store was built with another model or dimension.
        """
        claim_model(self._store, embedder)
        self.embedder = embedder
        self.index = FaissVectorIndex(embedder.dim, self._path, ann=self._ann)
        self._sync = VectorSync(self._store, self.index, embedder.name)
        self._sync.load()

    def unbind(self) -> None:
        """Forget the embedder and its index (before switching models)."""
        self.embedder = None
        self.index = None
        self._sync = None

    def rebuild(self) -> None:
        """Rebuild FAISS from the embeddings stored in SQLite, and write it out.

        A no-op while the index is not open: opening it later brings it up to date.
        """
        if self._sync is not None:
            self._sync.rebuild()

    def refresh(self) -> str | None:
        """Apply what other processes wrote; the reason when the index could not be brought up to date."""
        if self._sync is None:
            return None
        try:
            self._sync.refresh()
        except DreamMemError as exc:  # degradation boundary: recall runs on the index as it is
            log.warning("the vector index could not be refreshed: %s", exc)
            return f"stale: could not read other processes' writes ({type(exc).__name__}: {exc})"
        return None

    def bump_generation(self) -> None:
        """Count a change of the active vectors (call inside the write's transaction)."""
        current = self._store.get_meta("vector_generation") or "0"
        self._store.set_meta("vector_generation", str(int(current) + 1))

    def add(self, user_id: str, rowids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors of one user's rows (no-op while the index is not open)."""
        if self.index is not None and len(rowids):
            self.index.add(user_id, rowids, vectors)

    def drop_inactive(self, records: Sequence[MemoryRecord]) -> None:
        """Remove the records that left the active set from the index."""
        if self.index is None:
            return
        by_user: dict[str, list[str]] = {}
        for record in records:
            if not record.is_active:
                by_user.setdefault(record.user_id, []).append(record.id)
        for user_id, ids in by_user.items():
            self.index.remove(list(self._store.rowids(user_id, ids).values()))

    def flush(self) -> None:
        """Write the FAISS file if it changed (no-op in memory or before the index is open).

        Raises:
            BackendError: the file cannot be written (the database is unaffected).
        """
        if self._sync is not None:
            self._sync.flush()
