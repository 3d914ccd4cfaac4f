"""The FAISS vector index passes the vector index conformance suite (exact and approximate)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dreammem.stores.base import VectorIndex
from dreammem.stores.faiss_index import AnnSettings, FaissVectorIndex
from dreammem.testing import VectorIndexSuite
from dreammem.testing.vector_index_suite import unit_rows


class TestFaissVectorIndex(VectorIndexSuite):
    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[VectorIndex]:
        index = FaissVectorIndex(self.dim, tmp_path / "vectors.faiss")
        yield index
        index.close()


class TestFaissVectorIndexApproximate(VectorIndexSuite):
    """In memory, IVF from 8 vectors a user (every list probed, so results are exact)."""

    @pytest.fixture
    def vector_index(self) -> Iterator[VectorIndex]:
        yield FaissVectorIndex(self.dim, None, ann=AnnSettings(threshold=8, nprobe=64, lists_per_sqrt=1.0))

    def test_the_shard_is_approximate(self, vector_index: VectorIndex) -> None:
        assert isinstance(vector_index, FaissVectorIndex)
        vector_index.add("u", list(range(12)), unit_rows(12, self.dim, 9))
        assert vector_index.is_approximate("u")
