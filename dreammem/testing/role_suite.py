"""What every role's conformance suite shares: the store under test and two fresh users."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from dreammem.stores.base import RecordStore

__all__ = ["DIM", "MODEL", "RoleSuite"]

MODEL = "conformance-model"
DIM = 8


class RoleSuite:
    """The fixtures of a role's suite; override :meth:`record_store` (a store, empty or shared).

    A role is checked on a whole :class:`~dreammem.stores.base.RecordStore`: its tests
    write records through the records roles to have something to read.
    """

    @pytest.fixture
    def record_store(self) -> Iterator[RecordStore]:
        """The store under test."""
        raise NotImplementedError("override the record_store fixture")

    @pytest.fixture
    def users(self, record_store: RecordStore) -> Iterator[tuple[str, str]]:
        """Two fresh user ids; their records are deleted afterwards."""
        pair = (f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}")
        yield pair
        for user in pair:
            everything = record_store.find(user, statuses=None)
            record_store.dequeue(user, [r.id for r in everything])
            record_store.delete(user, [r.id for r in everything])
