"""FAISS vector index, scoped by user.

One ``IndexIDMap2`` over an inner-product index holds every active record's unit
vector under its SQLite row id (so inner product is cosine). Searches are always
restricted to one user's ids with an ``IDSelectorBatch``; the user -> ids map is kept
in memory and rebuilt from SQLite on open, so the index file never holds payloads.
The file is written with ``faiss.write_index`` (no pickle) on flush/close; a stale or
missing file is rebuilt from the embeddings stored in SQLite.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from dreammem.stores.base import VectorIndex

__all__ = ["FaissVectorIndex"]

log = logging.getLogger(__name__)


class FaissVectorIndex(VectorIndex):
    """Exact inner-product search over unit vectors, filtered to one user.

    Args:
        dim: The embedding dimension.
        path: Where the index file lives; ``None`` keeps it in memory only.
    """

    capabilities = frozenset({"exact", "persistent"})

    def __init__(self, dim: int, path: str | Path | None = None) -> None:
        self._dim = dim
        self.path = Path(path) if path is not None else None
        self._lock = threading.RLock()
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._by_user: dict[str, set[int]] = {}
        self._owner: dict[int, str] = {}
        self._selectors: dict[str, tuple[faiss.IDSelectorBatch, npt.NDArray[np.int64]]] = {}
        self._dirty = False

    @property
    def dim(self) -> int:
        """The embedding dimension."""
        return self._dim

    def load_file(self) -> bool:
        """Load the index file if it exists and has this dimension; True when loaded."""
        if self.path is None or not self.path.exists():
            return False
        try:
            index = faiss.read_index(str(self.path))
        except RuntimeError as exc:
            log.warning("ignoring unreadable FAISS file %s: %s", self.path, exc)
            return False
        if index.d != self._dim:
            log.warning("ignoring FAISS file %s of dimension %d", self.path, index.d)
            return False
        with self._lock:
            self._index = faiss.IndexIDMap2(index) if not isinstance(index, faiss.IndexIDMap2) else index
        return True

    def set_owners(self, owners: dict[str, set[int]]) -> None:
        """Install the user -> row ids map (from SQLite, after :meth:`load_file`)."""
        with self._lock:
            self._by_user = {u: set(ids) for u, ids in owners.items()}
            self._owner = {i: u for u, ids in owners.items() for i in ids}
            self._selectors.clear()

    def add(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Add or replace vectors of this user's row ids."""
        if len(ids) == 0:
            return
        id_array = np.asarray(ids, dtype=np.int64)
        data = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self._dim)
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(id_array))
            self._index.add_with_ids(data, id_array)
            owned = self._by_user.setdefault(user_id, set())
            owned.update(int(i) for i in id_array)
            self._owner.update((int(i), user_id) for i in id_array)
            self._selectors.pop(user_id, None)
            self._dirty = True

    def remove(self, ids: Sequence[int]) -> None:
        """Remove vectors by row id."""
        if len(ids) == 0:
            return
        id_array = np.asarray(ids, dtype=np.int64)
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(id_array))
            for i in id_array:
                user = self._owner.pop(int(i), None)
                if user is not None:
                    self._by_user[user].discard(int(i))
                    self._selectors.pop(user, None)
            self._dirty = True

    def _selector(self, user_id: str) -> faiss.IDSelectorBatch | None:
        cached = self._selectors.get(user_id)
        if cached is not None:
            return cached[0]
        owned = self._by_user.get(user_id)
        if not owned:
            return None
        ids = np.fromiter(owned, dtype=np.int64, count=len(owned))
        selector = faiss.IDSelectorBatch(ids)
        self._selectors[user_id] = (selector, ids)  # keep ids alive with the selector
        return selector

    def search(self, user_id: str, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The k nearest of this user's vectors (cosine), best first."""
        with self._lock:
            owned = self._by_user.get(user_id)
            if not owned:
                return []
            # One user owning every vector needs no filter (the common single-user store).
            selector = None if len(owned) == self._index.ntotal else self._selector(user_id)
            return self._search(query, min(k, len(owned)), selector)

    def search_subset(
        self, user_id: str, query: npt.NDArray[np.float32], ids: Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        """The k nearest of the given row ids that belong to this user, best first."""
        with self._lock:
            owned = self._by_user.get(user_id, set())
            allowed = np.fromiter((i for i in ids if i in owned), dtype=np.int64)
            if allowed.size == 0:
                return []
            return self._search(query, min(k, int(allowed.size)), faiss.IDSelectorBatch(allowed))

    def _search(
        self, query: npt.NDArray[np.float32], k: int, selector: faiss.IDSelector | None
    ) -> list[tuple[int, float]]:
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self._dim)
        if selector is None:
            scores, ids = self._index.search(q, k)
        else:
            params = faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]
            scores, ids = self._index.search(q, k, params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def count(self, user_id: str | None = None) -> int:
        """How many vectors (of one user, or in all)."""
        with self._lock:
            if user_id is None:
                return int(self._index.ntotal)
            return len(self._by_user.get(user_id, ()))

    def reset(self) -> None:
        """Drop every vector."""
        with self._lock:
            self._index.reset()
            self._by_user.clear()
            self._owner.clear()
            self._selectors.clear()
            self._dirty = True

    def flush(self) -> None:
        """Write the index file if anything changed."""
        if self.path is None:
            return
        with self._lock:
            if not self._dirty:
                return
            tmp = self.path.with_suffix(self.path.suffix + ".tmp")
            faiss.write_index(self._index, str(tmp))
            tmp.replace(self.path)
            self._dirty = False
