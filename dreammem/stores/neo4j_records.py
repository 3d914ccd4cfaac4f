"""Records of the Neo4j record store: ``(:DMRecord)`` nodes, written and read by user.

One node per record holds the record's fields (the same values as a SQLite row:
times as ISO text, the metadata and the system notes as JSON text, provenance and
entities as lists),
its integer ``rowid`` (the vector index's id, from a counter node), its keyword
``terms`` and ``context``, a ``scope`` (the hashed user id while the record is
active, which the full-text query requires), its embedding and its dream-queue
mark. Every query names the user id; ``rowid`` lookups check it too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from dreammem.errors import BackendError
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_find import find_many_statements, find_statement
from dreammem.stores.neo4j_times import DROP_CHANGED_WINDOW
from dreammem.stores.neo4j_versions import SCHEMA_VERSION, WRITER_GUARD, refuse_older_writer
from dreammem.stores.roles.records import RecordQuery
from dreammem.system_meta import MESSAGE_KEY, NOTES_VERSION
from dreammem.types import FIXED_FIELDS, Kind, Layer, MemoryRecord, Status

__all__ = [
    "CONTENT_HEAD",
    "NEIGHBOUR_TURN",
    "RECORD_FIELDS",
    "TERMS_FORMAT",
    "RecordNodes",
    "from_props",
    "scope_of",
    "to_props",
]

_MUTABLE = (
    *(f.name for f in dataclasses.fields(MemoryRecord) if f.name not in FIXED_FIELDS),
    "scope",
    "message_key",
)
"""The properties an update rewrites: the record's changeable fields and the two derived from them.

