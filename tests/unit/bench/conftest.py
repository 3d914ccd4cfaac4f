"""Fixtures shared by the bench tests."""

from __future__ import annotations

import itertools
import uuid

import pytest


@pytest.fixture
def counted_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory ids that grow with insertion (1, 2, 3, ...), so two stores of the same turns agree.

    The turns of one session share its time, and the graph walk breaks such ties by memory id
    (``dreammem.stores.traversal``); with random ids two stores may order them apart, and a
    test comparing their rankings would fail now and then.
    """
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))
