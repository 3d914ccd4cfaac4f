"""The public facade: :class:`DreamMemory`.

A thin shell: it validates input, builds records and results, and hands every
write, index and lock to the :class:`~dreammem.engine.Engine` beneath it, and every
dream to :mod:`dreammem.dream.service`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from typing_extensions import deprecated

from dreammem.config import DreamMemConfig
from dreammem.crud import CrudMixin
from dreammem.dream.methods import DreamMethods
from dreammem.embed.base import Embedder
from dreammem.engine import Engine, is_server_uri, store_files
from dreammem.engine.arguments import check_config, check_store_path
from dreammem.errors import NotFoundError
from dreammem.history import version_history
from dreammem.layer_writes import LayerWriteMixin
from dreammem.llm import LLM
from dreammem.lookups import LookupMixin
from dreammem.recall.base import RecallQuery
from dreammem.recall.build import build_pipeline
from dreammem.recall.filters import RecallFilter
from dreammem.recall.pipeline import RecallPipeline, Reranker
from dreammem.recall.result import RecallResult
from dreammem.stores.base import GraphStore, RecordStore, VectorIndex
from dreammem.text.tokenize import tokenize
from dreammem.twins import async_twin
from dreammem.types import Kind, MemoryRecord, utcnow
from dreammem.validation import (
    check_content,
    check_event_time,
    check_id,
    check_k,
    check_metadata,
    check_names,
    check_slot,
    check_user_id,
    require_id,
)
from dreammem.write.inputs import memory_kind, turn_input, turn_inputs
from dreammem.write.records import build_core_memory

__all__ = ["DreamMemory", "Turn", "store_files"]

_ASYNC_GRAPH_RENAMED = "async_graph() is now areplay_graph(); the old name goes in the next release"
Turn = Mapping[str, Any]
"""One item of :meth:`DreamMemory.add_many`: :meth:`DreamMemory.add`'s arguments by name."""

_HEADROOM = 4
"""A filtered recall asks each path for this many times more candidates."""
_SUBSET_LIMIT = 50_000
"""Up to this many rows a filter's columns select, the vector path searches only them."""


