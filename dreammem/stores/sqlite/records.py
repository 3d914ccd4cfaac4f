"""The ``records`` table: insert, update, delete and read records, scoped by user."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from dreammem.errors import BackendError
from dreammem.stores.sqlite.codec import (
    COLUMNS,
    MUTABLE,
    chunks,
    from_row,
    from_rows,
    insert_fts_rows,
    remove_fts_rows,
    to_row,
)
from dreammem.stores.sqlite.connection import SQLiteConnection
from dreammem.types import Kind, Layer, MemoryRecord, Status

log = logging.getLogger(__name__)

__all__ = ["RecordRows"]


_NEIGHBOUR = (
    "SELECT r.rowid FROM records r WHERE r.user_id = s.user_id AND r.session_id = s.session_id "
    "AND r.event_time {before}= s.event_time "
    f"AND r.kind = '{Kind.TURN.value}' AND r.status = 'active' "
    "AND (r.event_time {before} s.event_time OR r.rowid {before} s.rowid) "
    "ORDER BY r.event_time {order}, r.rowid {order} LIMIT 1"
)
"""The turn right before (``<``, ``DESC``) or after (``>``, ``ASC``) row ``s`` in its session.

The bare ``event_time <=`` (``>=``) bound lets the ``(user_id, session_id, event_time)`` index
start at ``s`` and walk away from it, so the first active turn found ends the search. With the
bound only inside the ``OR``, every turn of the session was read and sorted for each seed: 20 seeds
took 147 µs at 20 turns a session, 379 µs at 200 and 1.6 ms at 1,000; now 84-91 µs at each."""
_INSERT = f"INSERT INTO records ({', '.join(COLUMNS)}) VALUES ({', '.join(f':{c}' for c in COLUMNS)})"
_UPDATE = (
    f"UPDATE records SET {', '.join(f'{c} = :{c}' for c in MUTABLE)} WHERE id = :id AND user_id = :user_id"
)


class RecordRows(SQLiteConnection):
    """Records of the SQLite store (the full-text rows are written with them)."""

    def insert(
        self,
        records: Sequence[MemoryRecord],
        match_texts: Sequence[str],
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Insert new records with the tokenised text the keyword path matches on.

        Args:
            records: The records.
            match_texts: Each record's own tokenised words.
            contexts: Each record's tokenised context (the previous turns of its
                session), matched with a lower weight; none by default.

        Returns:
            The row ids of the records, in order (the vector index's ids).
        """
        context_terms = contexts if contexts is not None else [""] * len(records)
        if len(match_texts) != len(records) or len(context_terms) != len(records):
            raise ValueError("one match text and one context per record are required")
        with self.transaction() as conn:
            # One statement for the batch, then the row ids SQLite gave them (ids are unique).
            conn.executemany(_INSERT, [to_row(r) for r in records])
            given = self._rowids_by_id([r.id for r in records])
            rowids = [given[r.id] for r in records]
            insert_fts_rows(conn, list(zip(rowids, match_texts, context_terms, strict=True)))
        self._note_indexed(len(rowids))
        return rowids

    def update(self, records: Sequence[MemoryRecord]) -> None:
        """Write the mutable fields of existing records (scoped by their user ids)."""
        with self.transaction() as conn:
            # Each statement changes at most one row (ids are unique): all changed one iff the sum is right.
            if conn.executemany(_UPDATE, [to_row(r) for r in records]).rowcount != len(records):
                missing = next(r for r in records if r.id not in self.rowids(r.user_id, [r.id]))
                raise BackendError(f"record {missing.id} not found for update")

    def delete(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Delete records of this user outright, with their keyword rows (undo only).

        Returns:
            The ids that existed.
        """
        rowids = self.rowids(user_id, ids)
        with self.transaction() as conn:
            remove_fts_rows(conn, list(rowids.values()))
            conn.executemany(
                "DELETE FROM records WHERE user_id = ? AND id = ?", [(user_id, i) for i in rowids]
            )
        return list(rowids)

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        """Records of this user with these ids, in the order asked (missing ids skipped).

        ``for_update`` needs nothing more here: a transaction begins ``IMMEDIATE``, so it
        holds the database's write lock from its first statement.
        """
        if not ids:
            return []
        found: dict[str, MemoryRecord] = {}
        for chunk in chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT * FROM records WHERE +user_id = ? AND id IN ({marks})", (user_id, *chunk)
            )
            found.update((r.id, r) for r in from_rows(rows))
        return [found[i] for i in ids if i in found]

    def ids_with_prefix(self, user_id: str, prefix: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` trace ids of this user that start with ``prefix`` (any status)."""
        rows = self.fetchall(
            # A range on the primary key, not LIKE: no wildcards to escape, and it uses the index.
            "SELECT id FROM records WHERE id >= ? AND id < ? AND +user_id = ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\U0010ffff", user_id, limit),
        )
        return [str(r[0]) for r in rows]

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id."""
        found: dict[int, MemoryRecord] = {}
        for chunk in chunks(list(rowids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                # "+user_id": look rows up by rowid, never by scanning the user's index.
                f"SELECT rowid AS rid, * FROM records WHERE +user_id = ? AND rowid IN ({marks})",
                (user_id, *chunk),
            )
            found.update(zip((int(r["rid"]) for r in rows), from_rows(rows), strict=True))
        return found

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The text of each active record of this user among these row ids (others left out)."""
        found: dict[int, str] = {}
        for chunk in chunks(list(rowids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                # Only the text: decoding whole records was most of the speaker path's time.
                f"SELECT rowid, content FROM records WHERE +user_id = ? AND +status = 'active' "
                f"AND rowid IN ({marks})",
                (user_id, *chunk),
            )
            found.update((int(r[0]), str(r[1])) for r in rows)
        return found

    def _rowids_by_id(self, ids: Sequence[str]) -> dict[str, int]:
        """Row ids by trace id, of any user (a trace id is unique in a store)."""
        out: dict[str, int] = {}
        for chunk in chunks(list(ids), 500):
            rows = self.fetchall(f"SELECT id, rowid FROM records WHERE id IN ({_marks(chunk)})", chunk)
            out.update((str(r[0]), int(r[1])) for r in rows)
        return out

    def rowids(self, user_id: str, ids: Sequence[str]) -> dict[str, int]:
        """Row ids of this user's records by trace id."""
        out: dict[str, int] = {}
        for chunk in chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT id, rowid FROM records WHERE +user_id = ? AND id IN ({marks})",
                (user_id, *chunk),
            )
            out.update((r[0], int(r[1])) for r in rows)
        return out

    def find(
        self,
        user_id: str,
        *,
        statuses: Sequence[Status] | None = (Status.ACTIVE,),
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        slot: str | None = None,
        slot_prefix: str | None = None,
        session_id: str | None = None,
        pinned: bool | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        newest_first: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        """Records of this user matching every given filter, ordered by event time.

        ``offset`` skips that many of them first (paging).
        """
        where = ["user_id = ?"]
        params: list[Any] = [user_id]
        for column, values in (("status", statuses), ("layer", layers), ("kind", kinds)):
            if values is not None:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params.extend(v.value for v in values)
        for column, value in (("slot", slot), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if slot_prefix is not None:
            where.append("substr(slot, 1, ?) = ?")
            params.extend([len(slot_prefix), slot_prefix])
        if pinned is not None:
            where.append("pinned = 1" if pinned else "pinned = 0")  # literal: lets the partial index serve it
        if since is not None:
            where.append("event_time >= ?")
            params.append(since.isoformat())
        if until is not None:
            where.append("event_time < ?")
            params.append(until.isoformat())
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT * FROM records WHERE {' AND '.join(where)} ORDER BY event_time {order}, rowid {order}"
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params.extend([-1 if limit is None else limit, offset])
        return from_rows(self.fetchall(sql, params))

    def session_neighbours(
        self, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        """For each active turn of a session among these rows: the active turns right before and after it.

        ``{rowid: (previous, next)}`` in :meth:`find`'s order (event time, then insertion),
        ``None`` at a session's end; other users' rows, inactive rows, records that are not
        turns and turns without a session are left out. One query (the ``(user_id,
        session_id, event_time)`` index finds each neighbour).
        """
        out: dict[int, tuple[int | None, int | None]] = {}
        for chunk in chunks(list(dict.fromkeys(rowids)), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT s.rowid AS rid, ({_NEIGHBOUR.format(before='<', order='DESC')}) AS prev, "
                f"({_NEIGHBOUR.format(before='>', order='ASC')}) AS next FROM records s "
                f"WHERE +s.user_id = ? AND s.rowid IN ({marks}) AND s.kind = ? AND s.status = 'active' "
                "AND s.session_id IS NOT NULL",
                (user_id, *chunk, Kind.TURN.value),
            )
            out.update((int(r["rid"]), (r["prev"], r["next"])) for r in rows)
        return out

    def twins(self, record: MemoryRecord) -> list[MemoryRecord]:
        """Records with the same text linked to this one by provenance (either way)."""
        rows = self.fetchall(
            # The head of the text finds the rows by index (migration 13), the whole text decides.
            # "+content": with a bare "content = ?" SQLite folds the value into substr(...) and
            # no longer matches the index expression, so it read every row of the user (0.75 ms
            # a call at 600 rows, growing with the user; 0.05 ms with it).
            "SELECT * FROM records WHERE user_id = ? AND substr(content, 1, 32) = ? AND id != ?"
            " AND +content = ?",
            (record.user_id, record.content[:32], record.id, record.content),
        )
        # Only rows that may be linked are decoded: a text said many times has many same-text rows.
        linked = set(record.provenance)
        maybe = [r for r in rows if r["id"] in linked or record.id in r["provenance"]]
        found = [from_row(r) for r in maybe]
        return [r for r in found if record.id in r.provenance or r.id in record.provenance]

    def twins_many(self, records: Sequence[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
        """:meth:`twins` of each record, by record id: one query per user and 400 distinct texts."""
        out: dict[str, list[MemoryRecord]] = {r.id: [] for r in records}
        by_user: dict[str, dict[str, list[MemoryRecord]]] = {}
        for record in {r.id: r for r in records}.values():
            by_user.setdefault(record.user_id, {}).setdefault(record.content, []).append(record)
        for user_id, by_text in by_user.items():
            for texts in chunks(sorted(by_text), 400):
                heads = sorted({text[:32] for text in texts})
                rows = self.fetchall(
                    # The heads find the rows by index (migration 13), the whole texts decide, as in twins().
                    "SELECT * FROM records WHERE user_id = ? "
                    f"AND substr(content, 1, 32) IN ({_marks(heads)}) AND +content IN ({_marks(texts)}) "
                    "ORDER BY substr(content, 1, 32), rowid",
                    (user_id, *heads, *texts),
                )
                for row in rows:
                    for record in by_text.get(row["content"], ()):
                        # As in twins(): only rows that may be linked are decoded.
                        maybe = row["id"] in record.provenance or record.id in row["provenance"]
                        twin = from_row(row) if maybe and row["id"] != record.id else None
                        if twin is not None and _linked(record, twin):
                            out[record.id].append(twin)
        return out

    def twins_of(self, user_id: str, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """For each of these records that has a twin (see :meth:`twins`), the twin's id."""
        ids = {r.id for r in records}
        if not ids:
            return {}
        linked = self.get(user_id, sorted({p for r in records for p in r.provenance}))
        linked.extend(self.derived_from(user_id, sorted(ids)))
        out: dict[str, str] = {}
        for record in records:
            for other in linked:
                linked_ids = other.id in record.provenance or record.id in other.provenance
                if other.id != record.id and linked_ids and other.content == record.content:
                    out.setdefault(record.id, other.id)
        return out

    def derived_from(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user whose provenance names any of these ids."""
        found: dict[str, MemoryRecord] = {}
        for chunk in chunks(sorted(set(ids)), 500):
            rows = self.fetchall(
                "SELECT * FROM records r WHERE user_id = ? AND provenance != '[]' AND EXISTS "
                f"(SELECT 1 FROM json_each(r.provenance) p WHERE p.value IN ({', '.join('?' * len(chunk))}))",
                (user_id, *chunk),
            )
            found.update((r["id"], from_row(r)) for r in rows)
        return list(found.values())

    def superseded_by_any(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user that one of these records directly superseded."""
        found: list[MemoryRecord] = []
        for chunk in chunks(sorted(set(ids)), 500):
            rows = self.fetchall(
                # Served by records_user_superseded_by; "+status": never by the user's status index.
                "SELECT * FROM records WHERE user_id = ? AND +status = 'superseded' "
                f"AND superseded_by IN ({', '.join('?' * len(chunk))}) ORDER BY event_time, rowid",
                (user_id, *chunk),
            )
            found.extend(from_rows(rows))
        return found

    def filter_rowids(
        self,
        user_id: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        limit: int,
    ) -> set[int] | None:
        """Row ids of this user's active records with these column values (None: over ``limit``)."""
        where, params = ["user_id = ?", "status = 'active'"], [user_id]
        for column, value in (("agent_id", agent_id), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        for column, values in (("layer", layers), ("kind", kinds)):
            if values is not None:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params.extend(v.value for v in values)
        sql = f"SELECT rowid FROM records WHERE {' AND '.join(where)} LIMIT ?"
        rows = self.fetchall(sql, (*params, limit + 1))
        return None if len(rows) > limit else {int(r[0]) for r in rows}

    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Which of these record ids are taken, by any user (ids are unique in a store)."""
        taken: set[str] = set()
        for chunk in chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            taken.update(
                str(r[0]) for r in self.fetchall(f"SELECT id FROM records WHERE id IN ({marks})", chunk)
            )
        return taken

    def existing_message_keys(self, user_id: str, session_id: str | None, keys: Sequence[str]) -> set[str]:
        """Which of these adapter message keys are already stored for the user and session."""
        found: set[str] = set()
        session_clause = "session_id IS ?" if session_id is None else "session_id = ?"
        for chunk in chunks(list(keys), 500):
            marks = ", ".join("?" * len(chunk))
            rows = self.fetchall(
                f"SELECT json_extract(system, '$.message_key') FROM records WHERE user_id = ? "
                f"AND {session_clause} AND json_extract(system, '$.message_key') IN ({marks})",
                (user_id, session_id, *chunk),
            )
            found.update(str(r[0]) for r in rows)
        return found

    def touch(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Record that recall returned these records (access time and count only).

        Never waits for a writer: while another process or thread holds the write lock,
        the accesses are held in memory and written by the next touch that finds the lock
        free, or when the store closes (:mod:`dreammem.stores.sqlite.touches`).
        """
        if ids:
            self._touches.add(user_id, ids, at)
        self._write_touches(wait=False)

    def _write_touches(self, *, wait: bool) -> None:
        """Write the held accesses (``wait``: for the write lock, else only if it is free now)."""
        rows = self._touches.take()
        if not rows:
            return
        try:
            with self.transaction() if wait else self.transaction_if_free() as conn:
                if conn is None:
                    self._touches.put_back(rows)
                    return
                conn.executemany(
                    "UPDATE records SET last_accessed_at = ?, access_count = access_count + ? "
                    "WHERE user_id = ? AND id = ?",
                    rows,
                )
        except BackendError:
            self._touches.put_back(rows)
            raise

    def close(self) -> None:
        """Write the held accesses (waiting for the write lock), then close (idempotent)."""
        try:
            if not self.closed:
                self._write_touches(wait=True)
        except BackendError as exc:  # closing must not fail on bookkeeping
            log.warning("could not record %d held accesses: %s", len(self._touches), exc)
        finally:
            super().close()

    def count(self, user_id: str | None = None, *, status: Status | None = None) -> int:
        """How many records (of one user, of one status)."""
        where, params = [], []
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        if status is not None:
            where.append("status = ?")
            params.append(status.value)
        sql = "SELECT COUNT(*) FROM records" + (f" WHERE {' AND '.join(where)}" if where else "")
        return self._scalar(sql, params)

    def slots(self, prefix: str) -> list[str]:
        """Distinct slots of active records, across users, that start with ``prefix``."""
        rows = self.fetchall(
            "SELECT DISTINCT slot FROM records WHERE status = 'active' AND slot IS NOT NULL "
            "AND substr(slot, 1, ?) = ? ORDER BY 1",
            (len(prefix), prefix),
        )
        return [str(r[0]) for r in rows]

    def users(self) -> list[str]:
        """Every user id with at least one record."""
        return [r[0] for r in self.fetchall("SELECT DISTINCT user_id FROM records ORDER BY 1")]

    def history_chain(self, user_id: str, record_id: str) -> list[MemoryRecord]:
        """Every record of the same slot or supersede chain as this one, oldest first."""
        (record,) = self.get(user_id, [record_id]) or (None,)
        if record is None:
            return []
        chain: dict[str, MemoryRecord] = {record.id: record}
        if record.slot:
            for r in self.find(user_id, statuses=None, slot=record.slot, newest_first=False):
                chain[r.id] = r
        # Follow superseded_by links both ways.
        frontier = list(chain)
        while frontier:
            current = frontier.pop()
            rows = self.fetchall(
                "SELECT * FROM records WHERE user_id = ? AND (superseded_by = ? OR id = "
                "(SELECT superseded_by FROM records WHERE user_id = ? AND id = ?))",
                (user_id, current, user_id, current),
            )
            for row in rows:
                if row["id"] not in chain:
                    chain[row["id"]] = from_row(row)
                    frontier.append(row["id"])
        # Equal times (an edited memory and its earlier text): the version that ended first.
        return sorted(chain.values(), key=lambda r: (r.created_at, r.event_time, r.valid_to or _END))


_END = datetime.max.replace(tzinfo=UTC)


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _linked(a: MemoryRecord, b: MemoryRecord) -> bool:
    """One names the other in its provenance."""
    return a.id in b.provenance or b.id in a.provenance
