"""The methods the LoCoMo benchmark compares, each behind one small protocol.

- ``vector``: FAISS (exact inner product) over MiniLM embeddings of the turn text only.
- ``bm25``: ``bm25s`` (Lucene BM25) over the turn text only, DreamMem's tokenizer.
- ``fusion``: reciprocal rank fusion of the two above, no rerank.
- ``recency``: the last k turns of the conversation, newest first.
- ``dreammem``: the full :meth:`DreamMemory.recall` pipeline as configured; variants
  with one recall path switched off share its store (ablations).

Every method indexes one conversation at a time and answers with, for each
retrieved memory, the set of turn ids it came from.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import faiss
import numpy as np

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.recall.base import Candidate
from dreammem.recall.fusion import reciprocal_rank_fusion
from dreammem.recall.pipeline import RecallPipeline, Reranker
from dreammem.text.tokenize import query_terms, tokenize
from dreammem.types import MemoryRecord
from dreammem_bench.locomo import LocomoConversation

__all__ = [
    "BM25Method",
    "BenchMethod",
    "DreamMemMethod",
    "DreamMemPathsVariant",
    "DreamMemStageVariant",
    "FusionMethod",
    "RecencyMethod",
    "Retrieved",
    "VectorMethod",
    "swapped_stages",
]

Retrieved = list[frozenset[str]]
"""For each retrieved memory, best first, the turn ids it came from."""

_FIRST_STAGE_DEPTH = 30


class BenchMethod(Protocol):
    """A retrieval method under test.

    ``shares_index_with`` names the method whose index this one reuses (its ingest
    is that method's), or is ``None``.
    """

    name: str
    shares_index_with: str | None

    def index(self, conversation: LocomoConversation) -> None:
        """Ingest every turn of the conversation."""
        ...

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """The top-k memories for the question, as source turn ids."""
        ...


def _single(conversation: LocomoConversation, positions: Sequence[int]) -> Retrieved:
    return [frozenset({conversation.turns[i].dia_id}) for i in positions]


class VectorMethod:
    """Dense retrieval: FAISS exact search over embeddings of each turn's text."""

    shares_index_with: str | None = None

    def __init__(self, embedder: Embedder, *, name: str = "vector") -> None:
        self.name = name
        self._embedder = embedder
        self._index: Any = None
        self._owner: str | None = None

    def index(self, conversation: LocomoConversation) -> None:
        """Embed every turn in batches and add them to a fresh flat index."""
        vectors = self._embedder.embed_documents([t.content for t in conversation.turns])
        index = faiss.IndexFlatIP(self._embedder.dim)
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self._index, self._owner = index, conversation.sample_id

    def ranked(self, conversation: LocomoConversation, question: str, depth: int) -> list[int]:
        """Turn positions, most similar first."""
        assert self._owner == conversation.sample_id, "index the conversation first"
        query = self._embedder.embed_query(question)[None, :]
        _, ids = self._index.search(np.ascontiguousarray(query, dtype=np.float32), depth)
        return [int(i) for i in ids[0] if i >= 0]

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """The k nearest turns."""
        return _single(conversation, self.ranked(conversation, question, k))


class BM25Method:
    """Sparse retrieval with ``bm25s`` (Lucene BM25) over each turn's text.

    Text is tokenised by :func:`dreammem.text.tokenize.tokenize` (the tokenizer of
    DreamMem's own keyword path: lower-cased words, English stop words dropped,
    jieba for Chinese), so the baseline is as strong a BM25 as the library's and the
    comparison isolates what the pipeline adds. It measured better than ``bm25s``'s
    default tokenizer on the LoCoMo dev split (see docs/BENCHMARKS.md).
    """

    shares_index_with: str | None = None

    def __init__(self, *, name: str = "bm25") -> None:
        self.name = name
        self._retriever: Any = None
        self._owner: str | None = None
        self._size = 0

    def index(self, conversation: LocomoConversation) -> None:
        """Tokenise every turn and build the BM25 index."""
        import bm25s  # noqa: PLC0415 - heavy (scipy): only the BM25 baselines need it

        retriever = bm25s.BM25()
        retriever.index([tokenize(t.content) for t in conversation.turns], show_progress=False)
        self._retriever, self._owner, self._size = retriever, conversation.sample_id, len(conversation.turns)

    def ranked(self, conversation: LocomoConversation, question: str, depth: int) -> list[int]:
        """Turn positions with a positive BM25 score, best first."""
        assert self._owner == conversation.sample_id, "index the conversation first"
        vocab = self._retriever.vocab_dict
        terms = [t for t in query_terms(question) if t in vocab]
        if not terms:
            return []
        ids, scores = self._retriever.retrieve([terms], k=min(depth, self._size), show_progress=False)
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """The k best-scoring turns."""
        return _single(conversation, self.ranked(conversation, question, k))


class FusionMethod:
    """Reciprocal rank fusion of a dense and a sparse method (no rerank).

    It builds its own dense and sparse indexes, so its ingest time is theirs together.
    """

    shares_index_with: str | None = None

    def __init__(self, embedder: Embedder, *, rrf_k: int = 60, depth: int = _FIRST_STAGE_DEPTH) -> None:
        self.name = "fusion"
        self._vector = VectorMethod(embedder)
        self._bm25 = BM25Method()
        self._rrf_k = rrf_k
        self._depth = depth

    def index(self, conversation: LocomoConversation) -> None:
        """Build both component indexes."""
        self._vector.index(conversation)
        self._bm25.index(conversation)

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """The top k of the fused lists (each of depth ``max(depth, k)``)."""
        depth = max(self._depth, k)
        lists = {
            "vector": self._vector.ranked(conversation, question, depth),
            "bm25": self._bm25.ranked(conversation, question, depth),
        }
        ranked = {name: [Candidate(i, 0.0) for i in ids] for name, ids in lists.items()}
        fused = reciprocal_rank_fusion(ranked, k=self._rrf_k)
        return _single(conversation, [f.rowid for f in fused[:k]])


class RecencyMethod:
    """The last k turns, newest first: what a plain window of recent turns would see."""

    name = "recency"
    shares_index_with: str | None = None

    def index(self, conversation: LocomoConversation) -> None:
        """Nothing to build."""

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """The k most recent turns."""
        count = len(conversation.turns)
        return _single(conversation, list(range(count - 1, max(count - k, 0) - 1, -1)))


class DreamMemMethod:
    """The full :meth:`DreamMemory.recall` pipeline on one in-memory store.

    Each conversation is one user (``user_id`` = its ``sample_id``); each session is
    written with one ``add_many`` call, each turn one memory with its ``dia_id`` in
    the metadata; questions are asked with the last session's time as "now". A hit's
    source turns are its own ``dia_id`` or, for a distilled memory, those of the
    records it was distilled from (followed through ``provenance``).

    Args:
        config: The configuration of the store.
        embedder: The embedder (``None``: as the config says).
        reranker: An optional reranker stage.
        name: The method name in the report.
        dream: Dream once (rules, no LLM) at the conversation's reference time after
            writing it, before any question: recall on a store its owner let consolidate.
    """

    shares_index_with: str | None = None

    def __init__(
        self,
        config: DreamMemConfig | None = None,
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        name: str = "dreammem",
        dream: bool = False,
    ) -> None:
        self.name = name
        self.dream = dream
        self.memory = DreamMemory(None, config=config, embedder=embedder, reranker=reranker)
        self._sources: dict[str, frozenset[str]] = {}

    def index(self, conversation: LocomoConversation) -> None:
        """Add the conversation session by session."""
        user = conversation.sample_id
        sessions: dict[int, list[dict[str, Any]]] = {}
        for turn in conversation.turns:
            sessions.setdefault(turn.session, []).append(
                {
                    "content": turn.content,
                    "user_id": user,
                    "session_id": f"session_{turn.session}",
                    "role": "user",
                    "speaker": turn.speaker,
                    "event_time": turn.event_time,
                    "metadata": {"dia_id": turn.dia_id, "speaker": turn.speaker},
                }
            )
        for number in sorted(sessions):
            for record in self.memory.add_many(sessions[number]):
                self._sources[record.id] = frozenset({str(record.metadata["dia_id"])})
        if self.dream:
            self.memory.dream(user_id=user, now=conversation.reference_time)

    def search(
        self, conversation: LocomoConversation, question: str, k: int, *, paths: Sequence[str] | None = None
    ) -> Retrieved:
        """Recall k memories and map each to its source turns."""
        result = self.memory.recall(
            question, user_id=conversation.sample_id, k=k, now=conversation.reference_time, paths=paths
        )
        # Pinned memories are core context (from their own budget inside k, whatever the
        # query), not ranking, so they are not scored. A question whose gold turn was
        # pinned can only lose by this.
        ranked = [hit for hit in result if not hit.record.pinned]
        return [self.sources(hit.record) for hit in ranked[:k]]

    def sources(self, record: MemoryRecord, _depth: int = 0) -> frozenset[str]:
        """The turn ids a record came from: its own, or through its provenance."""
        known = self._sources.get(record.id)
        if known is not None:
            return known
        found: set[str] = set()
        if "dia_id" in record.metadata:
            found.add(str(record.metadata["dia_id"]))
        if _depth < 8:
            parents = self.memory.store.get(record.user_id, list(record.provenance))
            for parent in parents:
                found |= self.sources(parent, _depth + 1)
        self._sources[record.id] = frozenset(found)
        return self._sources[record.id]

    def path_names(self) -> list[str]:
        """The recall paths this store runs (configured and available)."""
        pipeline = self.memory.pipeline
        return [p for p in pipeline.config.active_paths if p in pipeline.paths]

    def close(self) -> None:
        """Close the store."""
        self.memory.close()


class DreamMemPathsVariant:
    """The same store as a :class:`DreamMemMethod`, recalled through fewer paths."""

    def __init__(self, base: DreamMemMethod, paths: Sequence[str], *, name: str) -> None:
        self.name = name
        self.shares_index_with: str | None = base.name
        self._base = base
        self._paths = tuple(paths)

    def index(self, conversation: LocomoConversation) -> None:
        """Nothing: the base method's store already holds the conversation."""

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """Recall through the chosen paths only."""
        return self._base.search(conversation, question, k, paths=self._paths)


class DreamMemStageVariant:
    """The same store as a :class:`DreamMemMethod`, with other recall stages.

    Another reranker (or none) and/or recall configuration is swapped in for each
    call (stage ablations).
    """

    def __init__(
        self,
        base: DreamMemMethod,
        *,
        name: str,
        reranker: Reranker | None,
        recall: RecallConfig | None = None,
    ) -> None:
        self.name = name
        self.shares_index_with: str | None = base.name
        self._base = base
        self._reranker = reranker
        self._recall = recall

    def index(self, conversation: LocomoConversation) -> None:
        """Nothing: the base method's store already holds the conversation."""

    def search(self, conversation: LocomoConversation, question: str, k: int) -> Retrieved:
        """Recall with this variant's stages, then put the base's back."""
        with swapped_stages(self._base.memory.pipeline, self._recall, self._reranker):
            return self._base.search(conversation, question, k)


@contextmanager
def swapped_stages(
    pipeline: RecallPipeline, recall: RecallConfig | None, reranker: Reranker | None
) -> Iterator[None]:
    """The pipeline with this recall configuration (``None``: its own) and reranker, restored after."""
    kept = pipeline.reranker, pipeline.config
    pipeline.reranker = reranker
    pipeline.config = recall or pipeline.config
    try:
        yield
    finally:
        pipeline.reranker, pipeline.config = kept
