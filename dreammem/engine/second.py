"""The opt-in second vector index: a second embedding model's FAISS index, kept like the first.

``EmbeddingConfig.second_model`` (e.g. ``"e5"``) gives every active memory a second
embedding, stored in SQLite's ``second_vectors`` table (migration 11) and searched
through its own FAISS index (``<store>.second-<model>.faiss`` beside the first) by
the ``second_vector`` recall path. It is kept by one mechanism whatever wrote: after
each unit of work (and before each search) :meth:`SecondVectors.catch_up` reads the
vector change log past the index's position, embeds the changed active memories that
lack a second embedding (new ones, and edited ones: a content edit drops the old
embedding in SQL), and applies the changes (deleted, purged, archived, undone)
through :class:`~dreammem.stores.vector_sync.VectorSync`. An erased record's second
embedding goes with its row (``ON DELETE CASCADE``); the file is rewritten after an
erasure. Embedded SQLite backend only.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path

from dreammem.config import EmbeddingConfig, VectorIndexConfig
from dreammem.embed.base import Embedder
from dreammem.embed.models import resolve_embedder
from dreammem.stores import vector_log
from dreammem.stores.faiss_index import AnnSettings, FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.vectors import VectorTable
from dreammem.stores.vector_sync import VectorSync

__all__ = ["SecondVectors", "second_file"]

_TABLE: VectorTable = "second_vectors"
_BATCH = 256


def second_file(first: Path | None, model: str) -> Path | None:
    """The second index's FAISS file beside the first one's (``None`` in memory)."""
    if first is None:
        return None
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
    return first.with_name(f"{first.stem}.second-{safe}{first.suffix}")


class SecondVectors:
    """A second embedding model's vectors of one store: stored in SQLite, searched in FAISS.

    Args:
        store: The record store.
        first_file: The first vector index's FAISS file (``None``: in memory only).
        model: The second model's config name (``"e5"``, ``"minilm"``, a name or path).
        embedding: Batch size and runtime for the model.
        ann: The approximate-search settings (as the first index's).
        embedder: An embedder to use instead of resolving ``model``.
    """

    def __init__(
        self,
        store: SQLiteRecordStore,
        first_file: Path | None,
        model: str,
        *,
        embedding: EmbeddingConfig,
        ann: VectorIndexConfig,
        embedder: Embedder | None = None,
    ) -> None:
        self._store = store
        self._first_file = first_file
        self.model = model
        self._embedding = embedding
        self._ann = AnnSettings(ann.ann_threshold, ann.nprobe, ann.lists_per_sqrt, ann.probe_share)
        self._embedder = embedder
        self._lock = threading.RLock()
        self._sync: VectorSync | None = None

    @property
    def embedder(self) -> Embedder:
        """The second model (loaded on first use)."""
        with self._lock:
            if self._embedder is None:
                settings = self._embedding
                self._embedder = resolve_embedder(
                    self.model, batch_size=settings.batch_size, runtime=settings.runtime
                )
            return self._embedder

    @property
    def index(self) -> FaissVectorIndex:
        """The second FAISS index, opened (and brought up to date) on first use."""
        return self._open().index

    def _open(self) -> VectorSync:
        with self._lock:
            if self._sync is None:
                embedder = self.embedder
                self._store.keep_second_model(embedder.name)  # the option changed: not this index's
                self._embed_missing(None)
                index = FaissVectorIndex(
                    embedder.dim, second_file(self._first_file, embedder.name), ann=self._ann
                )
                sync = VectorSync(self._store, index, embedder.name, table=_TABLE)
                sync.load()
                self._sync = sync
            return self._sync

    def catch_up(self) -> int:
        """Embed what changed without a second embedding and apply every change to FAISS.

        Returns:
            How many memories were embedded now.
        """
        with self._lock:
            opened = self._sync is not None
            sync = self._open()
            if not opened:
                return 0
            after, upto = sync.index.sequence, vector_log.last_sequence(self._store)
            if after == upto:
                return 0
            if after is None or after < vector_log.pruned_to(self._store):
                embedded = self._embed_missing(None)
            else:
                embedded = self._embed_missing(vector_log.changed_rowids(self._store, after, upto))
            sync.refresh(own=True)
            return embedded

    def _embed_missing(self, rowids: Sequence[int] | None) -> int:
        """Embed the active memories (of these rows; ``None``: all) that lack a second embedding."""
        model = self.embedder.name
        rows = self._store.missing_second_vectors(model, rowids)
        for start in range(0, len(rows), _BATCH):
            batch = rows[start : start + _BATCH]
            vectors = self.embedder.embed_documents([text for _, text in batch])
            self._store.put_vectors([rowid for rowid, _ in batch], model, vectors, table=_TABLE)
        return len(rows)

    def search(
        self, user_id: str, text: str, limit: int, allowed: frozenset[int] | None = None
    ) -> list[tuple[int, float]]:
        """The user's nearest memories by the second model as ``(rowid, cosine)`` (among ``allowed``)."""
        self.catch_up()
        index = self.index
        vector = self.embedder.embed_query(text)
        if allowed is not None:
            return index.search_subset(user_id, vector, sorted(allowed), limit)
        return index.search(user_id, vector, limit)

    def count(self, user_id: str | None = None) -> int:
        """Memories (of the user) in the second index, once it is current."""
        self.catch_up()
        return self.index.count(user_id)

    def flush(self) -> None:
        """Write the second FAISS file if it changed (no-op before the index is open).

        Raises:
            BackendError: the file cannot be written (the database is unaffected).
        """
        with self._lock:
            if self._sync is not None:
                self._sync.flush()
