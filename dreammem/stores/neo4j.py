"""The graph on a Neo4j server, through the official ``neo4j`` driver.

Model (labels and relationship types are constants; every node and edge has a
``user_id`` property and every query takes the user id as a parameter)::

    (:DreamMemMemory {user_id, id, id_hash, event_time, rowid})   rowid: the record's, ties
        -[:MENTIONS {user_id}]->
    (:DreamMemEntity {user_id, key, key_hash, name, kind})
        -[:RELATES_TO {user_id, memory_hash, relation}]-> (:DreamMemEntity)
    (:DreamMemUser {user_id, memories})      a counter of the user's memory nodes

Nodes are found by a SHA-256 of their id or key, so keys of any length are stored
(Neo4j's indexes cap an indexed value at about 8 kB).

Queries are parameterised Cypher only, never built from content. Writes are
batched with ``UNWIND``, one transaction per call (the caller's open one, when the
connection has one in this thread). The connection is a
:class:`~dreammem.stores.neo4j_client.Neo4jClient`: it bounds every call (connect,
handshake and pooled connection share ``timeout``, default 5 s, so a server that
accepts connections and never answers fails there; queries carry ``query_timeout``,
default 30 s, as their server-side limit), opens a circuit breaker once the server
is found unreachable (later calls fail at once: the recall's graph path drops out as
``degraded``, writes wait in the outbox, until a background probe sees it answer
again), maps driver errors onto DreamMem's (an unreachable server is a retryable
:class:`~dreammem.errors.GraphUnavailableError`) and asks the server to send no
notifications (the driver would log them on every recall). Uniqueness constraints
and indexes are created idempotently before the first query.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from dreammem.stores.base import GraphCapability, GraphEntity, GraphItem, GraphStats, GraphStore
from dreammem.stores.neo4j_client import Neo4jClient

try:
    import neo4j
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("Neo4jGraphStore needs the neo4j driver: pip install 'dreammem[neo4j]'") from exc

__all__ = ["Neo4jGraphStore"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# Nodes are looked up by a SHA-256 of their id/key: Neo4j's range indexes cap
# an indexed value at about 8 kB, and keys are user data of any length.
_SCHEMA = (
    "CREATE CONSTRAINT dreammem_memory_id IF NOT EXISTS "
    "FOR (m:DreamMemMemory) REQUIRE (m.user_id, m.id_hash) IS UNIQUE",
    "CREATE CONSTRAINT dreammem_entity_key IF NOT EXISTS "
    "FOR (e:DreamMemEntity) REQUIRE (e.user_id, e.key_hash) IS UNIQUE",
    "CREATE CONSTRAINT dreammem_user IF NOT EXISTS FOR (u:DreamMemUser) REQUIRE u.user_id IS UNIQUE",
    "CREATE INDEX dreammem_memory_user IF NOT EXISTS FOR (m:DreamMemMemory) ON (m.user_id)",
    "CREATE INDEX dreammem_entity_user IF NOT EXISTS FOR (e:DreamMemEntity) ON (e.user_id)",
    "CREATE INDEX dreammem_relates_memory IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() ON (r.user_id, r.memory_hash)",
    "CALL db.awaitIndexes(300)",
)

# A per-user counter of memory nodes: counting them through the index on every
# query costs O(memories); the traversal weights only need the number.
_COUNT_MEMORIES = """
MERGE (u:DreamMemUser {user_id: $user_id})
SET u.memories = coalesce(u.memories, 0) + $delta
"""

_EXISTING = """
UNWIND $ids AS h
MATCH (m:DreamMemMemory {user_id: $user_id, id_hash: h})
RETURN h
"""

_MERGE_MENTIONS = """
UNWIND $rows AS row
MERGE (m:DreamMemMemory {user_id: $user_id, id_hash: row.id_hash})
  ON CREATE SET m.id = row.id
SET m.event_time = row.time, m.rowid = row.rowid
WITH m, row
UNWIND row.entities AS ent
MERGE (e:DreamMemEntity {user_id: $user_id, key_hash: ent.key_hash})
  ON CREATE SET e.key = ent.key, e.name = ent.name, e.kind = ent.kind
MERGE (m)-[r:MENTIONS]->(e)
  ON CREATE SET r.user_id = $user_id
"""

_DROP_STALE_MENTIONS = """
UNWIND $rows AS row
MATCH (m:DreamMemMemory {user_id: $user_id, id_hash: row.id_hash})
      -[r:MENTIONS]->(e:DreamMemEntity {user_id: $user_id})
