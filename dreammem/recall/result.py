"""What recall returns: hits that explain themselves."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dreammem.recall.packing import PackedContext, pack_hits
from dreammem.types import MemoryRecord

if TYPE_CHECKING:
    from dreammem.text.tokens import TokenCounter

__all__ = ["DEFAULT_BUDGET_TOKENS", "Hit", "RecallResult"]

DEFAULT_BUDGET_TOKENS = 2457
"""30% of an 8192-token window: the budget when no config says otherwise."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory with its trace.

    Attributes:
        record: The memory (``record.id`` is the trace id).
        score: The final score that ordered the hits, 0..1 (see :mod:`dreammem.recall.scoring`).
        paths: Names of the recall paths that found it.
        ranks: Its 1-based rank in each path that found it.
        path_scores: The raw score each path gave it.
        fused_score: Its raw reciprocal-rank-fusion score.
        fused_rank: Its 1-based rank after fusion (None for a pinned memory no path found).
        rerank_score: The reranker's raw score, when a reranker ran over it.
        rerank_rank: Its 1-based rank by the reranker, when a reranker ran over it.
        decay: The time-decay factor applied (1.0 = none).
        outdated_by: Ids of newer active memories about the same subject that may have
            replaced this one (the write path was not sure enough to supersede it); the
            memory block marks such a hit as earlier / possibly outdated.
        timed: Whether a path found it by its time (it lies in the time window the query
            names), so that the relevance floor did not judge its content.
    """

    record: MemoryRecord
    score: float
    paths: tuple[str, ...]
    ranks: Mapping[str, int] = field(default_factory=dict)
    path_scores: Mapping[str, float] = field(default_factory=dict)
    fused_score: float = 0.0
    fused_rank: int | None = None
    rerank_score: float | None = None
    rerank_rank: int | None = None
    decay: float = 1.0
    outdated_by: tuple[str, ...] = ()
    timed: bool = False

    @property
    def id(self) -> str:
        """The trace id of the memory."""
        return self.record.id

    def trace(self) -> dict[str, Any]:
        """Everything that explains this hit, JSON-friendly."""
        return {
            "id": self.record.id,
            "paths": list(self.paths),
            "ranks": dict(self.ranks),
            "path_scores": dict(self.path_scores),
            "fused_score": self.fused_score,
            "fused_rank": self.fused_rank,
            "rerank_score": self.rerank_score,
            "rerank_rank": self.rerank_rank,
            "decay": self.decay,
            "score": self.score,
            "pinned": self.record.pinned,
            "outdated_by": list(self.outdated_by),
            "timed": self.timed,
        }


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The hits of one recall, in order, and how it went.

    Iterating yields :class:`Hit` objects.

    Attributes:
        query: The query text.
        user_id: The scope it ran in.
        hits: The hits, in order.
        degraded: Paths or stages that failed and were left out, with the reason.
        timings_ms: Time spent per path/stage, in milliseconds (``total`` for all).
        budget_tokens: Default token budget of :meth:`to_context` (from the recall config:
            ``model_window_tokens * budget_fraction``).
    """

    query: str
    user_id: str
    hits: tuple[Hit, ...]
    degraded: Mapping[str, str] = field(default_factory=dict)
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    budget_tokens: int = DEFAULT_BUDGET_TOKENS

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]

    @property
    def records(self) -> list[MemoryRecord]:
        """The recalled records, in order."""
        return [h.record for h in self.hits]

    @property
    def ids(self) -> list[str]:
        """The trace ids, in order."""
        return [h.record.id for h in self.hits]

    def to_context(
        self, max_tokens: int | None = None, *, counter: TokenCounter | None = None
    ) -> PackedContext:
        """Render the hits as one escaped ``<memory>`` block under a token budget.

        Args:
            max_tokens: The budget; default :attr:`budget_tokens` (from the recall config).
            counter: Token counter; default is an approximate one needing no download.

        Returns:
            A :class:`~dreammem.recall.packing.PackedContext`; ``str()`` of it is the block,
            ``.dropped`` lists the trace ids that did not fit.
        """
        budget = self.budget_tokens if max_tokens is None else max_tokens
        return pack_hits(self.hits, max_tokens=budget, counter=counter)
