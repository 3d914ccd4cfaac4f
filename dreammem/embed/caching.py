"""An embedder wrapper that embeds each distinct text (or text key) once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from dreammem.embed.base import Embedder

__all__ = ["CachingEmbedder"]


class CachingEmbedder:
    """Wraps an embedder with a key -> vector cache; misses are embedded in one batch.

    Args:
        inner: The embedder doing the work.
        key: Maps a document to what is embedded and cached (default: the text itself).
        cache_queries: Serve queries from the same cache (embedded as documents);
            otherwise they go to ``inner.embed_query`` every time.
    """

    def __init__(
        self, inner: Embedder, *, key: Callable[[str], str] | None = None, cache_queries: bool = True
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._key = key
        self._cache_queries = cache_queries
        self._cache: dict[str, npt.NDArray[np.float32]] = {}

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of the texts' keys, embedding only keys not seen before."""
        keys = [self._key(t) for t in texts] if self._key is not None else list(texts)
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            self._cache.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A query vector: from the cache, or the inner embedder's query vector."""
        if not self._cache_queries:
            return self.inner.embed_query(text)
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector
