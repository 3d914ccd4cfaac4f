"""The public facade: :class:`DreamMemory`.

A thin shell: it validates input, builds records and results, and hands every
write, index and lock to the :class:`~dreammem.engine.Engine` beneath it, and every
dream to :mod:`dreammem.dream.service`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from dreammem.config import DreamMemConfig
from dreammem.crud import CrudMixin
from dreammem.dream import service as dream_service
from dreammem.dream.context import DreamContext
from dreammem.dream.journal import list_reports
from dreammem.dream.memory_index import MemoryIndexPath
from dreammem.dream.report import DreamReport
from dreammem.dream.undo import UndoResult, undo_dream
from dreammem.embed.base import Embedder
from dreammem.engine import Engine, store_files
from dreammem.errors import NotFoundError, ValidationError
from dreammem.llm import LLM
from dreammem.lookups import LookupMixin
from dreammem.recall.base import RecallQuery
from dreammem.recall.filters import RecallFilter
from dreammem.recall.graph import GraphPath
from dreammem.recall.keyword import KeywordPath
from dreammem.recall.pipeline import RecallPipeline, Reranker
from dreammem.recall.result import RecallResult
from dreammem.recall.temporal import TemporalPath
from dreammem.recall.vector import VectorPath
from dreammem.stores.base import GraphStore
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.text.tokenize import tokenize
from dreammem.types import Kind, MemoryRecord, Status, utcnow
from dreammem.validation import (
    check_content,
    check_event_time,
    check_id,
    check_k,
    check_metadata,
    check_names,
    check_role,
    check_slot,
    check_user_id,
    require_id,
)
from dreammem.write.records import TurnInput, build_core_memory, build_records

__all__ = ["DreamMemory", "Turn", "store_files"]

Turn = Mapping[str, Any]
"""One item of :meth:`DreamMemory.add_many`: the keyword arguments of :meth:`DreamMemory.add`
plus ``content`` and ``user_id``."""

_HEADROOM = 4
"""A filtered recall asks each path for this many times more candidates."""
_SUBSET_LIMIT = 50_000
"""Up to this many rows a filter's columns select, the vector path searches only them."""
_TURN_FIELDS = frozenset({"content", "user_id", "session_id", "role", "event_time", "metadata", "agent_id"})


