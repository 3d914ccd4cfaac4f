"""Erasure in the SQLite store: hard deletes that leave no copy of the content behind.

Soft deletes (``forget``) only change a status. Erasure removes the rows of a record
from every table that holds its words or its embedding (records, the full-text
index, vectors, the dream queue, the old memory-index rows, the dream journal's reports and
undo payloads), then :meth:`SQLiteErasure.compact` makes SQLite drop the freed
bytes: the full-text index is merged (FTS5 keeps deleted terms in older segments
until then), the file is rebuilt with ``secure_delete`` on, and the write-ahead log
is checkpointed and truncated.

The graph (embedded or Neo4j) and the FAISS file are erased by the engine through
their own contracts; this module only touches SQLite.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from dreammem.errors import BackendError
from dreammem.stores.sqlite.codec import remove_fts_rows
from dreammem.stores.sqlite.records import RecordRows

__all__ = ["SQLiteErasure", "scrub", "scrub_text"]

log = logging.getLogger(__name__)

_PURGED = "[purged]"


class SQLiteErasure(RecordRows):
    """Records of the SQLite store with their erasure (hard deletes that leave no copy)."""

    def erase_records(self, user_id: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[list[str], int]:
        """Delete these records of this user and every row that refers to them.

        Their entries in the dream journal (reports and undo data) are removed too,
        and ``texts`` (their contents) are blanked wherever the journal still quotes them.

        Returns:
            The ids that existed (and are gone now), and how many dream-log entries
            were rewritten.
        """
        scrubbed = 0
        with self.transaction() as conn:
            rowids = self.rowids(user_id, ids)
            rows = [(r,) for r in rowids.values()]
            scoped = [(user_id, i) for i in rowids]
            remove_fts_rows(conn, list(rowids.values()))
            conn.executemany("DELETE FROM vectors WHERE rowid = ?", rows)
            conn.executemany("DELETE FROM queue WHERE user_id = ? AND record_id = ?", scoped)
            conn.executemany("DELETE FROM memory_index WHERE user_id = ? AND record_id = ?", scoped)
            conn.executemany("DELETE FROM records WHERE user_id = ? AND id = ?", scoped)
            entries = conn.execute("SELECT id, report, undo FROM dreams WHERE user_id = ?", (user_id,))
            for dream_id, report, undo in entries.fetchall():
                clean = scrub_text(report, set(ids), texts), scrub_text(undo, set(ids), texts)
                if clean != (report, undo):
                    conn.execute("UPDATE dreams SET report = ?, undo = ? WHERE id = ?", (*clean, dream_id))
                    scrubbed += 1
        return list(rowids), scrubbed

    def erase_user(self, user_id: str) -> int:
        """Delete every row of this user in the store's own tables.

        Records, full text, vectors, queue, old memory-index rows, dream journal, task state.

        Returns:
            How many dream-log entries were deleted.
        """
        with self.transaction() as conn:
            conn.execute(
                "DELETE FROM records_fts WHERE rowid IN (SELECT rowid FROM records WHERE user_id = ?)",
                (user_id,),
            )
            conn.execute(
                "DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM records WHERE user_id = ?)", (user_id,)
            )
            dreams = int(conn.execute("DELETE FROM dreams WHERE user_id = ?", (user_id,)).rowcount)
            for table in _USER_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM records WHERE user_id = ?", (user_id,))
            return dreams

    def compact(self) -> bool:
        """Make SQLite drop deleted bytes: merge the full-text index, rebuild, truncate the log.

        Costs a rewrite of the file (seconds for a large store).

        Returns:
            True when the file was rebuilt and the write-ahead log emptied; False when
            another connection was writing, or still reads an older snapshot (those
            pages stay in the log until it finishes; call again then).
        """
        with self.transaction() as conn:
            conn.execute("INSERT INTO records_fts (records_fts) VALUES ('optimize')")
        previous = self.fetchall("PRAGMA secure_delete")[0][0]
        self.execute("PRAGMA secure_delete = ON")
        try:
            self.execute("VACUUM")
            rows = self.fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        except BackendError as exc:  # another process writes: the rows are gone, the bytes wait
            log.warning("compacting %s after an erasure failed, retry with compact(): %s", self, exc)
            return False
        finally:
            self.execute(f"PRAGMA secure_delete = {int(previous)}")
        return not rows or int(rows[0][0]) == 0


_USER_TABLES = ("queue", "memory_index", "task_state", "keyword_users")
"""Tables with a ``user_id`` column that the store owns (the graph's are the graph store's;
the graph outbox keeps its marks until the graph has replayed the removal). ``memory_index``
is no longer written (the memory index was removed) but may hold rows older versions wrote."""


def scrub_text(text: str, ids: set[str], contents: Sequence[str]) -> str:
    """A JSON text without anything about these records (itself when nothing names them)."""
    cleaned = scrub(json.loads(text), ids, contents)
    return text if cleaned == json.loads(text) else json.dumps(cleaned, ensure_ascii=False)


def scrub(value: Any, ids: set[str], contents: Sequence[str]) -> Any:
    """A JSON value without anything about these records.

    Objects that are one of them (an ``id`` or ``record_id`` in ``ids``, or
    ``sources`` naming one) and lists or keys that name one are dropped; any string
    still quoting one of ``contents`` has the quote replaced by ``[purged]``.
    """
    if isinstance(value, dict):
        return {k: scrub(v, ids, contents) for k, v in value.items() if k not in ids}
    if isinstance(value, list):
        return [scrub(v, ids, contents) for v in value if not _names(v, ids)]
    if isinstance(value, str):
        for content in contents:
            if content and content in value:
                value = value.replace(content, _PURGED)
        return value
    return value


def _names(value: Any, ids: set[str]) -> bool:
    """True when a list item stands for one of these records."""
    if isinstance(value, str):
        return value in ids
    if isinstance(value, list):
        return any(isinstance(v, str) and v in ids for v in value)
    if isinstance(value, dict):
        own = {value.get("id"), value.get("record_id")}
        sources = value.get("sources")
        return bool(own & ids) or (isinstance(sources, list) and bool(set(map(str, sources)) & ids))
    return False