WHERE NOT e.key_hash IN [ent IN row.entities | ent.key_hash]
DELETE r
RETURN collect(DISTINCT e.key_hash) AS keys
"""

_DROP_RELATIONS = """
MATCH ()-[r:RELATES_TO]->()
WHERE r.user_id = $user_id AND r.memory_hash IN $ids
DELETE r
"""

_ADD_RELATIONS = """
UNWIND $relations AS rel
MATCH (a:DreamMemEntity {user_id: $user_id, key_hash: rel.source})
MATCH (b:DreamMemEntity {user_id: $user_id, key_hash: rel.target})
MERGE (a)-[r:RELATES_TO {user_id: $user_id, memory_hash: rel.memory_hash, relation: rel.relation}]->(b)
"""

_DROP_MEMORIES = """
UNWIND $ids AS id
MATCH (m:DreamMemMemory {user_id: $user_id, id_hash: id})
OPTIONAL MATCH (m)-[:MENTIONS]->(e:DreamMemEntity {user_id: $user_id})
WITH m, collect(e.key_hash) AS keys
DETACH DELETE m
RETURN keys
"""

_DROP_ORPHANS = """
UNWIND $keys AS key
MATCH (e:DreamMemEntity {user_id: $user_id, key_hash: key})
WHERE NOT EXISTS { (e)<-[:MENTIONS]-(:DreamMemMemory) }
DETACH DELETE e
"""

_CLEAR_USER = (
    "MATCH (u:DreamMemUser {user_id: $user_id}) DELETE u",
    "MATCH (n:DreamMemMemory {user_id: $user_id}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
    "MATCH (n:DreamMemEntity {user_id: $user_id}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
)
_CLEAR_ALL = (
    "MATCH (u:DreamMemUser) DELETE u",
    "MATCH (n:DreamMemMemory) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
    "MATCH (n:DreamMemEntity) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
)

_ENTITY_STATS = """
CALL () { OPTIONAL MATCH (u:DreamMemUser {user_id: $user_id}) RETURN coalesce(u.memories, 0) AS total }
CALL () {
  UNWIND $keys AS key
  MATCH (e:DreamMemEntity {user_id: $user_id, key_hash: key})
  RETURN collect([e.key, COUNT { (e)<-[:MENTIONS]-(:DreamMemMemory) }]) AS dfs
}
RETURN total, dfs
"""

_MEMORIES_OF = """
UNWIND range(0, size($keys) - 1) AS i
MATCH (e:DreamMemEntity {user_id: $user_id, key_hash: $keys[i]})
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(m:DreamMemMemory {user_id: $user_id})
  RETURN m.id AS id, m.event_time AS t, coalesce(m.rowid, -1) AS o
  ORDER BY t DESC, o DESC, id DESC
  LIMIT $per_entity
}
RETURN i, e.key AS key, id
ORDER BY i ASC, t DESC, o DESC, id DESC
"""

_ENTITIES_OF = """
UNWIND $ids AS id_hash
MATCH (m:DreamMemMemory {user_id: $user_id, id_hash: id_hash})
      -[:MENTIONS]->(e:DreamMemEntity {user_id: $user_id})
RETURN m.id AS id, e.key AS key, e.name AS name, e.kind AS kind
"""

_RELATED = """
UNWIND $keys AS key
MATCH (e:DreamMemEntity {user_id: $user_id, key_hash: key})
      -[r:RELATES_TO {user_id: $user_id}]-(o:DreamMemEntity {user_id: $user_id})
RETURN DISTINCT e.key AS key, r.relation AS relation, o.key AS other
"""

_STATS = """
CALL () {
  MATCH (m:DreamMemMemory) WHERE $user_id IS NULL OR m.user_id = $user_id
  RETURN count(m) AS memories
}
CALL () {
  MATCH (e:DreamMemEntity) WHERE $user_id IS NULL OR e.user_id = $user_id
  RETURN count(e) AS entities
}
CALL () {
  MATCH (:DreamMemMemory)-[r:MENTIONS]->(:DreamMemEntity)
  WHERE $user_id IS NULL OR r.user_id = $user_id
  RETURN count(r) AS mentions
}
CALL () {
  MATCH (:DreamMemEntity)-[r:RELATES_TO]->(:DreamMemEntity)
  WHERE $user_id IS NULL OR r.user_id = $user_id
  RETURN count(r) AS relations
}
RETURN memories, entities, mentions, relations
"""

_BATCH = 1000  # memories per write transaction


def _h(value: str) -> str:
    """The fixed-size lookup key of an id or entity key."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _hashes(values: Sequence[str]) -> list[str]:
    return [_h(v) for v in dict.fromkeys(values)]


