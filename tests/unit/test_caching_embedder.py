"""CachingEmbedder: each distinct text (or key) reaches the inner embedder once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dreammem.embed import HashingEmbedder
from dreammem.embed.caching import CachingEmbedder


class _Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.batches.append(list(texts))
        return super().embed_documents(texts)


def test_each_distinct_text_is_embedded_once_and_vectors_match() -> None:
    inner = _Counting()
    cached = CachingEmbedder(inner)
    first = cached.embed_documents(["a cat", "a dog", "a cat"])
    again = cached.embed_documents(["a dog", "a bird"])
    assert inner.batches == [["a cat", "a dog"], ["a bird"]]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(cached.embed_query("a cat"), first[0])
    assert inner.batches[-1] == ["a bird"]  # the query came from the cache
    assert cached.embed_documents([]).shape == (0, inner.dim)


def test_key_and_uncached_queries() -> None:
    inner = _Counting()
    cached = CachingEmbedder(inner, key=str.lower, cache_queries=False)
    vectors = cached.embed_documents(["Tea", "TEA"])
    assert inner.batches == [["tea"]]
    np.testing.assert_array_equal(vectors[0], vectors[1])
    np.testing.assert_array_equal(cached.embed_query("Tea"), HashingEmbedder().embed_query("Tea"))
