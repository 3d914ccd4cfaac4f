"""The methods ``bench longmemeval`` compares on one question's haystack at a time.

- ``bm25``: ``bm25s`` over each turn's text (DreamMem's tokenizer).
- ``minilm``: cosine of MiniLM vectors of the question and each turn.
- ``fusion``: reciprocal rank fusion (k=60) of the two, each 30 deep.
- ``minilm-session``: cosine of the question and each whole session (one text).
- ``dreammem``: :meth:`DreamMemory.recall` on a fresh in-memory store holding the
  haystack, written through the public API (``add_many`` per session, role,
  session id and time of each turn); variants recall the same store with another
  recall configuration (presets, paths off).
- ``dreammem+dream``: the same, on a store that dreamed once (rules, no LLM) after
  the haystack was written: what recall finds in a store its owner let consolidate.

All of them share one embedder, so a text is encoded once per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.recall.base import Candidate
from dreammem.recall.fusion import reciprocal_rank_fusion
from dreammem.text.tokenize import query_terms, tokenize
from dreammem.types import MemoryRecord
from dreammem_bench.lme_metrics import Item
from dreammem_bench.longmemeval import LmeQuestion
from dreammem_bench.methods import swapped_stages

__all__ = [
    "BM25Turns",
    "DreamMemHaystack",
    "FusionTurns",
    "LmeMethod",
    "MiniLMSessions",
    "MiniLMTurns",
    "RecallVariant",
]

_DEPTH = 30


class LmeMethod(Protocol):
    """A retrieval method: index one haystack, then rank items for its question."""

    name: str

    def index(self, question: LmeQuestion) -> None:
        """Take in the question's haystack (replacing any before)."""
        ...

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """The top k items for the question, best first."""
        ...


def _turn_items(question: LmeQuestion, positions: Sequence[int]) -> list[Item]:
    turns = question.turns
    return [(turns[i].session_id, turns[i].turn_id) for i in positions]


class _Cosine:
    """Cosine of the question to each of a haystack's texts (exact, numpy); subclasses say which texts."""

    def __init__(self, embedder: Embedder, name: str) -> None:
        self.name = name
        self._embedder = embedder
        self._vectors: Any = None

    def texts(self, question: LmeQuestion) -> list[str]:
        """The texts ranked, in haystack order."""
        raise NotImplementedError

    def index(self, question: LmeQuestion) -> None:
        """Embed every text."""
        self._vectors = self._embedder.embed_documents(self.texts(question))

    def positions(self, question: LmeQuestion, depth: int) -> list[int]:
        """Text positions, most similar first."""
        scores = self._vectors @ self._embedder.embed_query(question.question)
        return [int(i) for i in np.argsort(-scores, kind="stable")[:depth]]


class MiniLMTurns(_Cosine):
    """Cosine of the question to each turn."""

    def __init__(self, embedder: Embedder, name: str = "minilm") -> None:
        super().__init__(embedder, name)

    def texts(self, question: LmeQuestion) -> list[str]:
        """Each turn's text."""
        return [t.content for t in question.turns]

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """The k nearest turns."""
        return _turn_items(question, self.positions(question, k))


class BM25Turns:
    """``bm25s`` (Lucene BM25) over each turn's text."""

    def __init__(self, name: str = "bm25") -> None:
        self.name = name
        self._retriever: Any = None
        self._size = 0

    def index(self, question: LmeQuestion) -> None:
        """Tokenise every turn and build the index."""
        import bm25s  # noqa: PLC0415 - heavy (scipy): only the BM25 baselines need it

        self._retriever = bm25s.BM25()
        self._retriever.index([tokenize(t.content) for t in question.turns], show_progress=False)
        self._size = len(question.turns)

    def positions(self, question: LmeQuestion, depth: int) -> list[int]:
        """Turn positions with a positive score, best first."""
        vocab = self._retriever.vocab_dict
        terms = [t for t in query_terms(question.question) if t in vocab]
        if not terms:
            return []
        ids, scores = self._retriever.retrieve([terms], k=min(depth, self._size), show_progress=False)
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """The k best-scoring turns."""
        return _turn_items(question, self.positions(question, k))


