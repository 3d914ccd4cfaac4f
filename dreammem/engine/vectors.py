"""The vector index's lifecycle: bind the embedder, load or rebuild FAISS, keep its generation.

SQLite is the source of truth; FAISS is derived from the embeddings stored there.
Every change of the active vectors bumps ``vector_generation`` in the store's meta
table inside the write's transaction. The FAISS file carries a JSON sidecar with the
generation it reflects: on open, a file whose sidecar matches is trusted, anything
else (missing, cut short by a crash, written by an older instance) is rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dreammem.config import VectorIndexConfig
from dreammem.embed.base import Embedder
from dreammem.errors import ConfigError
from dreammem.stores.faiss_index import AnnSettings, FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import MemoryRecord

__all__ = ["VectorLifecycle"]


class VectorLifecycle:
    """Owns the FAISS index of one store: opened with the embedder, kept at the store's generation.

    Args:
        store: The record store holding the embeddings and the generation counter.
        path: The FAISS file (``None``: in memory only).
        ann: The approximate-search settings.
    """

    def __init__(self, store: SQLiteRecordStore, path: Path | None, ann: VectorIndexConfig) -> None:
        self._store = store
        self._path = path
        self._ann = AnnSettings(ann.ann_threshold, ann.nprobe, ann.lists_per_sqrt)
        self.embedder: Embedder | None = None
        self.index: FaissVectorIndex | None = None
        # The vector generation the in-memory index reflects; None once another instance
        # on the same file wrote since (the index then lacks its vectors).
        self._generation: str | None = None

    def bind(self, embedder: Embedder) -> None:
        """Check the embedder against the store and open the vector index.

        Raises:
            ConfigError: the store was built with another model or dimension.
        """
        stored = self._store.get_meta("embedding_model")
        stored_dim = self._store.get_meta("embedding_dim")
        if stored is not None and (stored != embedder.name or int(stored_dim or 0) != embedder.dim):
            raise ConfigError(
                f"this store was built with embedding model {stored!r} (dim {stored_dim}); "
                f"got {embedder.name!r} (dim {embedder.dim}). Open it with the same model, "
                "or re-embed it with `dreammem reindex --model NAME`."
            )
        if stored is None:
            with self._store.transaction():
                self._store.set_meta("embedding_model", embedder.name)
                self._store.set_meta("embedding_dim", str(embedder.dim))
        self.embedder = embedder
        self.index = FaissVectorIndex(embedder.dim, self._path, ann=self._ann)
        self._load()

    def unbind(self) -> None:
        """Forget the embedder and its index (before switching models)."""
        self.embedder = None
        self.index = None

    def _load(self) -> None:
        index, embedder = self._opened()
        generation = self._store.get_meta("vector_generation") or "0"
        trusted = self._sidecar_generation() == generation and index.load_file()
        if not trusted:
            self.rebuild()
            return
        self._generation = generation
        owners: dict[str, set[int]] = {}
        for user_id, rowids, _ in self._store.iter_active_vectors(embedder.name, embedder.dim):
            owners.setdefault(user_id, set()).update(rowids)
        index.set_owners(owners)

    def _opened(self) -> tuple[FaissVectorIndex, Embedder]:
        if self.index is None or self.embedder is None:
            raise RuntimeError("the vector index is not open (no embedder bound yet)")
        return self.index, self.embedder

    def rebuild(self) -> None:
        """Rebuild FAISS from the embeddings stored in SQLite, and write it out.

        A no-op while the index is not open: opening it later rebuilds it if stale.
        """
        if self.index is None or self.embedder is None:
            return
        index, embedder = self.index, self.embedder
        generation = self._store.get_meta("vector_generation") or "0"
        index.reset()
        for user_id, rowids, matrix in self._store.iter_active_vectors(embedder.name, embedder.dim):
            index.add(user_id, rowids, matrix)
        self._generation = generation
        self.flush()

    def bump_generation(self) -> None:
        """Count a change of the active vectors (call inside the write's transaction)."""
        current = self._store.get_meta("vector_generation") or "0"
        value = str(int(current) + 1)
        self._store.set_meta("vector_generation", value)
        if self.index is not None:
            # Another instance on this file wrote since our index was built: it lacks those vectors.
            self._generation = value if self._generation == current else None

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

    def _sidecar(self) -> Path | None:
        return None if self._path is None else self._path.with_suffix(".json")

    def _sidecar_generation(self) -> str | None:
        """The vector generation the FAISS file was written at (None: missing or unreadable)."""
        sidecar = self._sidecar()
        try:
            data = json.loads(sidecar.read_text()) if sidecar is not None else None
        except (OSError, ValueError):  # derived data, e.g. cut short by a crash: rebuild it
            return None
        return str(data.get("generation")) if isinstance(data, dict) else None

    def flush(self) -> None:
        """Write the index and its sidecar (no-op in memory or before the index is open)."""
        sidecar = self._sidecar()
        if self.index is None or sidecar is None:
            return
        self.index.flush()
        tmp = sidecar.with_suffix(".json.tmp")
        # A stale index is written too, but marked so that the next open rebuilds it.
        tmp.write_text(json.dumps({"generation": self._generation or "stale"}))
        tmp.replace(sidecar)  # never a half-written sidecar
