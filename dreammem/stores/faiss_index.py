"""FAISS vector index, one shard per user.

Each user's vectors live in their own :class:`~dreammem.stores.faiss_shard.FaissShard`
under their SQLite row ids: exact inner-product search (cosine on unit vectors) while
the user is small, an IVF index once the user passes
:attr:`~dreammem.stores.faiss_shard.AnnSettings.threshold` vectors. A search only ever
touches the asking user's shard, so isolation needs no filter and costs nothing.

The file (written on flush/close, never pickled) is an ``.npz`` read with
``allow_pickle=False``: the user ids, each shard serialised by
``faiss.serialize_index``, each shard's training size, and the position in SQLite's
vector change log the contents reflect (:attr:`FaissVectorIndex.sequence`). It is
written through a unique temp file, fsynced and renamed into place
(:func:`~dreammem.stores.files.write_atomic`), so processes closing at once never
collide and a crash never leaves a half file. A missing, damaged or older-format
file loads as nothing (the caller rebuilds it from SQLite).
"""

from __future__ import annotations

import logging
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from dreammem.stores.base import VectorCapability, VectorIndex
from dreammem.stores.faiss_shard import AnnSettings, FaissShard
from dreammem.stores.files import write_atomic

__all__ = ["AnnSettings", "FaissVectorIndex"]

log = logging.getLogger(__name__)

# 1: one IndexIDMap2 for all users; 2: no change-log sequence (both rebuilt from SQLite when found)
_FORMAT = 3


