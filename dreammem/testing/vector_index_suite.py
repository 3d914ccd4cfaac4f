"""The vector index conformance suite: every :class:`~dreammem.stores.base.VectorIndex` must pass it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest

from dreammem.stores.base import VectorIndex

__all__ = ["VectorIndexSuite", "unit_rows"]


def unit_rows(count: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    """``count`` random unit vectors (rows), reproducible by ``seed``."""
    rows = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    unit: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


class VectorIndexSuite:
    """Abstract conformance tests; override :meth:`vector_index` (an empty index of dimension 16)."""

    dim = 16

    @pytest.fixture
    def vector_index(self) -> Iterator[VectorIndex]:
        """The index under test (empty)."""
        raise NotImplementedError("override the vector_index fixture")

    @pytest.fixture
    def users(self) -> tuple[str, str]:
        """Two fresh user ids."""
        return (f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}")

    def test_dimension_is_declared(self, vector_index: VectorIndex) -> None:
        assert vector_index.dim == self.dim

    def test_a_vector_finds_itself_first(self, vector_index: VectorIndex, users: tuple[str, str]) -> None:
        alice, _ = users
        rows = unit_rows(20, self.dim, 1)
        vector_index.add(alice, list(range(100, 120)), rows)
        for n in (0, 7, 19):
            hits = vector_index.search(alice, rows[n], 3)
            assert hits[0][0] == 100 + n
            assert hits[0][1] == pytest.approx(1.0, abs=1e-4)
            assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)

    def test_search_stays_inside_the_user(self, vector_index: VectorIndex, users: tuple[str, str]) -> None:
        alice, bob = users
        rows = unit_rows(10, self.dim, 2)
        vector_index.add(alice, list(range(1, 6)), rows[:5])
        vector_index.add(bob, list(range(6, 11)), rows[5:])
        assert {i for i, _ in vector_index.search(alice, rows[7], 10)} == set(range(1, 6))
        assert {i for i, _ in vector_index.search(bob, rows[0], 10)} == set(range(6, 11))
        assert vector_index.count(alice) == 5 and vector_index.count(bob) == 5
        assert vector_index.count() == 10

    def test_adding_an_id_again_replaces_it(self, vector_index: VectorIndex, users: tuple[str, str]) -> None:
        alice, _ = users
        old, new = unit_rows(2, self.dim, 3)
        vector_index.add(alice, [5], old[None, :])
        vector_index.add(alice, [5], new[None, :])
        assert vector_index.count(alice) == 1
        assert vector_index.search(alice, new, 1)[0][1] == pytest.approx(1.0, abs=1e-4)

    def test_search_subset_ranks_only_the_given_ids(
        self, vector_index: VectorIndex, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        rows = unit_rows(12, self.dim, 4)
        vector_index.add(alice, list(range(12)), rows)
        hits = vector_index.search_subset(alice, rows[0], [3, 4, 5, 999], 5)
        assert {i for i, _ in hits} == {3, 4, 5}

    def test_equal_scores_go_lower_row_id_first(
        self, vector_index: VectorIndex, users: tuple[str, str]
    ) -> None:
        """Duplicate vectors tie: lower row id first, at every cut (:mod:`dreammem.stores.ties`)."""
        alice, _ = users
        twin, *others = unit_rows(5, self.dim, 7)
        vector_index.add(alice, [40, 12, 33], np.stack([twin] * 3))
        vector_index.add(alice, [1, 2, 3, 4], np.stack(others))
        vector_index.add(alice, [7, 25, 18], np.stack([twin] * 3))
        tied = [7, 12, 18, 25, 33, 40]
        for k in range(1, 7):
            assert [i for i, _ in vector_index.search(alice, twin, k)] == tied[:k]
        assert [i for i, _ in vector_index.search(alice, twin, 8)][:6] == tied
        assert [i for i, _ in vector_index.search_subset(alice, twin, [33, 2, 25, 40], 2)] == [25, 33]

    def test_a_tie_longer_than_any_over_fetch_still_goes_lower_row_id_first(
        self, vector_index: VectorIndex, users: tuple[str, str]
    ) -> None:
        """150 equal vectors: the cut takes the lowest row ids, not whichever an approximate search met."""
        alice, _ = users
        twin, *others = unit_rows(4, self.dim, 9)
        tied = list(range(1000, 1150))
        for part in (tied[100:], tied[50:100], tied[:50]):  # the lowest ids come last
            vector_index.add(alice, part[::-1], np.stack([twin] * len(part)))
        vector_index.add(alice, [1, 2, 3], np.stack(others))
        assert [i for i, _ in vector_index.search(alice, twin, 8)] == tied[:8]
        assert [i for i, _ in vector_index.search_many(alice, np.stack([twin, twin]), 3)[1]] == tied[:3]

    def test_removed_ids_are_gone_and_unknown_ids_ignored(
        self, vector_index: VectorIndex, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        rows = unit_rows(6, self.dim, 5)
        vector_index.add(alice, list(range(6)), rows)
        vector_index.remove([1, 3, 12345])
        assert vector_index.count(alice) == 4
        assert {i for i, _ in vector_index.search(alice, rows[1], 6)} == {0, 2, 4, 5}

    def test_empty_again(self, vector_index: VectorIndex, users: tuple[str, str]) -> None:
        alice, bob = users
        rows = unit_rows(8, self.dim, 6)
        vector_index.add(alice, list(range(4)), rows[:4])
        vector_index.add(bob, list(range(4, 8)), rows[4:])
        vector_index.remove(list(range(4)))
        assert vector_index.count(alice) == 0
        assert vector_index.search(alice, rows[0], 5) == []
        vector_index.reset()
        assert vector_index.count() == 0
        assert vector_index.search(bob, rows[5], 5) == []
        vector_index.add(alice, [1], rows[:1])  # usable again after the reset
        assert vector_index.search(alice, rows[0], 1)[0][0] == 1
