"""Ordered schema migrations for the SQLite store.

Each migration has a number, a name and the SQL that takes the schema from the
previous version to its own. Applied migrations are recorded in ``schema_version``;
opening a store applies the missing ones in order, in one write transaction
(``BEGIN IMMEDIATE``) that reads the applied versions again once it holds the lock,
so processes opening a new store at the same time apply each migration exactly once.
Never edit a migration that has shipped: append a new one.
"""

from __future__ import annotations

from dataclasses import dataclass

from dreammem.system_meta import LEGACY_KEYS

__all__ = ["MIGRATIONS", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step."""

    version: int
    name: str
    sql: str


_LEGACY_LIST = ", ".join(f"'{key}'" for key in LEGACY_KEYS)
_LEGACY_PATHS = ", ".join(f"'$.{key}'" for key in LEGACY_KEYS)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "records_fts_vectors_queue",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE records (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            session_id TEXT,
            layer TEXT NOT NULL,
            kind TEXT NOT NULL,
            source TEXT NOT NULL,
            role TEXT,
            content TEXT NOT NULL,
            confidence REAL NOT NULL,
            importance INTEGER NOT NULL,
            priority INTEGER NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            event_time TEXT NOT NULL,
            last_accessed_at TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            superseded_by TEXT,
            valid_to TEXT,
            provenance TEXT NOT NULL DEFAULT '[]',
            entities TEXT NOT NULL DEFAULT '[]',
            slot TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX records_user_status_time ON records(user_id, status, event_time);
        CREATE INDEX records_user_session_time ON records(user_id, session_id, event_time);
        CREATE INDEX records_user_slot ON records(user_id, slot) WHERE slot IS NOT NULL;
        CREATE VIRTUAL TABLE records_fts USING fts5(
            terms, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE vectors (
            rowid INTEGER PRIMARY KEY REFERENCES records(rowid) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vec BLOB NOT NULL
        );
        CREATE TABLE queue (
            record_id TEXT PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            enqueued_at TEXT NOT NULL
        );
        CREATE INDEX queue_user ON queue(user_id, enqueued_at);
        CREATE TABLE task_state (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            state TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, session_id)
        );
        """,
    ),
    Migration(
        2,
        "graph_tables",
        """
        CREATE TABLE graph_memories (
            user_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            event_time TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (user_id, memory_id)
        ) WITHOUT ROWID;
        CREATE TABLE graph_entities (
            user_id TEXT NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            df INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (user_id, key)
        ) WITHOUT ROWID;
        CREATE TABLE graph_mentions (
            user_id TEXT NOT NULL,
            entity_key TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            event_time TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (user_id, entity_key, memory_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_mentions_memory ON graph_mentions(user_id, memory_id);
        CREATE INDEX graph_mentions_recent ON graph_mentions(user_id, entity_key, event_time, memory_id);
        CREATE TABLE graph_relations (
            user_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            source TEXT NOT NULL,
            relation TEXT NOT NULL,
            target TEXT NOT NULL,
            PRIMARY KEY (user_id, memory_id, source, relation, target)
        ) WITHOUT ROWID;
        CREATE TABLE graph_users (
            user_id TEXT PRIMARY KEY,
            memories INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX graph_relations_source ON graph_relations(user_id, source);
        CREATE INDEX graph_relations_target ON graph_relations(user_id, target);
        """,
    ),
    Migration(
        3,
        "graph_outbox",
        """
        CREATE TABLE graph_outbox (
            user_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            PRIMARY KEY (user_id, memory_id)
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        4,
        "dreams",
        """
        CREATE TABLE dreams (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            level INTEGER NOT NULL,
            trigger TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            status TEXT NOT NULL,
            report TEXT NOT NULL,
            undo TEXT NOT NULL,
            undone_at TEXT
        );
        CREATE INDEX dreams_user_level ON dreams(user_id, level, finished_at);
        CREATE TABLE memory_index (
            user_id TEXT NOT NULL,
            facet TEXT NOT NULL,
            key TEXT NOT NULL,
            record_id TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
            PRIMARY KEY (user_id, facet, key, record_id)
        );
        CREATE INDEX memory_index_record ON memory_index(record_id);
        """,
    ),
    Migration(
        5,
        "message_key_index",
        """
        CREATE INDEX records_message_key ON records(
            user_id, session_id, json_extract(metadata, '$.message_key')
        ) WHERE json_extract(metadata, '$.message_key') IS NOT NULL;
        """,
    ),
    Migration(
        6,
        "pinned_index",
        # Every recall loads the user's pinned memories; without this a 100k-record
        # user scanned all rows (~140 ms, docs/BENCHMARKS.md recall latency).
        """
        CREATE INDEX records_user_pinned ON records(user_id, status, event_time) WHERE pinned = 1;
        """,
    ),
    Migration(
        7,
        "keyword_context_column",
        # The keyword index gets a second column for the previous turn(s) of a
        # session, weighted below the memory's own words in bm25() (docs/BENCHMARKS.md,
        # LoCoMo: one column holding both cost 12 points of hit@1). Rows written
        # before keep their text in ``terms`` and an empty context.
        """
        CREATE VIRTUAL TABLE records_fts_v7 USING fts5(
            terms, context, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO records_fts_v7 (rowid, terms, context) SELECT rowid, terms, '' FROM records_fts;
        DROP TABLE records_fts;
        ALTER TABLE records_fts_v7 RENAME TO records_fts;
        """,
    ),
    Migration(
        8,
        "vector_changes",
        # A change log of the vectors' active set, written by triggers so that every
        # writer (any process, any code path) feeds it: a new or replaced embedding, a
        # status change, a removed record. Other processes read the entries past the
        # sequence their FAISS index reflects and update only those rows
        # (stores/vector_sync.py) instead of rebuilding.
        """
        CREATE TABLE vector_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            record_rowid INTEGER NOT NULL
        );
        CREATE TRIGGER vector_changes_embedded AFTER INSERT ON vectors BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (NEW.rowid);
        END;
        CREATE TRIGGER vector_changes_reembedded AFTER UPDATE ON vectors BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (NEW.rowid);
        END;
        CREATE TRIGGER vector_changes_unembedded AFTER DELETE ON vectors BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (OLD.rowid);
        END;
        CREATE TRIGGER vector_changes_status AFTER UPDATE OF status ON records
        WHEN OLD.status IS NOT NEW.status BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (NEW.rowid);
        END;
        CREATE TRIGGER vector_changes_removed AFTER DELETE ON records BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (OLD.rowid);
        END;
        """,
    ),
    Migration(
        9,
        "slot_status_index",
        # A new value of a slot looks up the slot's active records. The (user_id, slot)
        # index made SQLite read every version the slot ever had, or every active
        # record of the user in time order: a write cost that grew with the user's size
        # (docs/BENCHMARKS.md, a million memories).
        """
        CREATE INDEX records_user_slot_status ON records(user_id, slot, status, event_time)
        WHERE slot IS NOT NULL;
        DROP INDEX records_user_slot;
        """,
    ),
    Migration(
        10,
        "keyword_scope_column",
        # The keyword index gets a third column holding one token per row, its user's
        # scope ('u' and the hex of the user id), so that a query can match only the
        # asking user's rows: FTS5 intersects the two posting lists. Before, a user
        # holding a small share of a large store had BM25 computed over every user's
        # matching rows (docs/BENCHMARKS.md, a million memories: 160 ms of a 200 ms
        # recall at 200 users x 1,000 turns).
        """
        CREATE VIRTUAL TABLE records_fts_v10 USING fts5(
            terms, context, scope, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO records_fts_v10 (rowid, terms, context, scope)
        SELECT f.rowid, f.terms, f.context, 'u' || hex(r.user_id)
        FROM records_fts f LEFT JOIN records r ON r.rowid = f.rowid;
        DROP TABLE records_fts;
        ALTER TABLE records_fts_v10 RENAME TO records_fts;
        """,
    ),
    Migration(
        11,
        "second_vectors",
        # The opt-in second embedding index (EmbeddingConfig.second_model): one more
        # embedding per record and model, kept like the first (its FAISS index follows
        # the same change log). A content edit drops the record's second embedding, so
        # the engine embeds the new text again; an erased record takes it along.
        """
        CREATE TABLE second_vectors (
            rowid INTEGER NOT NULL REFERENCES records(rowid) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (rowid, model)
        );
        CREATE TRIGGER second_vectors_embedded AFTER INSERT ON second_vectors BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (NEW.rowid);
        END;
        CREATE TRIGGER second_vectors_reembedded AFTER UPDATE ON second_vectors BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (NEW.rowid);
        END;
        CREATE TRIGGER second_vectors_unembedded AFTER DELETE ON second_vectors BEGIN
            INSERT INTO vector_changes (record_rowid) VALUES (OLD.rowid);
        END;
        CREATE TRIGGER second_vectors_content AFTER UPDATE OF content ON records
        WHEN OLD.content IS NOT NEW.content BEGIN
            DELETE FROM second_vectors WHERE rowid = NEW.rowid;
        END;
        """,
    ),
    Migration(
        12,
        "superseded_by_index",
        # Recall looks up what its hits superseded (a current value inherits the
        # relevance of the values it replaced). Without an index on superseded_by,
        # SQLite read every superseded record of the user on each recall: 68 ms at
        # 200k turns of one user (docs/BENCHMARKS.md, a million memories).
        """
        CREATE INDEX records_user_superseded_by ON records(user_id, superseded_by)
        WHERE superseded_by IS NOT NULL;
        """,
    ),
    Migration(
        13,
        "content_head_index",
        # The write path looks up a record's twins (same text, linked by provenance) for
        # each older statement a new one updates. Without an index on the text SQLite
        # read every record of the user each time: ingest cost grew with the user's
        # size (docs/BENCHMARKS.md, ingest throughput). The first 32 characters keep
        # the index small; the query compares the whole text after it.
        """
        CREATE INDEX records_user_content_head ON records(user_id, substr(content, 1, 32));
        """,
    ),
    Migration(
        14,
        "grounded_times",
        # Each record's relative dates grounded once at its own time ("yesterday" said on
        # 8 May is 7 May; dates/grounding.py), so a windowed recall never parses another
        # memory's text. One row per grounded record: the window it points at, or NULL
        # and NULL when it points nowhere else. Records without a row (older stores, a
        # changed text or time) are grounded on first use and written back.
        """
        CREATE TABLE grounded_times (
            rowid INTEGER PRIMARY KEY REFERENCES records(rowid) ON DELETE CASCADE,
            start_at TEXT,
            end_at TEXT
        );
        CREATE TRIGGER grounded_times_changed AFTER UPDATE OF content, event_time ON records
        WHEN OLD.content IS NOT NEW.content OR OLD.event_time IS NOT NEW.event_time BEGIN
            DELETE FROM grounded_times WHERE rowid = NEW.rowid;
        END;
        """,
    ),
    Migration(
        15,
        "speaker_column",
        # Who said a record, by name (MemoryRecord.speaker), set at ingest: recall reads it
        # instead of a label at the head of the text. Stores written with the speaker in
        # the metadata (the LoCoMo harness did) get it copied, so they keep their speakers.
        """
        ALTER TABLE records ADD COLUMN speaker TEXT;
        UPDATE records SET speaker = trim(json_extract(metadata, '$.speaker'))
        WHERE json_type(metadata, '$.speaker') = 'text'
        AND length(trim(json_extract(metadata, '$.speaker'))) BETWEEN 1 AND 100;
        """,
    ),
    Migration(
        16,
        "keyword_users",
        # Each user's keyword statistics (rows, tokens, the write stamp of their last
        # change; stores/sqlite/user_stats.py), so a user's BM25 scores no longer move
        # with other users' writes. Filled from FTS5's own row sizes (dm_fts_tokens
        # reads a records_fts_docsize blob).
        """
        CREATE TABLE keyword_users (
            user_id TEXT PRIMARY KEY,
            rows INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            writes INTEGER NOT NULL
        );
        INSERT INTO keyword_users (user_id, rows, tokens, writes)
        SELECT r.user_id, count(*), sum(dm_fts_tokens(d.sz)), 0
        FROM records_fts_docsize d JOIN records r ON r.rowid = d.id GROUP BY r.user_id;
        """,
    ),
    Migration(
        17,
        "system_column",
        # The library's notes on a record (MemoryRecord.system; dreammem/system_meta.py) move
        # out of the caller's metadata into their own column, so caller metadata never steers
        # recall, the dream or history (issue 35, item 3). Every key of LEGACY_KEYS found in a
        # row's metadata moves, with its JSON value as it was (json_each gives booleans, null,
        # objects and arrays as SQL values: each is turned back into JSON).
        f"""
        ALTER TABLE records ADD COLUMN system TEXT NOT NULL DEFAULT '{{}}';
        UPDATE records SET
            system = (
                SELECT json_group_object(j.key, CASE j.type
                    WHEN 'true' THEN json('true') WHEN 'false' THEN json('false')
                    WHEN 'null' THEN json('null') WHEN 'object' THEN json(j.value)
                    WHEN 'array' THEN json(j.value) ELSE j.value END)
                FROM json_each(records.metadata) AS j WHERE j.key IN ({_LEGACY_LIST})
            ),
            metadata = json_remove(metadata, {_LEGACY_PATHS})
        WHERE EXISTS (SELECT 1 FROM json_each(records.metadata) AS j WHERE j.key IN ({_LEGACY_LIST}));
        """,
    ),
    Migration(
        18,
        "message_key_and_keyed_in_system",
        # The two notes migration 17 left in the caller's metadata (system_meta.LATER_KEYS)
        # move into system too: an adapter message's de-duplication key (a string) and a
        # keyed entry (an object); a value of another type was a caller's and stays. The
        # message-key index is rebuilt on the new place (the adapters' look-up reads it).
        """
        UPDATE records SET
            system = json_set(system, '$.message_key', json_extract(metadata, '$.message_key')),
            metadata = json_remove(metadata, '$.message_key')
        WHERE json_type(metadata, '$.message_key') = 'text';
        UPDATE records SET
            system = json_set(system, '$.keyed', json(json_extract(metadata, '$.keyed'))),
            metadata = json_remove(metadata, '$.keyed')
        WHERE json_type(metadata, '$.keyed') = 'object';
        DROP INDEX records_message_key;
        CREATE INDEX records_message_key ON records(
            user_id, session_id, json_extract(system, '$.message_key')
        ) WHERE json_extract(system, '$.message_key') IS NOT NULL;
        """,
    ),
    Migration(
        19,
        "writer_guard",
        # The lowest client schema version that may write to the file (dreammem.stores.sqlite.writers):
        # each client raises it to its own when it opens the file, and every write checks it.
        # The triggers guard every write of a record's row (not access counts): they call the
        # connection's dreammem_client_version(), which a client older than this migration lacks,
        # so it is refused too.
        """
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TRIGGER records_writer_guard_insert BEFORE INSERT ON records
        WHEN (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'min_writer_version')
             > dreammem_client_version()
        BEGIN SELECT RAISE(ABORT, 'dreammem_writer_too_old'); END;
        CREATE TRIGGER records_writer_guard_update
        BEFORE UPDATE OF content, metadata, system, status, slot, superseded_by ON records
        WHEN (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'min_writer_version')
             > dreammem_client_version()
        BEGIN SELECT RAISE(ABORT, 'dreammem_writer_too_old'); END;
        """,
    ),
)