def _rows(items: Sequence[GraphItem]) -> list[dict[str, Any]]:
    return [
        {
            "id": item.memory_id,
            "id_hash": _h(item.memory_id),
            "time": item.time_key,
            "rowid": item.rowid,
            "entities": [
                {"key": e.key, "key_hash": _h(e.key), "name": e.name, "kind": e.kind}
                for e in item.mentions().values()
            ],
        }
        for item in items
    ]


class Neo4jGraphStore(GraphStore):
    """A :class:`~dreammem.stores.base.GraphStore` on a Neo4j 5 server.

    The driver connects lazily: constructing the store needs no running server,
    and a server that is down surfaces as :class:`~dreammem.errors.GraphUnavailableError`
    on the first call (the facade then queues graph writes in its outbox).

    Args:
        uri: The Bolt URI, e.g. ``bolt://127.0.0.1:7687``.
        auth: ``(user, password)``, or None for a server with auth disabled.
        database: The database to use.
        timeout: Seconds a call may wait to reach the server: to connect, for the
            handshake and a pooled connection (a server that never answers fails here).
        query_timeout: Seconds a read may run on the server before it stops it (a
            retryable error); ``None`` for no limit.
        connection_timeout: Seconds to wait for a TCP connection (default: ``timeout``).
        retry_after: Seconds between background probes once the server was found
            unreachable; calls fail at once meanwhile.

    Raises:
        ConfigError: the URI is not a valid Neo4j URI, or a timeout is not positive.
    """

    capabilities = frozenset({GraphCapability.RELATIONS, GraphCapability.SHARED})

    def __init__(
        self,
        uri: str,
        *,
        auth: tuple[str, str] | None = None,
        database: str = "neo4j",
        timeout: float = 5.0,
        query_timeout: float | None = 30.0,
        connection_timeout: float | None = None,
        retry_after: float = 10.0,
    ) -> None:
        client = Neo4jClient(
            uri,
            auth=auth,
            database=database,
            timeout=timeout,
            query_timeout=query_timeout,
            connection_timeout=connection_timeout,
            retry_after=retry_after,
        )
        self._attach(client, owned=True)

    def _attach(self, client: Neo4jClient, *, owned: bool) -> None:
        """Use ``client`` for every call; ``owned``: :meth:`close` closes it."""
        self._client = client
        self._owned = owned
        self.uri = client.uri
        self.database = client.database
        self.timeout = client.timeout
        self._schema_lock = threading.Lock()
        self._schema_ready = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r}, database={self.database!r})"

    # -- plumbing -----------------------------------------------------------------

    def _ensure_schema(self) -> None:
        if self._schema_ready:
            return
        with self._schema_lock:
            if not self._schema_ready:
                self._client.schema(_SCHEMA)
                self._schema_ready = True

    def _read(self, action: str, query: str, **params: Any) -> list[neo4j.Record]:
        self._ensure_schema()
        return self._client.run(action, query, **params)

    def _write(self, action: str, work: Callable[[neo4j.Transaction], T]) -> T:
        """Run ``work`` in one write transaction (the caller's open one, if any)."""
        self._ensure_schema()
        with self._client.transaction():
            return self._client.within(action, work)

    def retry_now(self) -> None:
        """Let the next call go to the server even while it is failing fast."""
        self._client.retry_now()

    def verify(self) -> None:
        """Check that the server answers (and create the schema).

        Raises:
            GraphUnavailableError: the server cannot be reached.
        """
        self.retry_now()
        with self._client.guarded("verify"):
            self._client.driver.verify_connectivity()
        self._ensure_schema()

    # -- writes ---------------------------------------------------------------------

    def upsert(self, user_id: str, items: Sequence[GraphItem]) -> None:
        """Add or replace the nodes and edges of these memories (idempotent)."""
        latest = list({item.memory_id: item for item in items}.values())
        self._in_batches("upsert", self._upsert_batch, user_id, latest)

    @staticmethod
    def _upsert_batch(tx: neo4j.Transaction, user_id: str, values: list[GraphItem]) -> None:
        items = values
        rows = _rows(items)
        ids = [row["id_hash"] for row in rows]
        # Only memories the graph already holds can have edges to replace.
        existing = {r["h"] for r in tx.run(_EXISTING, ids=ids, user_id=user_id)}
        tx.run(_MERGE_MENTIONS, rows=rows, user_id=user_id).consume()
        if len(rows) > len(existing):
            tx.run(_COUNT_MEMORIES, delta=len(rows) - len(existing), user_id=user_id).consume()
        stale: list[str] = []
        if existing:
            old_rows = [row for row in rows if row["id_hash"] in existing]
            record = tx.run(_DROP_STALE_MENTIONS, rows=old_rows, user_id=user_id).single()
            stale = list(record["keys"]) if record is not None else []
            tx.run(_DROP_RELATIONS, ids=sorted(existing), user_id=user_id).consume()
        relations = [
            {
                "memory_hash": _h(item.memory_id),
                "source": _h(r.source),
                "relation": r.relation,
                "target": _h(r.target),
            }
            for item in items
            for r in item.relations
        ]
        if relations:
            tx.run(_ADD_RELATIONS, relations=relations, user_id=user_id).consume()
        if stale:
            tx.run(_DROP_ORPHANS, keys=stale, user_id=user_id).consume()

    def remove(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """Remove these memory nodes, their edges, and entities left orphaned."""
        self._in_batches("remove", self._remove_batch, user_id, list(dict.fromkeys(memory_ids)))

    def _in_batches(
        self,
        action: str,
        work: Callable[[neo4j.Transaction, str, list[Any]], None],
        user_id: str,
        values: list[Any],
    ) -> None:
        """One write transaction per ``_BATCH`` values."""
        for start in range(0, len(values), _BATCH):
            batch = values[start : start + _BATCH]

            def run(tx: neo4j.Transaction, batch: list[Any] = batch) -> None:
                work(tx, user_id, batch)

            self._write(action, run)

    @staticmethod
    def _remove_batch(tx: neo4j.Transaction, user_id: str, values: list[str]) -> None:
        ids = _hashes(values)
        tx.run(_DROP_RELATIONS, ids=ids, user_id=user_id).consume()
        dropped = list(tx.run(_DROP_MEMORIES, ids=ids, user_id=user_id))
        if dropped:
            tx.run(_COUNT_MEMORIES, delta=-len(dropped), user_id=user_id).consume()
        keys = sorted({k for record in dropped for k in record["keys"]})
        if keys:
            tx.run(_DROP_ORPHANS, keys=keys, user_id=user_id).consume()

    def clear(self, user_id: str | None = None) -> None:
        """Remove one user's graph, or every DreamMem node (other data is left alone)."""
        self._ensure_schema()
        # CALL ... IN TRANSACTIONS needs an auto-commit transaction (no unit open).
        for statement in _CLEAR_ALL if user_id is None else _CLEAR_USER:
            self._client.run("clear", statement, user_id=user_id)

    # -- reads ----------------------------------------------------------------------

    def entity_stats(self, user_id: str, keys: Sequence[str]) -> tuple[int, dict[str, int]]:
        """The user's memory count and the mention count of each known key."""
        rows = self._read("entity_stats", _ENTITY_STATS, user_id=user_id, keys=_hashes(keys))
        return int(rows[0]["total"]), {str(k): int(df) for k, df in rows[0]["dfs"]}

    def memories_of(self, user_id: str, keys: Sequence[str], *, per_entity: int) -> list[tuple[str, str]]:
        """Up to ``per_entity`` memories per key, newest first, keys in the order given."""
        unique = list(dict.fromkeys(keys))
        if not unique:
            return []
        rows = self._read(
            "memories_of", _MEMORIES_OF, user_id=user_id, keys=_hashes(unique), per_entity=per_entity
        )
        return [(str(r["key"]), str(r["id"])) for r in rows]

    def entities_of(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, tuple[GraphEntity, ...]]:
        """The entities each of these memories mentions, sorted by key."""
        rows = self._read("entities_of", _ENTITIES_OF, user_id=user_id, ids=_hashes(memory_ids))
        found: dict[str, list[GraphEntity]] = {}
        for r in rows:
            found.setdefault(r["id"], []).append(GraphEntity(key=r["key"], name=r["name"], kind=r["kind"]))
        return {mid: tuple(sorted(ents, key=lambda e: e.key)) for mid, ents in found.items()}

    def related(self, user_id: str, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """Relation edges touching these keys, as ``(key, relation, other)``, sorted."""
        rows = self._read("related", _RELATED, user_id=user_id, keys=_hashes(keys))
        return sorted({(r["key"], r["relation"], r["other"]) for r in rows})

    def stats(self, user_id: str | None = None) -> GraphStats:
        """Node and edge counts of one user's graph, or of every DreamMem node."""
        (row,) = self._read("stats", _STATS, user_id=user_id)
        return GraphStats(*(int(row[name]) for name in ("memories", "entities", "mentions", "relations")))

    def close(self) -> None:
        """Close the driver and its connection pool (unless the connection is shared)."""
        if self._owned:
            self._client.close()
