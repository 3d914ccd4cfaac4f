"""A benchmark-only embedder wrapper that keeps every vector in a SQLite file across runs.

LongMemEval haystacks hold ~100k distinct long texts: encoding them is almost all of
a run's time. Every method of a run (the baselines and DreamMem) shares one such
wrapper, so each text is encoded once per run, and once ever with a cache file.
Vectors are keyed by the model name and the SHA-1 of the text.
"""

from __future__ import annotations

import hashlib
import sqlite3
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
        path: The SQLite file (created if missing); ``None`` keeps the cache in memory.
    """

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.misses = 0
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        self._held: dict[bytes, npt.NDArray[np.float32]] = {}

    def _key(self, text: str) -> bytes:
        return hashlib.sha1(f"{self.name}\x00{text}".encode("utf-8", "surrogatepass")).digest()

    def _load(self, keys: Sequence[bytes]) -> None:
        wanted = [k for k in dict.fromkeys(keys) if k not in self._held]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk
            ):
                self._held[bytes(key)] = np.frombuffer(blob, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of the texts, encoding only texts never seen with this model."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        self._load(keys)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._held}
        if missing:
            vectors = self.inner.embed_documents(list(missing.values()))
            rows = [
                (k, np.ascontiguousarray(v, dtype=np.float32)) for k, v in zip(missing, vectors, strict=True)
            ]
            self._held.update(rows)
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)", [(k, v.tobytes()) for k, v in rows]
                )
            self.misses += len(rows)
        return np.stack([self._held[k] for k in keys]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A query vector (from the cache when the text was seen)."""
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector

    def forget_held(self) -> None:
        """Drop the in-memory copies (the file keeps them): bounds memory over a long run."""
        self._held.clear()

    def close(self) -> None:
        """Close the cache file."""
        self._db.close()
