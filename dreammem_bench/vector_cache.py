"""A benchmark-only embedder wrapper that keeps every vector in a file across runs.

LongMemEval haystacks hold ~100k distinct long texts: encoding them is almost all of
a run's time. Every method of a run (the baselines and DreamMem) shares one such
wrapper, so each text is encoded once per run, and once ever with a cache file.

The file is a flat array of fixed-size records, ``(key, vector)``: the key is the
hex SHA-1 of the model name and the text (40 bytes), the vector ``dim`` float32 values.
New vectors are appended; the file is read through a memory map, so a run holds only
the index of keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dreammem.embed.base import Embedder

__all__ = ["DiskCachedEmbedder"]


class DiskCachedEmbedder:
    """Wraps an embedder with a persistent text -> vector cache (misses embedded in one batch).

    Queries are embedded as documents (true of the MiniLM models the benchmark uses).

    Args:
        inner: The embedder doing the work.
        path: The cache file (created if missing); ``None`` keeps the cache in memory.
    """

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.misses = 0
        self._path = path
        self._record = np.dtype([("key", "S40"), ("vector", "<f4", (self.dim,))])
        self._stored: np.ndarray | None = None
        self._rows: dict[bytes, int] = {}
        self._new: dict[bytes, npt.NDArray[np.float32]] = {}
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.stat().st_size:
                self._stored = np.memmap(path, dtype=self._record, mode="r")
                self._rows = {bytes(key): row for row, key in enumerate(self._stored["key"])}

    def _key(self, text: str) -> bytes:
        digest = hashlib.sha1(f"{self.name}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()
        return digest.encode("ascii")

    def _vector(self, key: bytes) -> npt.NDArray[np.float32] | None:
        if (found := self._new.get(key)) is not None:
            return found
        row = self._rows.get(key)
        if row is None or self._stored is None:
            return None
        return np.asarray(self._stored["vector"][row], dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of the texts, encoding only texts never seen with this model."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if self._vector(k) is None}
        if missing:
            vectors = np.asarray(self.inner.embed_documents(list(missing.values())), dtype=np.float32)
            rows = np.zeros(len(missing), dtype=self._record)
            rows["key"] = list(missing)
            rows["vector"] = vectors
            self._new.update(zip(missing, vectors, strict=True))
            if self._path is not None:
                with self._path.open("ab") as handle:
                    rows.tofile(handle)
            self.misses += len(missing)
        found = [self._vector(k) for k in keys]
        return np.stack([v for v in found if v is not None]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A query vector (from the cache when the text was seen)."""
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector

    def close(self) -> None:
        """Let go of the file (its vectors stay on disk)."""
        self._stored = None
        self._rows.clear()
        self._new.clear()
