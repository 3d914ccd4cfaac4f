"""The SQLite store's query plans, for tests that pin which index a read uses."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dreammem.stores.sqlite import SQLiteRecordStore

__all__ = ["RecordingSQLiteStore"]


class RecordingSQLiteStore(SQLiteRecordStore):
    """The SQLite store, keeping the statements its reads run (``statements``)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path)
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run the read, keeping its statement and parameters."""
        if isinstance(params, Sequence):
            self.statements.append((sql, tuple(params)))
        return super().fetchall(sql, params)

    def plan_of(self, fragment: str) -> str:
        """SQLite's query plan, as one line, of the first kept statement containing ``fragment``."""
        sql, params = next(s for s in self.statements if fragment in s[0])
        return " ".join(str(tuple(r)) for r in super().fetchall(f"EXPLAIN QUERY PLAN {sql}", params))
