"""Which DreamMem versions may write to an embedded store, so that none writes incomplete rows.

A newer DreamMem may change what a row must hold (migration 17 moved the library's notes
out of ``metadata`` into ``system``, migration 18 the message keys): an older one, opening
the same file beside it, would go on writing rows the newer one reads wrong. So the file
records, in ``store_meta`` (migration 19), the lowest client schema version that may write
records to it; each client raises it to its own :data:`MIN_WRITER_VERSION` when it opens
the file (never lowers it). Triggers on the ``records`` table compare it with the
connection's :data:`CLIENT_FUNCTION` before every insert and every change of a record's
content, notes or status, inside the write itself, so a process that opened the file before
a newer one raised the version is refused too, and so is a client older than migration 19
(it lacks the function). The write raises :class:`~dreammem.errors.StoreVersionError` (not
retryable: upgrade DreamMem) and writes nothing; reading, and the access counts recall
keeps, still work. The embedded twin of :mod:`dreammem.stores.neo4j_versions`.
"""

from __future__ import annotations

import sqlite3

from dreammem.errors import StoreVersionError
from dreammem.stores.migrations import MIGRATIONS

__all__ = [
    "CLIENT_FUNCTION",
    "CLIENT_VERSION",
    "MIN_WRITER_VERSION",
    "needs_raise",
    "raise_min_writer",
    "refused",
    "register",
]

CLIENT_VERSION = max(m.version for m in MIGRATIONS)
"""This DreamMem's schema version: the newest migration it knows."""

MIN_WRITER_VERSION = 18
"""The lowest client schema version whose rows this version reads whole (17: the library's notes in
``system``; 18: message keys and keyed entries there too)."""

CLIENT_FUNCTION = "dreammem_client_version"
"""The SQL function the guard triggers of migration 19 call."""

_REFUSED = "dreammem_writer_too_old"
"""The message the guard triggers abort with."""

_KEY = "min_writer_version"


def register(conn: sqlite3.Connection) -> None:
    """Add :data:`CLIENT_FUNCTION` to a connection (before any write)."""
    conn.create_function(CLIENT_FUNCTION, 0, lambda: CLIENT_VERSION, deterministic=True)


def _recorded(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (_KEY,)).fetchone()
    return int(row[0]) if row is not None else 0


def needs_raise(conn: sqlite3.Connection) -> bool:
    """Whether the file records a lowest writer version below this client's (a read, no lock).

    False for a file without ``store_meta`` (migrated only up to an older schema).
    """
    table = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'"
    exists = conn.execute(table).fetchone()
    return exists is not None and _recorded(conn) < MIN_WRITER_VERSION


def raise_min_writer(conn: sqlite3.Connection) -> None:
    """Raise the file's lowest writer version to this client's, never lower (inside a write transaction)."""
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = "
        "excluded.value WHERE CAST(store_meta.value AS INTEGER) < CAST(excluded.value AS INTEGER)",
        (_KEY, str(MIN_WRITER_VERSION)),
    )


def refused(exc: sqlite3.Error, path: str) -> StoreVersionError | None:
    """The error to raise when ``exc`` is a guard trigger's refusal, else None."""
    if _REFUSED not in str(exc):
        return None
    return StoreVersionError(
        f"{path} records a lowest writer version above this DreamMem's schema {CLIENT_VERSION}: a newer "
        "DreamMem writes to it; upgrade DreamMem to write (reading still works)"
    )
