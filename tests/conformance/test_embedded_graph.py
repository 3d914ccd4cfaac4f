"""The embedded (SQLite) graph store passes the graph conformance suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dreammem.stores.base import GraphStore
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.sqlite import SQLiteRecordStore
from tests.conformance.graph_suite import GraphStoreSuite


class TestEmbeddedGraphStore(GraphStoreSuite):
    @pytest.fixture
    def graph_store(self, tmp_path: Path) -> Iterator[GraphStore]:
        records = SQLiteRecordStore(tmp_path / "graph.db")
        yield EmbeddedGraphStore(records)
        records.close()