class DreamMemory(CrudMixin, LookupMixin):
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
        llm: LLM | None = None,
    ) -> None:
        self.config = config or DreamMemConfig()
        self.path = None if path is None else Path(path)
        self.engine = Engine(path, config=self.config, embedder=embedder, graph=graph, llm=llm)
        """The engine beneath: record store, derived indexes, locks, unit of work."""
        self.reranker = reranker
        self._pipeline: RecallPipeline | None = None

    # -- set-up -------------------------------------------------------------------

    @property
    def store(self) -> SQLiteRecordStore:
        """The record store (the source of truth)."""
        return self.engine.store

    @property
    def graph(self) -> GraphStore:
        """The graph store kept in step with the records."""
        return self.engine.graph

    @property
    def llm(self) -> LLM | None:
        """The optional ``prompt -> completion`` callable for extraction and dreaming."""
        return self.engine.llm

    @llm.setter
    def llm(self, value: LLM | None) -> None:
        self.engine.llm = value

    @property
    def embedder(self) -> Embedder:
        """The embedder (loaded on first use; with model 'auto' chosen by the first writes)."""
        return self.engine.embedder

    @property
    def vector_index(self) -> FaissVectorIndex:
        """The FAISS index (opened with the embedder)."""
        return self.engine.vector_index

    @property
    def pipeline(self) -> RecallPipeline:
        """The recall pipeline (built on first use)."""
        if self._pipeline is None:
            embedder = self.embedder
            index = self.vector_index
            paths: dict[str, Any] = {
                "vector": VectorPath(index, embedder),
                "keyword": KeywordPath(self.store, max_term_share=self.config.recall.keyword_max_term_share),
                "temporal": TemporalPath(self.store, index, embedder),
                "index": MemoryIndexPath(self.store),
                "graph": GraphPath(self.graph, self.store),
            }
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
        with self.engine.lock:
            contexts = self.engine.context_texts(records)
            changed = self.engine.persist(records, contexts, enqueue=[b[0] for b in batches])
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
        role: str = "user",
    ) -> MemoryRecord:
        """Store a semantic memory at once; by default a pinned core memory.

        A pinned memory is always recalled first and never ranked out. With
        ``pinned=False`` it is an ordinary long-term fact. An active record of the same
        ``slot`` (default: read off the text by the explicit-memory rules) is
        superseded by this one, and stays in history.

        ``role`` says who asks: only the user states preferences and sets
        constraints. What the assistant or a tool asks to remember is kept as a fact
        with that source, supersedes nothing, and is flagged and left unpinned when it
        reads like an instruction (:mod:`dreammem.write.instructions`).

        Returns:
            The semantic record.
        """
        now = utcnow()
        turn = self._turn_input(
            {
                "content": content,
                "user_id": user_id,
                "session_id": session_id,
                "role": role,
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
        record = build_core_memory(turn, kind=record_kind, now=now, pinned=pinned, slot=check_slot(slot))
        self.engine.persist([record], [" ".join(tokenize(record.content))], enqueue=[])
        return record

    def _turn_input(self, turn: Turn, now: datetime) -> TurnInput:
        if not isinstance(turn, Mapping):
            raise ValidationError(f"each turn must be a mapping, got {type(turn).__name__}")
        unknown = set(turn) - _TURN_FIELDS
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
        filters: RecallFilter | Mapping[str, Any] | None = None,
    ) -> RecallResult:
        """Find the memories that matter for a query.

        Runs the recall paths (each scoped to the user), fuses them by reciprocal
        rank, reranks when a reranker is set, keeps what clears the relevance floor,
        puts the current value before an earlier one and adds core memories from their
        budget (:mod:`dreammem.recall.pipeline`).

        Args:
            query: What to recall for (a question, the user's last message, ...).
            user_id: The scope.
            k: How many hits at most; pinned core memories that did not rank come from their
                budget (``RecallConfig.pinned_max_count``, ``pinned_max_tokens``) inside k.
            session_id: The current session, if any.
            now: Reference time for relative dates (default: now).
            paths: Run only these paths (default: all configured).
            filters: Only memories that meet these conditions: a
                :class:`~dreammem.recall.filters.RecallFilter` or a mapping of its
                fields (``metadata``, ``agent_id``, ``session_id``, ``layers``, ``kinds``).
                Each path is then asked for four times as many candidates, and the
                vector path searches only the memories the filter's columns select.

        Raises:
            ValidationError: the query is empty, badly encoded or longer than
                ``config.recall.max_query_chars`` (8,000 by default), or a bad filter.
        """
        user = check_user_id(user_id)
        text = check_content(query, max_chars=self.config.recall.max_query_chars, what="query")
        k = check_k(k)
        paths = None if paths is None else check_names(paths, "paths")
        reference = check_event_time(now, default=utcnow())
        condition = RecallFilter.parse(filters)
        if not self.engine.has_embedder and self.store.count(user) == 0:
            return RecallResult(
                query=text, user_id=user, hits=(), budget_tokens=self.config.recall.budget_tokens
            )
        pipeline = self.pipeline
        stale = self.engine.refresh_vectors()
        self.engine.flush_graph()
        rq = RecallQuery(
            text=text,
            user_id=user,
            limit=max(self.config.recall.candidates_per_path, k) * (1 if condition is None else _HEADROOM),
            now=reference,
            session_id=check_id(session_id, "session_id"),
            filter=condition,
            allowed=None if condition is None else self._allowed(user, condition),
        )
        result = pipeline.run(rq, k, paths=paths)
        if stale is None:
            return result
        return dataclasses.replace(result, degraded={**result.degraded, "vector": stale})

    def _allowed(self, user_id: str, condition: RecallFilter) -> frozenset[int] | None:
        """The rows a filtered recall's vector path searches (the filter's columns; None: too many)."""
        found = self.store.filter_rowids(
            user_id,
            agent_id=condition.agent_id,
            session_id=condition.session_id,
            layers=None if condition.layers is None else sorted(condition.layers),
            kinds=None if condition.kinds is None else sorted(condition.kinds),
            limit=_SUBSET_LIMIT,
        )
        return None if found is None else frozenset(found)

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
        self.engine.update(deleted)
        return deleted[0]

    def history(self, memory_id: str, *, user_id: str) -> list[MemoryRecord]:
        """The record with every version of the same fact, oldest first.

        Follows ``superseded_by`` links and records of the same slot.
        """
        record = self.get(memory_id, user_id=user_id)
        return self.store.history_chain(record.user_id, record.id) or [record]

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
        self.engine.refresh_vectors()
        out: dict[str, Any] = {
            "records": counts,
            "users": len(self.store.users()) if user is None else 1,
            "embedding_model": model,
            "vectors": self.engine.vector_count(user),
            "schema_version": self.store.schema_version,
            "graph_outbox": self.engine.graph_pending(),
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
        return dream_service.dream(
            self.engine, user_id, dry_run=dry_run, level=level, context=context, now=now
        )

    def undo_dream(self, dream_id: str, *, user_id: str) -> UndoResult:
        """Restore the user's memory as it was before a dream (newest dreams first)."""
        return undo_dream(self.engine, require_id(dream_id, "dream_id"), check_user_id(user_id))

    def maybe_dream(
        self, user_id: str, *, now: datetime | None = None, blocking: bool = True
    ) -> list[DreamReport]:
        """Run the dreams the triggers say are due (queue size, time, second-level period)."""
        return dream_service.maybe_dream(self.engine, user_id, now=now, blocking=blocking)

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
            self.engine,
            user_id,
            session_id=session_id,
            outcome=outcome,
            success=success,
            kind="task",
            now=now,
        )

    def end_session(self, *, user_id: str, session_id: str, now: datetime | None = None) -> list[DreamReport]:
        """A session ended: dream if due."""
        return dream_service.end_phase(self.engine, user_id, session_id=session_id, kind="session", now=now)

    def dreams(self, *, user_id: str, limit: int = 20) -> list[DreamReport]:
        """The user's dream log, newest first."""
        return [report for report, _ in list_reports(self.store, check_user_id(user_id), check_k(limit))]

    # -- maintenance ----------------------------------------------------------------------

    def reindex(self, *, embedder: Embedder | None = None) -> dict[str, int]:
        """Rebuild the derived indexes from SQLite.

        With a new ``embedder``, every active record is re-embedded and the store
        switches to that model; otherwise stored embeddings are reused (missing ones
        are computed). FAISS, the keyword index's text (own words and context) and the
        graph are rebuilt.
        """
        return self.engine.reindex(embedder)

    def reindex_graph(self) -> int:
        """Rebuild the graph of every user of this store from SQLite.

        Returns:
            How many active records were written to the graph (0 with no graph).

        Raises:
            GraphUnavailableError: an external graph is down (the work stays queued
                in the outbox and is replayed when it is back).
        """
        return self.engine.reindex_graph()

    def sync_graph(self) -> int:
        """Replay graph writes queued while an external graph was unreachable.

        Returns:
            How many queued memories were written.

        Raises:
            GraphUnavailableError: the graph is still down (nothing is lost).
        """
        return self.engine.sync_graph()

    def close(self) -> None:
        """Flush the vector index and close every store (idempotent)."""
        self.engine.close()

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
