"""Shared fixtures: stores on the hashing embedder (fast) or the real MiniLM (integration)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder, NumpyBertEmbedder
from tests.neo4j_server import neo4j_server, newer_neo4j_server  # noqa: F401 - session fixtures


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that use the Neo4j server are marked ``neo4j`` (select with ``-m neo4j``)."""
    for item in items:
        if {"neo4j_server", "newer_neo4j_server"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[DreamMemory]:
    """A persistent store on the deterministic hashing embedder."""
    with DreamMemory(tmp_path / "store", embedder=HashingEmbedder()) as m:
        yield m


@pytest.fixture(scope="session")
def minilm() -> NumpyBertEmbedder:
    """The real all-MiniLM-L6-v2, loaded once from the installed package, on the numpy runtime.

    The runtime every store uses by default; its vectors are checked against
    sentence-transformers' in tests/integration/test_numpy_bert.py (stored reference).
    """
    return NumpyBertEmbedder()