``notes_version`` (where a node keeps the library's notes, :data:`~dreammem.system_meta.NOTES_VERSION`)
is set on insert and by the upgrade only: an update of a node not yet upgraded leaves it to the upgrade."""

CONTENT_HEAD_CHARS = 32
"""Characters of a record's text kept in ``content_head``, which the ``(user_id, content_head)`` index
holds (a whole text may be too long for an index entry)."""

CONTENT_HEAD = f"r.content_head = coalesce(left(r.content, {CONTENT_HEAD_CHARS}), '')"
"""The ``SET`` item that derives ``content_head`` from a node's text (on insert, update and upgrade)."""
RECORD_FIELDS = "r {.*, embedding: null, terms: null, context: null}"
"""A record node's fields without its large derived properties."""

TERMS_FORMAT = 2
"""How a node's ``terms``/``context`` were made: 1 (absent) the engine's tokens, 2 FTS5's (stems)."""


NEIGHBOUR_TURN = (
    "WITH s OPTIONAL MATCH (n:DMRecord {{user_id: s.user_id, session_id: s.session_id}}) "
    "USING INDEX SEEK n:DMRecord(user_id, session_id) "  # the planner may seek on rowid > s.rowid instead
    "WHERE n.kind = $turn AND n.status = 'active' AND (n.event_time {before} s.event_time "
    "OR (n.event_time = s.event_time AND n.rowid {before} s.rowid)) "
    "RETURN n.rowid AS {name}_rowid ORDER BY n.event_time {order}, n.rowid {order} LIMIT 1"
)
"""The turn right before (``<``, ``DESC``) or after (``>``, ``ASC``) node ``s`` in its session."""


_HISTORY_STEP = (
    "UNWIND $ids AS id CALL (id) { "
    "MATCH (r:DMRecord {superseded_by: id}) USING INDEX r:DMRecord(superseded_by) "
    "WHERE r.user_id = $user_id RETURN r "
    "UNION "
    "MATCH (o:DMRecord {id: id}) USING INDEX o:DMRecord(id) WHERE o.user_id = $user_id "
    "MATCH (r:DMRecord {id: o.superseded_by}) USING INDEX r:DMRecord(id) WHERE r.user_id = $user_id RETURN r "
    f"}} WITH DISTINCT r RETURN {RECORD_FIELDS} AS r ORDER BY r.rowid"
)
"""One step of the lineage walk: the user's records that one of ``$ids`` replaced or that replaced one.

Each id is looked up on its own index (``superseded_by`` and ``id``), one ``CALL`` per id: with
``IN $ids`` the planner read every record of the user."""


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def scope_of(user_id: str) -> str:
    """The full-text scope token of a user (one Lucene term whatever the id holds)."""
    return "u" + hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def to_props(record: MemoryRecord) -> dict[str, Any]:
    """A record as the properties of its node."""
    props = record.to_dict()
    props["priority"] = int(record.priority)
    props["metadata"] = json.dumps(dict(record.metadata), ensure_ascii=False)
    props["system"] = json.dumps(dict(record.system), ensure_ascii=False)
    props["scope"] = scope_of(record.user_id) if record.is_active else None
    props["message_key"] = record.system.get(MESSAGE_KEY)
    props["notes_version"] = NOTES_VERSION
    return props


def from_props(props: Any) -> MemoryRecord:
    """A node's properties as a record (through :meth:`MemoryRecord.from_dict`)."""
    data = dict(props)
    data["metadata"] = json.loads(data.get("metadata") or "{}")
    data["system"] = json.loads(data.get("system") or "{}")
    data["provenance"] = list(data.get("provenance") or [])
    data["entities"] = list(data.get("entities") or [])
    return MemoryRecord.from_dict(data)


class RecordNodes:
    """Insert, update, delete and read ``(:DMRecord)`` nodes (see the module docstring)."""

    client_version: int = SCHEMA_VERSION
    """The schema version this client writes (set by the store; see ``neo4j_versions``)."""

    def __init__(self, client: Neo4jClient) -> None:
        self.client = client

    def insert(
        self,
        records: Sequence[MemoryRecord],
        match_texts: Sequence[str],
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Insert new records with their keyword terms (and context terms); returns their row ids."""
        if not records:
            return []
        context_terms = list(contexts) if contexts is not None else [""] * len(records)
        first = self.client.next_ids("rowid", len(records))
        rowids = list(range(first, first + len(records)))
        rows = [
            {"props": to_props(r), "rowid": rowid, "terms": terms, "context": context}
            for r, rowid, terms, context in zip(records, rowids, match_texts, context_terms, strict=True)
        ]
        written = self.client.scalar(
            "insert",
            f"{WRITER_GUARD}UNWIND $rows AS row CREATE (r:DMRecord) SET r = row.props, r.rowid = row.rowid, "
            f"r.terms = row.terms, r.context = row.context, r.terms_format = $format SET {CONTENT_HEAD} "
            "RETURN count(r)",
            rows=rows,
            format=TERMS_FORMAT,
            client_version=self.client_version,
        )
        if written != len(rows):
            refuse_older_writer(self.client, self.client_version)
            raise BackendError(f"wrote {written} of {len(rows)} records")
        return rowids

    def update(self, records: Sequence[MemoryRecord]) -> None:
        """Write the mutable fields of existing records (``BackendError`` if one is missing)."""
        if not records:
            return
        assignments = DROP_CHANGED_WINDOW + "SET " + ", ".join(f"r.{name} = row.{name}" for name in _MUTABLE)
        props = [to_props(r) for r in records]
        rows = [{name: p[name] for name in ("id", "user_id", *_MUTABLE)} for p in props]
        with self.client.transaction():
            found = self.client.run(
                "update",
                f"{WRITER_GUARD}UNWIND $rows AS row MATCH (r:DMRecord {{id: row.id}}) "
                f"WHERE r.user_id = row.user_id {assignments} SET {CONTENT_HEAD} RETURN r.id AS id",
                rows=rows,
                client_version=self.client_version,
            )
            missing = {r.id for r in records} - {row["id"] for row in found}
            if missing and not found:
                refuse_older_writer(self.client, self.client_version)
            if missing:
                raise BackendError(f"record {sorted(missing)[0]} not found for update")

    def delete(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Delete records of this user outright (undo only); returns the ids that existed."""
        rows = self.client.run(
            "delete",
            "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) WHERE r.user_id = $user_id "
            "WITH r, r.id AS id DETACH DELETE r RETURN id",
            ids=list(dict.fromkeys(ids)),
            user_id=user_id,
        )
        return [str(r["id"]) for r in rows]

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        """Records of this user with these ids, in the order asked (missing ids skipped).

        Neo4j reads committed data without locking it, so ``for_update`` takes each
        node's write lock the way Neo4j's manual does against lost updates (a property
        set and removed), in id order so that two such reads cannot deadlock.
        """
        if not ids:
            return []
        lock = "SET r.dm_lock = true REMOVE r.dm_lock " if for_update else ""
        rows = self.client.run(
            "get",
            f"UNWIND $ids AS id MATCH (r:DMRecord {{id: id}}) WHERE r.user_id = $user_id {lock}"
            f"RETURN {RECORD_FIELDS} AS r",
            ids=sorted(set(ids)) if for_update else list(dict.fromkeys(ids)),
            user_id=user_id,
        )
        found = {row["r"]["id"]: from_props(row["r"]) for row in rows}
        return [found[i] for i in ids if i in found]

    def ids_with_prefix(self, user_id: str, prefix: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` record ids of this user starting with ``prefix`` (any status)."""
        rows = self.client.run(
            "ids_with_prefix",
            "MATCH (r:DMRecord) WHERE r.id STARTS WITH $prefix AND r.user_id = $user_id "
            "RETURN r.id AS id ORDER BY id LIMIT $limit",
            prefix=prefix,
            user_id=user_id,
            limit=limit,
        )
        return [str(r["id"]) for r in rows]

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id."""
        if not rowids:
            return {}
        rows = self.client.run(
            "get_by_rowids",
            "UNWIND $rowids AS rid MATCH (r:DMRecord {rowid: rid}) WHERE r.user_id = $user_id "
            f"RETURN r.rowid AS rowid, {RECORD_FIELDS} AS r",
            rowids=[int(r) for r in dict.fromkeys(rowids)],
            user_id=user_id,
        )
        return {int(row["rowid"]): from_props(row["r"]) for row in rows}

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The text of each active record of this user among these row ids (others left out)."""
        if not rowids:
            return {}
        rows = self.client.run(
            "active_texts",
            "UNWIND $rowids AS rid MATCH (r:DMRecord {rowid: rid}) "
            "WHERE r.user_id = $user_id AND r.status = 'active' "
            "RETURN r.rowid AS rowid, r.content AS content",
            rowids=[int(r) for r in dict.fromkeys(rowids)],
            user_id=user_id,
        )
        return {int(row["rowid"]): str(row["content"]) for row in rows}

    def rowids(self, user_id: str, ids: Sequence[str]) -> dict[str, int]:
        """Row ids of this user's records by record id."""
        if not ids:
            return {}
        rows = self.client.run(
            "rowids",
            "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) WHERE r.user_id = $user_id "
            "RETURN r.id AS id, r.rowid AS rowid",
            ids=list(dict.fromkeys(ids)),
            user_id=user_id,
        )
        return {str(r["id"]): int(r["rowid"]) for r in rows}

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
        query = RecordQuery(
            user_id,
            statuses=statuses,
            layers=layers,
            kinds=kinds,
            slot=slot,
            slot_prefix=slot_prefix,
            session_id=session_id,
            pinned=pinned,
            since=since,
            until=until,
            newest_first=newest_first,
            limit=limit,
            offset=offset,
        )
        statement = find_statement(RECORD_FIELDS, query)
        rows = self.client.run("find", statement.cypher, **statement.params)
        return [from_props(row["r"]) for row in rows]

    def find_many(self, queries: Sequence[RecordQuery]) -> list[list[MemoryRecord]]:
        """:meth:`find` for each query, in order: one statement per shape of query (neo4j_find.py)."""
        out: list[list[MemoryRecord]] = [[] for _ in queries]
        for statement in find_many_statements(RECORD_FIELDS, queries):
            for row in self.client.run("find_many", statement.cypher, **statement.params):
                out[statement.of[int(row["n"])]].append(from_props(row["r"]))
        return out

    def session_neighbours(
        self, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        """For each active turn of a session among these rows: the active turns right before and after it.

        One query; see :meth:`RecordStore.session_neighbours`.
        """
        if not rowids:
            return {}
        rows = self.client.run(
            "session_neighbours",
            "UNWIND $rowids AS rid MATCH (s:DMRecord {user_id: $user_id, rowid: rid}) "
            "WHERE s.status = 'active' AND s.kind = $turn AND s.session_id IS NOT NULL "
            f"CALL {{ {NEIGHBOUR_TURN.format(before='<', order='DESC', name='before')} }} "
            f"CALL {{ {NEIGHBOUR_TURN.format(before='>', order='ASC', name='after')} }} "
            "RETURN s.rowid AS rowid, before_rowid, after_rowid",
            rowids=list(dict.fromkeys(int(r) for r in rowids)),
            user_id=user_id,
            turn=Kind.TURN.value,
        )
        return {
            int(r["rowid"]): (_int_or_none(r["before_rowid"]), _int_or_none(r["after_rowid"])) for r in rows
        }

    def twins_of(self, user_id: str, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """For each of these records that has a twin (see :meth:`twins`), the twin's id."""
        if not records:
            return {}
        linked = self.get(user_id, sorted({p for r in records for p in r.provenance}))
        linked.extend(self.derived_from(user_id, sorted({r.id for r in records})))
        out: dict[str, str] = {}
        for record in records:
            for other in linked:
                linked_ids = other.id in record.provenance or record.id in other.provenance
                if other.id != record.id and linked_ids and other.content == record.content:
                    out.setdefault(record.id, other.id)
        return out

    def derived_from(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user whose provenance names any of these ids."""
        if not ids:
            return []
        rows = self.client.run(
            "derived_from",
            "MATCH (r:DMRecord {user_id: $user_id}) WHERE size(r.provenance) > 0 "
            f"AND any(p IN r.provenance WHERE p IN $ids) RETURN {RECORD_FIELDS} AS r",
            user_id=user_id,
            ids=sorted(set(ids)),
        )
        return [from_props(row["r"]) for row in rows]

    def superseded_by_any(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user that one of these records directly superseded."""
        if not ids:
            return []
        rows = self.client.run(
            "superseded_by_any",
            # One seek per id (the planner scans the user's records for `IN $ids` on a young
            # database); a record names one replacer, so no record comes twice.
            "UNWIND $ids AS replacer CALL (replacer) { MATCH (r:DMRecord {superseded_by: replacer}) "
            "USING INDEX r:DMRecord(superseded_by) WHERE r.user_id = $user_id AND r.status = 'superseded' "
            f"RETURN r }} RETURN {RECORD_FIELDS} AS r ORDER BY r.rowid",
            user_id=user_id,
            ids=sorted(set(ids)),
        )
        return [from_props(row["r"]) for row in rows]

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
        rows = self.client.run(
            "filter_rowids",
            "MATCH (r:DMRecord {user_id: $user_id}) WHERE r.status = 'active' "
            "AND ($agent_id IS NULL OR r.agent_id = $agent_id) "
            "AND ($session_id IS NULL OR r.session_id = $session_id) "
            "AND ($layers IS NULL OR r.layer IN $layers) AND ($kinds IS NULL OR r.kind IN $kinds) "
            "RETURN r.rowid AS rowid LIMIT $cap",
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            layers=_values(layers),
            kinds=_values(kinds),
            cap=limit + 1,
        )
        return None if len(rows) > limit else {int(r["rowid"]) for r in rows}

    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Which of these record ids are taken, by any user (ids are unique in a store)."""
        rows = self.client.run(
            "ids_in_use",
            "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) RETURN r.id AS id",
            ids=list(dict.fromkeys(ids)),
        )
        return {str(r["id"]) for r in rows}

    def existing_message_keys(self, user_id: str, session_id: str | None, keys: Sequence[str]) -> set[str]:
        """Which of these adapter message keys (``system["message_key"]``, a node property) are stored."""
        if not keys:
            return set()
        rows = self.client.run(
            "existing_message_keys",
            # One seek per key on the (user_id, message_key) index: `IN $keys` read the user's records.
            "UNWIND $keys AS key CALL (key) { MATCH (r:DMRecord {user_id: $user_id, message_key: key}) "
            "USING INDEX r:DMRecord(user_id, message_key) "
            "WHERE r.session_id = $session_id OR (r.session_id IS NULL AND $session_id IS NULL) "
            "RETURN r.message_key AS found LIMIT 1 } RETURN found AS key",
            user_id=user_id,
            session_id=session_id,
            keys=list(dict.fromkeys(str(k) for k in keys)),
        )
        return {str(r["key"]) for r in rows}

    def touch(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Record that recall returned these records (access time and count)."""
        if ids:
            self.client.run(
                "touch",
                "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) WHERE r.user_id = $user_id "
                "SET r.last_accessed_at = $at, r.access_count = r.access_count + 1",
                ids=list(ids),
                user_id=user_id,
                at=at.isoformat(),
            )

    def count(self, user_id: str | None = None, *, status: Status | None = None) -> int:
        """How many records (of one user, of one status)."""
        value = self.client.scalar(
            "count",
            "MATCH (r:DMRecord) WHERE ($user_id IS NULL OR r.user_id = $user_id) "
            "AND ($status IS NULL OR r.status = $status) RETURN count(r)",
            user_id=user_id,
            status=None if status is None else status.value,
        )
        return int(value or 0)

    def slots(self, prefix: str) -> list[str]:
        """Distinct slots of active records, across users, starting with ``prefix``."""
        rows = self.client.run(
            "slots",
            "MATCH (r:DMRecord) WHERE r.status = 'active' AND r.slot STARTS WITH $prefix "
            "RETURN DISTINCT r.slot AS slot ORDER BY slot",
            prefix=prefix,
        )
        return [str(r["slot"]) for r in rows]

    def users(self) -> list[str]:
        """Every user id with at least one record."""
        rows = self.client.run("users", "MATCH (r:DMRecord) RETURN DISTINCT r.user_id AS u ORDER BY u")
        return [str(r["u"]) for r in rows]

    def history_chain(self, user_id: str, record_id: str) -> list[MemoryRecord]:
        """Every record of the same slot or supersede chain as this one, oldest first."""
        (record,) = self.get(user_id, [record_id]) or (None,)
        if record is None:
            return []
        chain: dict[str, MemoryRecord] = {record.id: record}
        if record.slot:
            chain.update((r.id, r) for r in self.find(user_id, statuses=None, slot=record.slot))
        frontier = list(chain)
        while frontier:  # follow superseded_by links both ways
            rows = self.client.run(
                "history_chain",
                _HISTORY_STEP,
                user_id=user_id,
                ids=frontier,
            )
            frontier = []
            for row in rows:
                found = from_props(row["r"])
                if found.id not in chain:
                    chain[found.id] = found
                    frontier.append(found.id)
        # Equal times (an edited memory and its earlier text): the version that ended first.
        return sorted(chain.values(), key=lambda r: (r.created_at, r.event_time, r.valid_to or _END))


_END = datetime.max.replace(tzinfo=UTC)


def _values(items: Sequence[Status] | Sequence[Layer] | Sequence[Kind] | None) -> list[str] | None:
    return None if items is None else [item.value for item in items]
