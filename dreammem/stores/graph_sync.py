"""Keeps a graph store in step with the records, SQLite being the source of truth.

Two ways, chosen by the graph's declared capabilities (``GraphCapability``):

* a ``"transactional"`` graph (the embedded one) is written inside the records'
  transaction: both commit or neither does;
* any other graph (Neo4j) gets a *transactional outbox*: inside the records'
  transaction each changed memory is marked in ``graph_outbox`` (migration 3);
  after the commit the outbox is replayed against the graph. Replay reads each
  record's *current* state (active -> upsert, otherwise -> remove), so it is
  idempotent and order-free. A graph that is down leaves the marks in place; they
  are replayed on the next write or recall (at most every ``retry_after`` seconds)
  or on demand, and nothing is lost across restarts of either side.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence

from dreammem.errors import ConfigError, DreamMemError
from dreammem.stores.base import GraphCapability, GraphItem, GraphStore, RecordStore, records_to_graph_items
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import MemoryRecord

__all__ = ["GraphSync"]

log = logging.getLogger(__name__)

_REPLAY_BATCH = 500


class GraphSync:
    """Stages graph changes with the records' writes and replays them into the graph.

    Args:
        store: The record store (the source of truth, and home of the outbox).
        graph: The graph store to keep in step.
        retry_after: Seconds to wait after a failed replay before an automatic one
            is tried again (on-demand replays always try).
    """

    def __init__(self, store: RecordStore, graph: GraphStore, *, retry_after: float = 5.0) -> None:
        self._store = store
        self.graph = graph
        self.transactional = GraphCapability.TRANSACTIONAL in graph.capabilities
        self._outbox = store if isinstance(store, SQLiteRecordStore) else None
        if not self.transactional and self._outbox is None:
            raise ConfigError(
                f"{type(graph).__name__} is written through an outbox, which only the embedded store has; "
                "with the Neo4j backend the graph lives in the same database"
            )
        self.retry_after = retry_after
        self._next_try = 0.0
        self._lock = threading.RLock()

    def stage(self, records: Sequence[MemoryRecord]) -> None:
        """Record these changes; call inside the records' transaction.

        A transactional graph is written at once (joining the transaction); otherwise
        the memories are marked in the outbox for :meth:`flush`.
        """
        if not records:
            return
        if self.transactional:
            self._apply_records(records)
            return
        version = time.time_ns()
        self._box.executemany(
            "INSERT INTO graph_outbox (user_id, memory_id, version) VALUES (?, ?, ?) "
            "ON CONFLICT (user_id, memory_id) DO UPDATE SET version = excluded.version",
            [(r.user_id, r.id, version) for r in records],
        )

    def _apply_records(self, records: Sequence[MemoryRecord]) -> None:
        by_user: dict[str, tuple[list[MemoryRecord], list[str]]] = {}
        for record in records:
            active, inactive = by_user.setdefault(record.user_id, ([], []))
            if record.is_active:
                active.append(record)
            else:
                inactive.append(record.id)
        for user_id, (active, inactive) in by_user.items():
            if inactive:
                self.graph.remove(user_id, inactive)
            if active:
                self.graph.upsert(user_id, self._items(user_id, active))

    @property
    def _box(self) -> SQLiteRecordStore:
        """The outbox's store (only an outbox graph has one)."""
        assert self._outbox is not None, "a transactional graph has no outbox"
        return self._outbox

    def _items(
        self, user_id: str, records: Sequence[MemoryRecord], rowids: Mapping[str, int] | None = None
    ) -> list[GraphItem]:
        """Graph items of one user's records, with their row ids (the graph's tie-break).

        ``rowids``: the records' row ids when the caller has them (else they are read).
        """
        if rowids is None:
            rowids = self._store.rowids(user_id, [r.id for r in records])
        return records_to_graph_items(records, rowids)

    def pending(self) -> int:
        """How many memories wait in the outbox."""
        if self.transactional:
            return 0
        row = self._box.fetchone("SELECT COUNT(*) FROM graph_outbox")
        return int(row[0]) if row is not None else 0

    def flush(self, *, force: bool = False) -> int:
        """Replay the outbox into the graph.

        Automatic replays (``force=False``) are skipped while a recent failure's
        back-off lasts and never raise: a failure is logged and left for later.

        Returns:
            How many outbox entries were replayed.

        Raises:
            BackendError: with ``force=True``, when the graph fails (``GraphUnavailableError``
                when it cannot be reached); ``ConfigError`` when it rejects the credentials.
        """
        if self.transactional:
            return 0
        with self._lock:
            if not force and time.monotonic() < self._next_try:
                return 0
            if force:
                self.graph.retry_now()
            done = 0
            try:
                while batch := self._pending_batch():
                    self._replay(batch)
                    done += len(batch)
            except DreamMemError as exc:  # degradation boundary: the records are safe in SQLite
                self._next_try = time.monotonic() + self.retry_after
                self._note_failure(exc)
                log.warning("graph replay failed, %d memories wait in the outbox: %s", self.pending(), exc)
                if force:
                    raise
                return done
            self._next_try = 0.0
            if done:
                log.info("graph outbox replayed: %d memories", done)
            return done

    def _pending_batch(self) -> list[tuple[str, str, int, int | None]]:
        """The oldest outbox entries: ``(user_id, memory_id, version, rowid)``.

        The record's row id comes with its entry (``None`` once the record is gone), so
        a replay reads no row ids of its own.
        """
        rows = self._box.fetchall(
            "SELECT o.user_id, o.memory_id, o.version, r.rowid FROM graph_outbox o "
            "LEFT JOIN records r ON r.id = o.memory_id AND r.user_id = o.user_id "
            "ORDER BY o.version LIMIT ?",
            (_REPLAY_BATCH,),
        )
        return [(str(r[0]), str(r[1]), int(r[2]), None if r[3] is None else int(r[3])) for r in rows]

    def _replay(self, batch: Sequence[tuple[str, str, int, int | None]]) -> None:
        by_user: dict[str, list[str]] = {}
        rowids: dict[str, int] = {}
        for user_id, memory_id, _, rowid in batch:
            by_user.setdefault(user_id, []).append(memory_id)
            if rowid is not None:
                rowids[memory_id] = rowid
        for user_id, ids in by_user.items():
            current = {r.id: r for r in self._store.get(user_id, ids)}
            active = [current[i] for i in ids if i in current and current[i].is_active]
            gone = [i for i in ids if i not in current or not current[i].is_active]
            if gone:
                self.graph.remove(user_id, gone)
            if active:
                self.graph.upsert(user_id, self._items(user_id, active, rowids))
        # Only entries not re-staged meanwhile (same version) leave the outbox.
        with self._box.transaction() as conn:
            conn.executemany(
                "DELETE FROM graph_outbox WHERE user_id = ? AND memory_id = ? AND version = ?",
                [row[:3] for row in batch],
            )

    def _note_failure(self, exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}"[:500]
        self._box.execute(
            "UPDATE graph_outbox SET attempts = attempts + 1, last_error = ? "
            "WHERE (user_id, memory_id) IN "
            "(SELECT user_id, memory_id FROM graph_outbox ORDER BY version LIMIT ?)",
            (message, _REPLAY_BATCH),
        )

    def rebuild(self, users: Sequence[str], *, batch: int = 1000) -> int:
        """Rebuild the graph of these users from their active records.

        A transactional graph is cleared and refilled inside one records'
        transaction. For an outbox graph every active record is marked first, then the
        users' graphs are cleared and the outbox replayed, so a failure half way
        leaves the rest queued.

        Returns:
            How many records were staged for the graph.

        Raises:
            BackendError: the graph failed (queued work stays in the outbox).
        """
        total = 0
        with self._lock:
            for user_id in users:
                records = self._store.find(user_id, newest_first=False)
                with self._store.transaction():
                    if self.transactional:
                        self.graph.clear(user_id)
                    for start in range(0, len(records), batch):
                        self.stage(records[start : start + batch])
                total += len(records)
            if not self.transactional:
                self.graph.retry_now()
                for user_id in users:
                    self.graph.clear(user_id)
                self.flush(force=True)
        return total
