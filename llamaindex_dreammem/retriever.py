"""Recalled memories as LlamaIndex nodes, for ``ContextChatEngine`` and other RAG pipelines."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from dreammem.agent_api import hit_metadata
from dreammem.memory import DreamMemory
from dreammem.validation import check_id, check_k, check_user_id
from llamaindex_dreammem._shared import check_memory

__all__ = ["DreamMemRetriever"]

# Shown to the model with each node; every other metadata key is trace data for code.
_LLM_VISIBLE_KEYS = frozenset({"event_time", "source"})


class DreamMemRetriever(BaseRetriever):
    """Recall a user's memories as ``NodeWithScore`` objects.

    Each node's id is the memory's trace id, its text the memory, its score the
    recall score, and its metadata the trace (``paths``, ``ranks``, ``path_scores``,
    ``fused_score``, ``rerank_score``, ``decay``, ``pinned``) with ``layer``, ``kind``,
    ``event_time`` and ``source``. Only ``event_time`` and ``source`` ("user said",
    "tool returned", ...) are shown to the model; the rest is hidden
    from prompts and embeddings. The async path runs recall in a worker thread, so it
    never blocks the event loop.

    Args:
        memory: The DreamMem store.
        user_id: Whose memories to search; required.
        k: How many memories at most (pinned ones from their budget: see ``RecallConfig``).
        session_id: The current session, passed to recall.
        callback_manager: LlamaIndex callbacks.
        verbose: LlamaIndex verbosity flag.

    Raises:
        ScopeError: ``user_id`` is missing or malformed.
        ValidationError: ``memory``, ``k`` or ``session_id`` is invalid.
    """

    def __init__(
        self,
        *,
        memory: DreamMemory,
        user_id: str,
        k: int = 5,
        session_id: str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self._memory = check_memory(memory)
        self._user_id = check_user_id(user_id)
        self._k = check_k(k)
        self._session_id = check_id(session_id, "session_id")

    @property
    def user_id(self) -> str:
        """The user whose memories are searched."""
        return self._user_id

    @property
    def k(self) -> int:
        """How many ranked memories a query returns."""
        return self._k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self._memory.recall(
            query_bundle.query_str, user_id=self._user_id, k=self._k, session_id=self._session_id
        )
        return [_node(meta, hit.score) for hit, meta in zip(result, hit_metadata(result), strict=True)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


def _node(meta: dict[str, Any], score: float) -> NodeWithScore:
    text = meta.pop("content")
    hidden = [key for key in meta if key not in _LLM_VISIBLE_KEYS]
    node = TextNode(
        id_=meta["id"],
        text=text,
        metadata=meta,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=list(meta),
    )
    return NodeWithScore(node=node, score=score)
