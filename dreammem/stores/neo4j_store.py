"""The record store on a Neo4j server: records, full text, embeddings and the dream's data in one database.

Nothing lives in a local file, so any number of processes on any number of hosts
share one memory. The store is composed of one class per job:

* :mod:`~dreammem.stores.neo4j_client`: driver, timeouts, breaker, per-thread transactions;
* :mod:`~dreammem.stores.neo4j_records`: the record nodes;
* :mod:`~dreammem.stores.neo4j_keyword`: the Lucene full-text index over pre-tokenised terms;
* :mod:`~dreammem.stores.neo4j_vectors`: embeddings and the Neo4j vector index;
* :mod:`~dreammem.stores.neo4j_dreams`: queue, task state, dream log, meta;
* :mod:`~dreammem.stores.neo4j_surroundings`: what a recall reads about its candidates, in one query;
* :mod:`~dreammem.stores.neo4j_times`: the windows records' relative dates point at;
* :mod:`~dreammem.stores.neo4j_twins`: the same-text records linked by provenance;
* :mod:`~dreammem.stores.neo4j_find`: the Cypher of ``find`` and ``find_many``;

and this module adds the schema and erasure. Every query is parameterised Cypher
and names the user (the few keyed by a store-unique row id or dream id check it
where the contract passes one).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from dreammem.stores.base import REQUIRED_CAPABILITIES, RecordCapability, RecordStore
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_dreams import DreamNodes
from dreammem.stores.neo4j_keyword import TEXT_INDEX, KeywordNodes
from dreammem.stores.neo4j_records import CONTENT_HEAD, TERMS_FORMAT, RecordNodes
from dreammem.stores.neo4j_surroundings import SurroundingNodes
from dreammem.stores.neo4j_times import TimeNodes
from dreammem.stores.neo4j_twins import TwinNodes
from dreammem.stores.neo4j_vectors import EmbeddingNodes
from dreammem.stores.neo4j_versions import (
    MIN_WRITER_VERSION,
    SCHEMA_VERSION,
    min_writer,
    raise_min_writer,
)
from dreammem.stores.sqlite.erasure import scrub_text
from dreammem.stores.touch_behind import TouchBehind
from dreammem.system_meta import MESSAGE_KEY, NOTES_VERSION, split_later, split_legacy
from dreammem.types import MemoryRecord

__all__ = ["SCHEMA_VERSION", "Neo4jRecordStore"]

log = logging.getLogger(__name__)

_RETOKENISE_BATCH = 1000


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


_SCHEMA = (
    "CREATE CONSTRAINT dm_record_id IF NOT EXISTS FOR (r:DMRecord) REQUIRE r.id IS UNIQUE",
    "CREATE CONSTRAINT dm_record_rowid IF NOT EXISTS FOR (r:DMRecord) REQUIRE r.rowid IS UNIQUE",
    "CREATE CONSTRAINT dm_counter IF NOT EXISTS FOR (c:DMCounter) REQUIRE c.name IS UNIQUE",
    "CREATE CONSTRAINT dm_meta IF NOT EXISTS FOR (m:DMMeta) REQUIRE m.key IS UNIQUE",
    "CREATE CONSTRAINT dm_task_state IF NOT EXISTS FOR (t:DMTaskState) REQUIRE t.key IS UNIQUE",
    "CREATE CONSTRAINT dm_dream IF NOT EXISTS FOR (d:DMDream) REQUIRE d.id IS UNIQUE",
    "CREATE CONSTRAINT dm_lease IF NOT EXISTS FOR (l:DMLease) REQUIRE l.name IS UNIQUE",
    "CREATE INDEX dm_record_user IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id)",
    # A turn's neighbours in its session (the reply path, every recall): without it each seed
    # read every record of its user (20 seeds: 135 ms at 2,000 records, 5-9 ms with it).
    "CREATE INDEX dm_record_session IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id, r.session_id)",
    # Records with the same text (a turn's twins, at every superseding write): without it each
    # lookup read every record of its user (6 ms at 4,000 records, ~360 lookups per 500 turns).
    "CREATE INDEX dm_record_content_head IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id, r.content_head)",
    # The records a recall's candidates replaced, and the user's pinned records (the gathered
    # read, every recall): without them both read every record of the user (~45,000 db hits,
    # ~15 ms at 10,000 records).
    "CREATE INDEX dm_record_superseded_by IF NOT EXISTS FOR (r:DMRecord) ON (r.superseded_by)",
    "CREATE INDEX dm_record_pinned IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id, r.pinned)",
    # The user's dream queue (every write checks its size) and the records in a recall's time
    # window: without them both read every record of the user.
    "CREATE INDEX dm_record_queued IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id, r.queued_at)",
    "CREATE INDEX dm_record_event_time IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id, r.event_time)",
    # An adapter's message keys (every framework write): only records with a key are in it.
    "CREATE INDEX dm_record_message_key IF NOT EXISTS FOR (r:DMRecord) ON (r.user_id, r.message_key)",
    "CREATE INDEX dm_task_user IF NOT EXISTS FOR (t:DMTaskState) ON (t.user_id)",
    "CREATE INDEX dm_dream_user IF NOT EXISTS FOR (d:DMDream) ON (d.user_id)",
    "CREATE INDEX dm_index_user IF NOT EXISTS FOR (m:DMIndexRow) ON (m.user_id)",
    f"CREATE FULLTEXT INDEX {TEXT_INDEX} IF NOT EXISTS FOR (r:DMRecord) "
    "ON EACH [r.terms, r.context, r.scope] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}}",
    "CALL db.awaitIndexes(300)",
)


class Neo4jRecordStore(
    SurroundingNodes,
    TimeNodes,
    KeywordNodes,
    EmbeddingNodes,
    DreamNodes,
    TwinNodes,
    RecordNodes,
    RecordStore,
):
    """The :class:`~dreammem.stores.base.RecordStore` in one Neo4j database.

    Opening it creates the constraints and indexes (idempotent, safe when several
    processes open one database at once) and needs the server to answer. A database
    that needs a newer DreamMem to write to it opens for reading; writing records
    raises :class:`~dreammem.errors.StoreVersionError` (see
    :mod:`~dreammem.stores.neo4j_versions`).

    Args:
        client: The server connection (the store closes it).
        context_weight: The boost of the keyword context field (own words weigh 1.0).
        client_version: The schema version this client writes (default :data:`SCHEMA_VERSION`;
            tools and tests pass another to act as another release).

    Raises:
        GraphUnavailableError: the server cannot be reached (retryable).
        BackendError: the server refused the schema.
    """

    capabilities = REQUIRED_CAPABILITIES | {
        RecordCapability.SHARED,
        RecordCapability.GATHERED_READS,
        RecordCapability.GROUNDED_TIMES,
    }

    def __init__(
        self, client: Neo4jClient, *, context_weight: float = 0.5, client_version: int = SCHEMA_VERSION
    ) -> None:
        KeywordNodes.__init__(self, client, context_weight)
        EmbeddingNodes.__init__(self, client)
        self.client = client
        self.client_version = client_version
        self._touches = TouchBehind(self.touch)
        client.schema(_SCHEMA)
        if min_writer(client) > client_version:
            log.warning(
                "the Neo4j database at %s needs a newer DreamMem to write to it: opened for reading only",
                client.uri,
            )
            return
        self._upgrade()
        raise_min_writer(client, min(client_version, MIN_WRITER_VERSION))

    def _upgrade(self) -> None:
        """Create the version node, or bring an older database to :data:`SCHEMA_VERSION`.

        Version 2: nodes whose terms are still the engine's tokens (no ``terms_format``)
        get FTS5's. Version 3: nodes without ``content_head`` get it (the index that finds
        same-text records holds it). Version 4: nodes without ``system`` get the library's
        notes moved out of their ``metadata`` (:func:`~dreammem.system_meta.split_legacy`,
        as SQLite's migration 17). Version 5: nodes without ``notes_version`` get an adapter
        message's key and a keyed entry moved too (:func:`~dreammem.system_meta.split_later`,
        as SQLite's migration 18). Version 6: nothing to convert: a node without a grounded window
        is grounded on first use and written back (:mod:`~dreammem.stores.neo4j_times`).
        ``_RETOKENISE_BATCH`` nodes per transaction; a node
        converted already is never converted again, so processes opening the database at
        once may share the work, and an interrupted upgrade resumes on the next open.
        """
        version = self.client.scalar(
            "schema_version",
            "MERGE (m:DMMeta {key: 'schema_version'}) ON CREATE SET m.value = $version RETURN m.value",
            version=str(self.client_version),
        )
        if int(version) >= self.client_version:
            return
        while True:
            with self.transaction():
                rows = self.client.run(
                    "upgrade",
                    "MATCH (r:DMRecord) WHERE r.terms_format IS NULL RETURN r.rowid AS rowid, "
                    "coalesce(r.terms, '') AS terms, coalesce(r.context, '') AS context LIMIT $batch",
                    batch=_RETOKENISE_BATCH,
                )
                if not rows:
                    break
                texts = self.index_texts([text for r in rows for text in (r["terms"], r["context"])])
                self.client.run(
                    "upgrade",
                    "UNWIND $rows AS row MATCH (r:DMRecord {rowid: row.rowid}) WHERE r.terms_format IS NULL "
                    "SET r.terms = row.terms, r.context = row.context, r.terms_format = $format",
                    rows=[
                        {"rowid": r["rowid"], "terms": texts[2 * i], "context": texts[2 * i + 1]}
                        for i, r in enumerate(rows)
                    ],
                    format=TERMS_FORMAT,
                )
        while self.client.scalar(
            "upgrade",
            "MATCH (r:DMRecord) WHERE r.content_head IS NULL WITH r LIMIT $batch "
            f"SET {CONTENT_HEAD} RETURN count(r)",
            batch=_RETOKENISE_BATCH,
        ):
            pass
        while self._move_system_notes():
            pass
        while self._move_later_notes():
            pass
        self.set_meta("schema_version", str(self.client_version))

    def _move_system_notes(self) -> int:
        """Move the library's notes out of the metadata of up to a batch of older nodes; how many."""
        with self.transaction():
            rows = self.client.run(
                "upgrade",
                "MATCH (r:DMRecord) WHERE r.system IS NULL RETURN r.rowid AS rowid, r.metadata AS metadata "
                "LIMIT $batch",
                batch=_RETOKENISE_BATCH,
            )
            moved = []
            for row in rows:
                caller, system = split_legacy(json.loads(row["metadata"] or "{}"))
                moved.append({"rowid": row["rowid"], "metadata": _json(caller), "system": _json(system)})
            if moved:  # only nodes still unconverted: another process may share the work
                self.client.run(
                    "upgrade",
                    "UNWIND $rows AS row MATCH (r:DMRecord {rowid: row.rowid}) WHERE r.system IS NULL "
                    "SET r.metadata = row.metadata, r.system = row.system",
                    rows=moved,
                )
        return len(rows)

    def _move_later_notes(self) -> int:
        """Move message keys and keyed entries into ``system`` on up to a batch of older nodes; how many."""
        with self.transaction():
            rows = self.client.run(
                "upgrade",
                "MATCH (r:DMRecord) WHERE r.notes_version IS NULL "
                "RETURN r.rowid AS rowid, r.metadata AS metadata, r.system AS system LIMIT $batch",
                batch=_RETOKENISE_BATCH,
            )
            moved = []
            for row in rows:
                caller, later = split_later(json.loads(row["metadata"] or "{}"))
                system = {**json.loads(row["system"] or "{}"), **later}
                fields = {"metadata": _json(caller), "system": _json(system), "key": system.get(MESSAGE_KEY)}
                moved.append({"rowid": row["rowid"], **fields})
            if moved:  # only nodes still unconverted: another process may share the work
                self.client.run(
                    "upgrade",
                    "UNWIND $rows AS row MATCH (r:DMRecord {rowid: row.rowid}) WHERE r.notes_version IS NULL "
                    "SET r.metadata = row.metadata, r.system = row.system, r.message_key = row.key, "
                    "r.notes_version = $version",
                    rows=moved,
                    version=NOTES_VERSION,
                )
        return len(rows)

    def insert(
        self,
        records: Sequence[MemoryRecord],
        match_texts: Sequence[str],
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Insert new records with their keyword terms (and context terms); returns their row ids."""
        own = self.index_texts(match_texts)
        around = None if contexts is None else self.index_texts(contexts)
        rowids = RecordNodes.insert(self, records, own, around)
        self._note_writes(len(rowids))
        return rowids

    def __repr__(self) -> str:
        return f"Neo4jRecordStore({self.client.uri!r}, database={self.client.database!r})"

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One atomic unit of work in this thread; nested calls join the outer one."""
        with self.client.transaction() as tx:
            yield tx

    @property
    def schema_version(self) -> int:
        """The schema version of the database."""
        return int(self.get_meta("schema_version") or 0)

    def touch_soon(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """:meth:`touch`, written by a thread behind the caller (recall does not wait for it).

        Every access given is written before :meth:`close` returns.
        """
        self._touches.add(user_id, ids, at)

    def close(self) -> None:
        """Write the accesses still waiting, then close the connection (idempotent).

        Later calls raise ``BackendError``.
        """
        try:
            self._touches.close()
        finally:
            self.client.close()

    # -- erasure

    def erase_records(self, user_id: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[list[str], int]:
        """Hard-delete these records, their memory-index rows, and their quotes in the dream log."""
        scrubbed = 0
        with self.transaction():
            self.client.run(
                "erase_records",
                "MATCH (m:DMIndexRow {user_id: $user_id}) WHERE m.record_id IN $ids DELETE m",
                user_id=user_id,
                ids=list(ids),
            )
            erased = self.delete(user_id, ids)
            dreams = self.client.run(
                "erase_records",
                "MATCH (d:DMDream {user_id: $user_id}) RETURN d.id AS id, d.report AS report, d.undo AS undo",
                user_id=user_id,
            )
            for row in dreams:
                report, undo = row["report"], row["undo"]
                clean = scrub_text(report, set(ids), texts), scrub_text(undo, set(ids), texts)
                if clean != (report, undo):
                    self.client.run(
                        "erase_records",
                        "MATCH (d:DMDream {id: $id}) WHERE d.user_id = $user_id "
                        "SET d.report = $report, d.undo = $undo",
                        id=row["id"],
                        user_id=user_id,
                        report=clean[0],
                        undo=clean[1],
                    )
                    scrubbed += 1
        return erased, scrubbed

    def erase_user(self, user_id: str) -> int:
        """Hard-delete every node of this user the store owns; returns the dream-log entries deleted."""
        with self.transaction():
            for label in ("DMRecord", "DMIndexRow", "DMTaskState", "DMLease"):
                self.client.run(
                    "erase_user", f"MATCH (n:{label} {{user_id: $user_id}}) DETACH DELETE n", user_id=user_id
                )
            dreams = self.client.scalar(
                "erase_user",
                "MATCH (d:DMDream {user_id: $user_id}) WITH collect(d) AS ds "
                "FOREACH (d IN ds | DELETE d) RETURN size(ds)",
                user_id=user_id,
            )
        return int(dreams or 0)

    def compact(self) -> bool:
        """Nothing to run: Neo4j reuses the space of deleted nodes for later writes.

        The deleted bytes are not overwritten at once: they stay in the store files
        until reused and in the server's transaction logs until those rotate
        (``db.tx_log.rotation.retention_policy``). Always True.
        """
        return True
