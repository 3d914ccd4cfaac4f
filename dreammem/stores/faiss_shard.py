"""One user's vectors in FAISS: exact (flat) while small, an IVF index past a threshold.

Why IVF and not HNSW: records are superseded, forgotten and re-embedded, so vectors
are removed all the time. ``IndexIVFFlat`` removes ids in place (``remove_ids``),
takes an ``IDSelector`` inside the search (``SearchParametersIVF``, used for the
temporal path's time windows) and stores full vectors, so probing every list is an
exact search. FAISS's HNSW cannot remove a vector: it would need tombstones and
periodic rebuilds. IVF's price is a training step (k-means over a sample of the
shard's own vectors, about a second at 100k) once the shard passes the threshold,
and again each time it has grown fourfold since, so the lists stay balanced.

Each retraining doubles the list count (``lists_per_sqrt`` per square root of the size),
so a fixed ``nprobe`` would probe a halving share of the shard: at 1M vectors (trained
at 320k, 1,131 lists) 32 lists are 2.8 % of it, and recall@10 against exact fell to
0.95-0.97 where at 100k (565 lists, 5.7 %) it was 0.99. A search therefore probes
``probe_share`` of the lists (``nprobe`` at least), so the share scanned, and with it
recall, stays put as the shard grows (docs/BENCHMARKS.md, session 11).

A shard holds one user's vectors only, so per-user isolation is exact by
construction: no filter to get wrong, and search cost follows the user's size, not
the store's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import faiss
import numpy as np
import numpy.typing as npt

from dreammem.stores.ties import best_first

__all__ = ["AnnSettings", "FaissShard"]

_TRAIN_SEED = 1234
_POINTS_PER_LIST = 64  # k-means sample: FAISS wants >= 39 points per centroid
_REGROW = 4  # retrain when the shard has grown this many times since training


@dataclass(frozen=True, slots=True)
class AnnSettings:
    """When and how a shard switches from exact to approximate search.

    Attributes:
        threshold: A user's vector count from which the shard is an IVF index
            (below it, search is exact). ``0`` never switches.
        nprobe: The fewest inverted lists probed per query.
        lists_per_sqrt: Inverted lists per square root of the vector count at training.
        probe_share: The share of a shard's inverted lists probed per query (when more
            than ``nprobe``), so that recall does not fall as retraining adds lists.
    """

    threshold: int = 20_000
    nprobe: int = 32
    lists_per_sqrt: float = 2.0
    probe_share: float = 0.06

    def nlist(self, count: int) -> int:
        """Inverted lists for a shard trained on ``count`` vectors."""
        return max(8, int(self.lists_per_sqrt * math.sqrt(count)))

    def probes(self, nlist: int) -> int:
        """Inverted lists a search probes in a shard of ``nlist`` lists."""
        return min(nlist, max(self.nprobe, math.ceil(self.probe_share * nlist)))


class FaissShard:
    """The vectors of one user, searchable exactly or through IVF."""

    def __init__(self, dim: int, index: faiss.Index | None = None, trained_at: int = 0) -> None:
        self.dim = dim
        self.index: faiss.IndexIDMap2 | faiss.IndexIVFFlat = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        if index is not None:
            # faiss.read_index/deserialize_index return the concrete class already; a
            # downcast_index proxy would not own the object and leave it to be freed.
            if not isinstance(index, faiss.IndexIDMap2 | faiss.IndexIVFFlat):
                raise ValueError(f"not a DreamMem FAISS shard: {type(index).__name__}")
            self.index = index
        self.trained_at = trained_at

    @property
    def approximate(self) -> bool:
        """True once the shard is an IVF index."""
        return isinstance(self.index, faiss.IndexIVFFlat)

    @property
    def nlist(self) -> int:
        """Inverted lists of an IVF shard (0 while exact)."""
        return int(self.index.nlist) if isinstance(self.index, faiss.IndexIVFFlat) else 0

    @property
    def ntotal(self) -> int:
        """How many vectors the shard holds."""
        return int(self.index.ntotal)

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32], ann: AnnSettings) -> None:
        """Add vectors under these ids (which must not be in the shard yet)."""
        self.index.add_with_ids(vectors, ids)
        if ann.threshold and self.ntotal >= ann.threshold and self.ntotal >= _REGROW * self.trained_at:
            self._train(ann)

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove these ids (absent ones are ignored)."""
        self.index.remove_ids(faiss.IDSelectorBatch(ids))

    def holds(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> list[bool]:
        """Per id: True when the shard holds it with exactly this vector.

        Exact shards look each id up (O(1)); an IVF shard answers False (its ids are
        not mapped to positions), so callers simply replace those rows.
        """
        index = self.index
        if not isinstance(index, faiss.IndexIDMap2):
            return [False] * len(ids)
        out: list[bool] = []
        for i, vector in zip(ids, vectors, strict=True):
            try:
                out.append(bool(np.array_equal(index.reconstruct(int(i)), vector)))
            except RuntimeError:  # not in the shard
                out.append(False)
        return out

    def ids(self) -> npt.NDArray[np.int64]:
        """Every id the shard holds."""
        return self._contents(with_vectors=False)[0]

    def vectors(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every ``(ids, vectors)`` the shard holds."""
        return self._contents(with_vectors=True)

    def _contents(self, *, with_vectors: bool) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        index = self.index
        no_vectors = np.zeros((0, self.dim), dtype=np.float32)
        if isinstance(index, faiss.IndexIDMap2):
            ids = faiss.vector_to_array(index.id_map).astype(np.int64)
            return ids, index.index.reconstruct_n(0, index.ntotal) if with_vectors else no_vectors
        invlists = index.invlists
        assert invlists is not None
        id_blocks: list[npt.NDArray[np.int64]] = []
        vec_blocks: list[npt.NDArray[np.float32]] = []
        for list_no in range(index.nlist):
            size = invlists.list_size(list_no)
            if not size:
                continue
            id_blocks.append(faiss.rev_swig_ptr(invlists.get_ids(list_no), size).astype(np.int64).copy())
            if with_vectors:
                codes = faiss.rev_swig_ptr(invlists.get_codes(list_no), size * self.dim * 4).copy()
                vec_blocks.append(codes.view(np.float32).reshape(size, self.dim))
        if not id_blocks:
            return np.zeros(0, dtype=np.int64), no_vectors
        return np.concatenate(id_blocks), np.concatenate(vec_blocks) if vec_blocks else no_vectors

    def _train(self, ann: AnnSettings) -> None:
        """Re-index the shard's vectors into an IVF trained on (a sample of) them."""
        ids, data = self.vectors()
        nlist = ann.nlist(len(ids))
        rng = np.random.default_rng(_TRAIN_SEED)
        sample_size = min(len(ids), nlist * _POINTS_PER_LIST)
        sample = data[rng.choice(len(ids), sample_size, replace=False)] if sample_size < len(ids) else data
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = _TRAIN_SEED
        index.train(np.ascontiguousarray(sample))
        index.add_with_ids(np.ascontiguousarray(data), ids)
        self.index = index
        self.trained_at = len(ids)

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        ann: AnnSettings,
        allowed: Sequence[int] | npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """The k nearest (of ``allowed`` ids only, when given; then always exact).

        Equal scores go lower row id first (:mod:`dreammem.stores.ties`), also across
        the cut: while the k-th score ties with the next one, more are fetched.
        """
        k = min(k, self.ntotal)
        if k <= 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        params = self._params(ann, allowed)
        fetch = min(k + 1, self.ntotal)
        while True:
            scores, ids = self.index.search(q, fetch, params=params)
            hits = _hits(ids[0], scores[0])
            if self._settled(hits, fetch, k):
                return best_first(hits)[:k]
            fetch = min(2 * fetch, self.ntotal)

    def search_many(
        self, queries: npt.NDArray[np.float32], k: int, ann: AnnSettings
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries``, in one index search.

        A row whose ``k``-th score ties with the next one found is searched again alone
        (the tie rule fetches more for it).
        """
        k = min(k, self.ntotal)
        if k <= 0:
            return [[] for _ in queries]
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        fetch = min(k + 1, self.ntotal)
        scores, ids = self.index.search(q, fetch, params=self._params(ann, None))
        out = []
        for row in range(len(q)):
            hits = _hits(ids[row], scores[row])
            out.append(best_first(hits)[:k] if self._settled(hits, fetch, k) else self.search(q[row], k, ann))
        return out

    def _params(
        self, ann: AnnSettings, allowed: Sequence[int] | npt.NDArray[np.int64] | None
    ) -> faiss.SearchParameters | None:
        """The search parameters: the ids a search may return, and the IVF lists it probes."""
        selector = None if allowed is None else faiss.IDSelectorBatch(np.asarray(allowed, dtype=np.int64))
        if isinstance(self.index, faiss.IndexIVFFlat):
            # A filtered search probes every list: exact over the allowed ids.
            nlist = self.index.nlist
            nprobe = nlist if selector is not None else ann.probes(nlist)
            return faiss.SearchParametersIVF(sel=selector, nprobe=nprobe)  # type: ignore[call-arg]
        return None if selector is None else faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]

    def _settled(self, hits: Sequence[tuple[int, float]], fetch: int, k: int) -> bool:
        """Whether ``fetch`` were enough: fewer came, all were asked, or the ``k``-th beats the last."""
        return len(hits) < fetch or fetch >= self.ntotal or hits[-1][1] < hits[k - 1][1]


def _hits(ids: npt.NDArray[np.int64], scores: npt.NDArray[np.float32]) -> list[tuple[int, float]]:
    """One query's ``(row id, score)`` pairs from a FAISS result row (padding ``-1`` ids left out)."""
    return [(int(i), float(s)) for i, s in zip(ids, scores, strict=True) if i >= 0]