class DreamMemory(DreamMethods, CrudMixin, LookupMixin, LayerWriteMixin):
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
        auth: ``(user, password)`` for a Neo4j server (else ``config.store``'s).

    A ``bolt://host:7687`` or ``neo4j://host:7687`` path opens the whole store
    (records, embeddings, full text, dream queue and log, graph) in that Neo4j
    database instead: no local file, so processes on any number of hosts share one
    memory. With no path, ``config.store.uri`` selects it too.

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
        auth: tuple[str, str] | None = None,
    ) -> None:
        path, self.config = check_store_path(path), check_config(config)
        self.path = None if path is None or is_server_uri(path) else Path(path)
        """The embedded store's folder or file (None in memory and on a Neo4j server)."""
        self.engine = Engine(path, config=self.config, embedder=embedder, graph=graph, llm=llm, auth=auth)
        """The engine beneath: record store, derived indexes, locks, unit of work."""
        self.store: RecordStore = self.engine.store
        """The record store (the source of truth)."""
        self.graph: GraphStore = self.engine.graph
        """The graph store kept in step with the records."""
        self.reranker = reranker
        self._pipeline: RecallPipeline | None = None

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
    def vector_index(self) -> VectorIndex:
        """The vector index: FAISS, or the server's on the Neo4j backend (opened with the embedder)."""
        return self.engine.vector_index

    @property
    def pipeline(self) -> RecallPipeline:
        """The recall pipeline (built on first use)."""
        if self._pipeline is None:
            self._pipeline = build_pipeline(
                self.store,
                self.vector_index,
                self.embedder,
                self.graph,
                self.config.recall,
                self.reranker,
                second=self.engine.second,
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
        speaker: str | None = None,
    ) -> MemoryRecord:
        """Store one conversation turn.

        The turn becomes an episodic record (queued for the next dream); an explicit
        preference, constraint, correction or "remember this" in a user turn is also
        written at once as a semantic record, superseding an older value of the
        same slot. ``speaker`` names who said it when the turn is one of several people's
        (a group chat, a transcript): a question naming that person recalls their lines.

        Returns:
            The episodic record of the turn.

        Raises:
            ScopeError: ``user_id`` is missing or malformed.
            ValidationError: bad content, role, speaker, time or metadata.
        """
        item: dict[str, Any] = {
            "content": content,
            "user_id": user_id,
            "session_id": session_id,
            "role": role,
        }
        item |= {"event_time": event_time, "metadata": metadata, "agent_id": agent_id, "speaker": speaker}
        return self.add_many([item])[0]

    def add_many(self, turns: Iterable[Turn]) -> list[MemoryRecord]:
        """Store many turns with one embedding batch and one transaction.

        Every turn is validated before anything is written; one bad turn rejects the
        whole batch, and so does a batch over ``write.max_batch_turns`` turns or
        ``write.max_batch_chars`` characters (split it: each call is one transaction).

        Returns:
            The episodic record of each turn, in order.
        """
        now = utcnow()
        inputs = turn_inputs(turns, now, self.config.write)
        return self.engine.add_turns(inputs, now) if inputs else []

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

        A pinned memory ranks like any other; when it does not rank for a query it is
        added after the ranked hits from the core budget (``RecallConfig.pinned_max_count``,
        default 2, newest first). With ``pinned=False`` it is an ordinary long-term fact.
        An active record of the same ``slot`` (default: read off the text by the
        explicit-memory rules) is superseded by this one, and stays in history.

        ``role`` says who asks: only the user states preferences and sets
        constraints. What the assistant or a tool asks to remember is kept as a fact
        with that source, supersedes nothing, is flagged when it reads like an instruction
        (:mod:`dreammem.write.instructions`), and is stored unpinned whatever ``pinned``
        says unless ``WriteConfig.allow_non_user_pins`` is set (never when flagged).

        Returns:
            The semantic record.
        """
        now = utcnow()
        turn = turn_input(
            {
                "content": content,
                "user_id": user_id,
                "session_id": session_id,
                "role": role,
                "metadata": metadata,
                "agent_id": agent_id,
            },
            now,
            max_chars=self.config.write.max_content_chars,
        )
        record_kind = memory_kind(kind, pinned)
        options = {"pinned": pinned, "allow_non_user_pins": self.config.write.allow_non_user_pins}
        record = build_core_memory(turn, kind=record_kind, now=now, slot=check_slot(slot), **options)
        self.engine.persist([record], [" ".join(tokenize(record.content))], enqueue=[])
        return record

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
        paths = None if paths is None else list(dict.fromkeys(check_names(paths, "paths")))  # each runs once
        reference = check_event_time(now, default=utcnow())
        condition = RecallFilter.parse(filters)
        if not self.engine.has_embedder and self.store.count(user) == 0:
            return RecallResult(
                query=text, user_id=user, hits=(), budget_tokens=self.config.recall.budget_tokens
            )
        pipeline = self.pipeline
        stale = self.engine.catch_up()
        rq = RecallQuery(
            text=text,
            user_id=user,
            limit=max(pipeline.config.candidates_per_path, k) * (1 if condition is None else _HEADROOM),
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
        return self.engine.soft_delete(self.get(memory_id, user_id=user_id), twins=twins)

    def revert_update(self, memory_id: str, *, user_id: str) -> MemoryRecord:
        """Undo a write-time update decision: the superseded record (and its turn) is current again.

        Raises:
            NotFoundError: no such record for this user.
            ValidationError: it was not superseded by an update decision.
        """
        return self.engine.revert_update(self.get(memory_id, user_id=user_id))

    def history(self, memory_id: str, *, user_id: str) -> list[MemoryRecord]:
        """The record with every version of the same fact, oldest first (:mod:`dreammem.history`)."""
        return version_history(self.store, self.get(memory_id, user_id=user_id))

    def working_memory(self, *, user_id: str, session_id: str) -> list[MemoryRecord]:
        """The last N turns of a session, oldest first (N = ``write.working_memory_turns``)."""
        user, session = check_user_id(user_id), require_id(session_id, "session_id")
        limit = self.config.write.working_memory_turns
        turns = self.store.find(user, statuses=None, kinds=[Kind.TURN], session_id=session, limit=limit)
        return list(reversed(turns))

    def task_state(self, *, user_id: str, session_id: str) -> dict[str, Any]:
        """The task state of a session (goal, pending/completed steps, last tool result)."""
        session = require_id(session_id, "session_id")
        return self.store.get_task_state(check_user_id(user_id), session)

    def set_task_state(self, state: Mapping[str, Any], *, user_id: str, session_id: str) -> None:
        """Replace the task state of a session."""
        session = require_id(session_id, "session_id")
        checked = check_metadata(state, max_chars=self.config.write.max_content_chars, what="task state")
        self.store.set_task_state(check_user_id(user_id), session, checked, utcnow())

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts by status, the embedding model and the queue size."""
        return self.engine.stats(check_user_id(user_id) if user_id is not None else None)

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
        """Rebuild the graph of every user of this store from SQLite; returns the active records written.

        Raises:
            GraphUnavailableError: an external graph is down (the work stays queued
                in the outbox and is replayed when it is back).
        """
        return self.engine.reindex_graph()

    def replay_graph(self) -> int:
        """Replay graph writes queued while an external graph was unreachable; returns how many.

        Raises:
            GraphUnavailableError: the graph is still down (nothing is lost).
        """
        return self.engine.sync_graph()

    @deprecated("sync_graph() is now replay_graph(); the old name goes in the next release")
    def sync_graph(self) -> int:
        """Deprecated name of :meth:`replay_graph` (its async twin read as ``async_graph``)."""
        return self.replay_graph()

    def close(self) -> None:
        """Flush the vector index and close every store (idempotent)."""
        self.engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- async twins (each runs its sync method in a worker thread) ---------------------------

    aadd = async_twin(add)
    aadd_many = async_twin(add_many)
    aremember = async_twin(remember)
    arecall = async_twin(recall)
    aget = async_twin(get)
    aforget = async_twin(forget)
    arevert_update = async_twin(revert_update)
    ahistory = async_twin(history)
    aworking_memory = async_twin(working_memory)
    atask_state = async_twin(task_state)
    aset_task_state = async_twin(set_task_state)
    astats = async_twin(stats)
    areindex = async_twin(reindex)
    areindex_graph = async_twin(reindex_graph)
    areplay_graph = async_twin(replay_graph)
    async_graph = deprecated(_ASYNC_GRAPH_RENAMED)(async_twin(replay_graph))
    aclose = async_twin(close)
