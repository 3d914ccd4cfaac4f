"""Fixtures shared by the bench tests."""

from __future__ import annotations

import itertools
import uuid

import pytest


@pytest.fixture
def counted_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory ids that grow with insertion (1, 2, 3, ...), so two stores of the same turns agree.

    The turns of one session share its time; the graph walk breaks such ties by row id
    (``GraphStore.memories_of``, tests/unit/test_tie_order.py), but other orders (index search
    ties) may still fall back to the id, so the tests comparing two stores' rankings keep ids
    that agree.
    """
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))
