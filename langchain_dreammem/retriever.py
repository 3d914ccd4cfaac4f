"""A LangChain retriever over DreamMem's multi-path recall."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from dreammem.agent_api import hit_metadata

__all__ = ["DreamMemRetriever"]


class DreamMemRetriever(BaseRetriever):
    """Recall one user's memories as ``Document`` objects.

    Each document's ``page_content`` is the memory text (invisible characters removed);
    its ``id`` is the trace id; its ``metadata`` holds the trace (which recall paths
    found it, their ranks and scores, the fused and rerank scores), the record's layer,
    kind and time, and ``source`` ("user said", "tool returned", ...).

    Example:
        >>> retriever = DreamMemRetriever(memory=memory, user_id="alice", k=3)  # doctest: +SKIP
        >>> retriever.invoke("which report format?", k=1)  # doctest: +SKIP

    Attributes:
        memory: The :class:`~dreammem.DreamMemory` store (excluded from serialisation).
        user_id: The scope every recall runs in.
        k: How many memories to return at most (pinned ones from their budget: see ``RecallConfig``).
    """

    memory: Any = Field(exclude=True)
    user_id: str
    k: int = 5

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        result = self.memory.recall(query, user_id=self.user_id, k=self.k if k is None else k)
        return [
            Document(page_content=meta["content"], id=meta["id"], metadata=meta)
            for meta in hit_metadata(result)
        ]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), k=k
        )