class FaissVectorIndex(VectorIndex):
    """Inner-product search over unit vectors, one shard per user.

    Args:
        dim: The embedding dimension.
        path: Where the index file lives; ``None`` keeps it in memory only.
        omp_threads: FAISS OpenMP threads (process-wide; ``None`` leaves FAISS's
            setting). Recall searches one query at a time, which gains nothing from
            OpenMP; on a shared CPU its spinning threads made a 3k-vector search take
            ~40 ms instead of ~0.1 ms (docs/BENCHMARKS.md, recall latency).
        ann: When a user's shard switches to approximate (IVF) search; the default
            switches at 20,000 vectors.
    """

    capabilities = frozenset(
        {VectorCapability.EXACT, VectorCapability.PERSISTENT, VectorCapability.APPROXIMATE}
    )

    def __init__(
        self,
        dim: int,
        path: str | Path | None = None,
        *,
        omp_threads: int | None = 1,
        ann: AnnSettings | None = None,
    ) -> None:
        if omp_threads is not None:
            faiss.omp_set_num_threads(omp_threads)
        self._dim = dim
        self.path = Path(path) if path is not None else None
        self.ann = ann if ann is not None else AnnSettings()
        self._lock = threading.RLock()
        self._shards: dict[str, FaissShard] = {}
        self._owner: dict[int, str] = {}
        self._dirty = False
        self.sequence: int | None = None
        """The vector change-log position the contents reflect (None: unknown)."""

    @property
    def dim(self) -> int:
        """The embedding dimension."""
        return self._dim

    def is_approximate(self, user_id: str) -> bool:
        """True when this user's searches go through IVF (approximate)."""
        with self._lock:
            shard = self._shards.get(user_id)
            return shard is not None and shard.approximate

    def probes(self, user_id: str) -> int:
        """Inverted lists a search of this user's shard probes (0: the search is exact)."""
        with self._lock:
            shard = self._shards.get(user_id)
            return 0 if shard is None or not shard.approximate else self.ann.probes(shard.nlist)

    def load_file(self) -> bool:
        """Load the index file if it exists, is whole, and has this format and dimension.

        Returns:
            True when loaded (with :attr:`sequence` set); False when the file is missing,
            damaged (empty, cut short, not ours) or of another format or dimension.
        """
        if self.path is None or not self.path.exists():
            return False
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if int(data["format"]) != _FORMAT or int(data["dim"]) != self._dim:
                    log.info("rebuilding FAISS file %s (other format or dimension)", self.path)
                    return False
                users = [str(u) for u in data["users"]]
                trained = [int(t) for t in data["trained"]]
                sequence = int(data["sequence"])
            with zipfile.ZipFile(self.path) as archive:
                shards = {
                    user: FaissShard(self._dim, _read_shard(archive, f"shard{n}.npy"), trained_at)
                    for n, (user, trained_at) in enumerate(zip(users, trained, strict=True))
                }
        except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.info("rebuilding unreadable FAISS file %s: %s", self.path, exc)
            return False
        except RuntimeError as exc:
            log.info("rebuilding FAISS file %s with an unreadable shard: %s", self.path, exc)
            return False
        owners = {int(i): user for user, shard in shards.items() for i in shard.ids()}
        if len(owners) != sum(shard.ntotal for shard in shards.values()):
            log.info("rebuilding FAISS file %s: a row id is in two shards", self.path)
            return False
        with self._lock:
            self._shards = shards
            self._owner = owners
            self.sequence = sequence
            self._dirty = False
        return True

    def holds(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> list[bool]:
        """Per row id: True when this user's shard holds it with exactly this vector."""
        with self._lock:
            shard = self._shards.get(user_id)
            if shard is None:
                return [False] * len(ids)
            known = [self._owner.get(i) == user_id for i in ids]
            if not any(known):
                return known
            return [k and same for k, same in zip(known, shard.holds(ids, vectors), strict=True)]

    def counts(self) -> dict[str, int]:
        """How many vectors each user with any has."""
        with self._lock:
            return {user: shard.ntotal for user, shard in self._shards.items() if shard.ntotal}

    def add(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Add or replace vectors of this user's row ids."""
        if len(ids) == 0:
            return
        id_array = np.asarray(ids, dtype=np.int64)
        data = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self._dim)
        with self._lock:
            self._remove_known(id_array)
            shard = self._shards.get(user_id)
            if shard is None:
                shard = self._shards[user_id] = FaissShard(self._dim)
            shard.add(id_array, data, self.ann)
            self._owner.update((int(i), user_id) for i in id_array)
            self._dirty = True

    def remove(self, ids: Sequence[int]) -> None:
        """Remove vectors by row id."""
        if len(ids) == 0:
            return
        with self._lock:
            if self._remove_known(np.asarray(ids, dtype=np.int64)):
                self._dirty = True

    def _remove_known(self, ids: npt.NDArray[np.int64]) -> bool:
        """Remove the ids the index holds from their owners' shards; True if any."""
        by_user: dict[str, list[int]] = {}
        for i in ids.tolist():
            user = self._owner.pop(i, None)
            if user is not None:
                by_user.setdefault(user, []).append(i)
        for user, owned in by_user.items():
            shard = self._shards.get(user)
            if shard is not None:
                shard.remove(np.asarray(owned, dtype=np.int64))
        return bool(by_user)

    def search(self, user_id: str, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The k nearest of this user's vectors (cosine), best first.

        Approximate (IVF, ``ann.probes(nlist)`` lists) once the user's shard is past
        the threshold; exact below it.
        """
        with self._lock:
            shard = self._shards.get(user_id)
            return [] if shard is None else shard.search(query, k, self.ann)

    def search_many(
        self, user_id: str, queries: npt.NDArray[np.float32], k: int
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries``, in one search of this user's shard."""
        with self._lock:
            shard = self._shards.get(user_id)
            return [[] for _ in queries] if shard is None else shard.search_many(queries, k, self.ann)

    def search_subset(
        self, user_id: str, query: npt.NDArray[np.float32], ids: Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        """The k nearest of the given row ids that belong to this user, best first (exact)."""
        with self._lock:
            shard = self._shards.get(user_id)
            allowed = [i for i in ids if self._owner.get(i) == user_id]
            if shard is None or not allowed:
                return []
            return shard.search(query, min(k, len(allowed)), self.ann, allowed=allowed)

    def vectors(self, user_id: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """A copy of this user's ``(row ids, vectors)`` (for exact ground truth in benchmarks)."""
        with self._lock:
            shard = self._shards.get(user_id)
            if shard is None:
                return np.zeros(0, dtype=np.int64), np.zeros((0, self._dim), dtype=np.float32)
            return shard.vectors()

    def count(self, user_id: str | None = None) -> int:
        """How many vectors (of one user, or in all)."""
        with self._lock:
            if user_id is None:
                return sum(s.ntotal for s in self._shards.values())
            shard = self._shards.get(user_id)
            return 0 if shard is None else shard.ntotal

    def reset(self) -> None:
        """Drop every vector."""
        with self._lock:
            self._shards.clear()
            self._owner.clear()
            self.sequence = None
            self._dirty = True

    def flush(self) -> None:
        """Write the index file if anything changed.

        Raises:
            BackendError: the file cannot be written (permission, full disk); the
                previous file stays as it was, the vectors in memory are kept.
        """
        if self.path is None:
            return
        with self._lock:
            if not self._dirty:
                return
            users = sorted(u for u, s in self._shards.items() if s.ntotal)
            arrays: dict[str, npt.NDArray[np.generic]] = {
                "format": np.array(_FORMAT),
                "dim": np.array(self._dim),
                "users": np.array(users, dtype=np.str_),
                "trained": np.array([self._shards[u].trained_at for u in users], dtype=np.int64),
                # -1: unknown; such a file is never trusted to be current.
                "sequence": np.array(-1 if self.sequence is None else self.sequence, dtype=np.int64),
            }
            for n, user in enumerate(users):
                arrays[f"shard{n}"] = faiss.serialize_index(self._shards[user].index)
            write_atomic(self.path, lambda handle: np.savez(handle, **arrays))  # type: ignore[arg-type]
            self._dirty = False


def _read_shard(archive: zipfile.ZipFile, member: str) -> faiss.Index:
    """One serialized shard, streamed from its ``.npy`` member of the file into FAISS.

    Reading the member as an array first and deserializing it held the index three
    times over while opening (4.6 GB for a million vectors of one user; the index
    itself is 1.5 GB); streaming holds it once.

    Raises:
        ValueError: the member is not a one-dimensional byte array.
    """
    with archive.open(member) as handle:
        version = np.lib.format.read_magic(handle)
        header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = header(handle)
        if len(shape) != 1 or dtype != np.uint8:
            raise ValueError(f"{member} is not a serialized index ({dtype}, shape {shape})")
        reader = faiss.PyCallbackIOReader(handle.read, 1 << 20)  # type: ignore[attr-defined]  # not in faiss's stubs
        return faiss.read_index(reader)
