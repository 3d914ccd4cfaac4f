"""The embedder protocol and a deterministic hashing embedder for fast tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from dreammem.text.tokenize import tokenize

__all__ = ["Embedder", "HashingEmbedder", "embed_distinct", "normalize_rows"]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    ``name`` identifies the model; a store remembers the name and dimension it was
    built with and refuses to open with another (re-embed with ``dreammem reindex``).
    """

    name: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One row per text, each of unit length."""
        ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A single unit-length vector for a search query."""
        ...


def embed_distinct(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """``embedder.embed_documents(texts)``, each distinct text encoded once.

    A turn and the semantic record written from it carry the same text: a batch of
    preferences and facts would otherwise run the model twice on each of them.
    """
    first: dict[str, int] = {}
    for text in texts:
        first.setdefault(text, len(first))
    if len(first) == len(texts):
        return embedder.embed_documents(texts)
    vectors = embedder.embed_documents(list(first))
    return np.ascontiguousarray(vectors[[first[t] for t in texts]])


def normalize_rows(matrix: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Scale each row to unit length (zero rows stay zero)."""
    data = np.asarray(matrix, dtype=np.float32)
    if data.ndim == 1:
        data = data[None, :]
    norms = np.linalg.norm(data, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: npt.NDArray[np.float32] = np.ascontiguousarray(data / norms, dtype=np.float32)
    return out


class HashingEmbedder:
    """A bag-of-words embedding by feature hashing. Deterministic, instant, for tests.

    Texts that share words get similar vectors; it knows nothing of meaning, so it
    is never the default.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        vec = np.zeros(self.dim, dtype=np.float32)
        for token in tokenize(text):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vec[value % self.dim] += 1.0 if (value >> 63) & 1 else -1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Hash each text's tokens into a vector."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Same as a document."""
        return np.asarray(self.embed_documents([text])[0], dtype=np.float32)