class FusionTurns:
    """Reciprocal rank fusion (k=60) of the BM25 and MiniLM turn rankings, 30 deep each."""

    def __init__(self, bm25: BM25Turns, minilm: MiniLMTurns, name: str = "fusion") -> None:
        self.name = name
        self._bm25 = bm25
        self._minilm = minilm

    def index(self, question: LmeQuestion) -> None:
        """Nothing: the two methods it fuses index the haystack themselves."""

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """The top k of the fused lists."""
        depth = max(_DEPTH, k)
        lists = {
            "bm25": self._bm25.positions(question, depth),
            "minilm": self._minilm.positions(question, depth),
        }
        fused = reciprocal_rank_fusion(
            {n: [Candidate(i, 0.0) for i in ids] for n, ids in lists.items()}, k=60
        )
        return _turn_items(question, [f.rowid for f in fused[:k]])


class MiniLMSessions(_Cosine):
    """Cosine of the question to each whole session (its turns joined, as the model truncates them)."""

    def __init__(self, embedder: Embedder, name: str = "minilm-session") -> None:
        super().__init__(embedder, name)

    def texts(self, question: LmeQuestion) -> list[str]:
        """Each session as one text."""
        return [s.text for s in question.sessions]

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """The k nearest sessions."""
        return [(question.sessions[i].session_id, None) for i in self.positions(question, k)]


class DreamMemHaystack:
    """DreamMem on a fresh in-memory store per question (user id = question id).

    Args:
        config: The store's configuration.
        embedder: The shared embedder.
        name: The method name in the report.
        dream: Dream once (rules, no LLM) at the question's date after writing the haystack.
    """

    def __init__(
        self, config: DreamMemConfig, embedder: Embedder, name: str = "dreammem", *, dream: bool = False
    ) -> None:
        self.name = name
        self.config = config
        self.dream = dream
        self._embedder = embedder
        self.memory: DreamMemory | None = None
        self._turns: dict[str, tuple[str, str]] = {}
        self.pinned_hits: set[str] = set()
        """Ids of the questions whose recall returned a pinned memory (left out of the ranking)."""

    def index(self, question: LmeQuestion) -> None:
        """Write the haystack session by session through ``add_many``."""
        if self.memory is not None:
            self.memory.close()
        self.memory = DreamMemory(None, config=self.config, embedder=self._embedder)
        self._turns = {}
        for session in question.sessions:
            turns = [
                {
                    "content": t.content,
                    "user_id": question.question_id,
                    "session_id": t.session_id,
                    "role": t.role,
                    "event_time": t.time,
                    "metadata": {"turn_id": t.turn_id},
                }
                for t in session.turns
                if t.content.strip()
            ]
            for record in self.memory.add_many(turns):
                self._turns[record.id] = (str(record.session_id), str(record.metadata["turn_id"]))
        if self.dream:
            self.memory.dream(user_id=question.question_id, now=question.date)

    def rank(self, question: LmeQuestion, k: int, recall: RecallConfig | None = None) -> list[Item]:
        """Recall k memories at the question's date, as (session, turn) items (pinned left out)."""
        assert self.memory is not None, "index the question first"
        pipeline = self.memory.pipeline
        with swapped_stages(pipeline, recall, pipeline.reranker):
            hits = self.memory.recall(question.question, user_id=question.question_id, k=k, now=question.date)
        items: list[Item] = []
        for hit in hits:
            if hit.record.pinned:
                self.pinned_hits.add(question.question_id)
                continue
            found = self._source(hit.record)
            if found is not None:
                items.append(found)
        return items[:k]

    def _source(self, record: MemoryRecord) -> Item | None:
        """The turn a record is (or was written from, through its provenance), else its session."""
        assert self.memory is not None
        if (turn := self._turns.get(record.id)) is not None:
            return turn
        for parent in self.memory.store.get(record.user_id, list(record.provenance)):
            if (turn := self._turns.get(parent.id)) is not None:
                return turn
        return None if record.session_id is None else (record.session_id, None)

    def close(self) -> None:
        """Close the last store."""
        if self.memory is not None:
            self.memory.close()


class RecallVariant:
    """The base method's store, recalled with another recall configuration."""

    def __init__(self, base: DreamMemHaystack, recall: RecallConfig, name: str) -> None:
        self.name = name
        self._base = base
        self._recall = recall

    def index(self, question: LmeQuestion) -> None:
        """Nothing: the base method's store holds the haystack."""

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """Recall with this variant's configuration."""
        return self._base.rank(question, k, recall=self._recall)
