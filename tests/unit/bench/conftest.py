"""Fixtures shared by the bench tests."""

from __future__ import annotations

import itertools
import uuid

import pytest


@pytest.fixture
def counted_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory ids that grow with insertion (1, 2, 3, ...), so two stores of the same turns agree.

    The turns of one session share its time; the stores break such ties by row id
    (``dreammem.stores.ties``; the graph walk, index search and time windows), and the
    tests comparing two stores' rankings keep ids that agree as well, so that any order
    still falling back to the id (a sort of records by id) agrees too.
    """
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))
