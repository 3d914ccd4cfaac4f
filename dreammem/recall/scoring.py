"""Pure scoring functions of the recall stages: normalisation, rerank blend, decay, floors.

Final scores live on one scale, 0..1, whatever stages ran, so that per-layer floors
mean the same thing with or without a reranker:

* first stage: the reciprocal-rank-fusion score divided by the best score possible
  (rank 1 in every path that returned something) - 1.0 is "first everywhere";
* with a reranker (``blend="rrf"``): ``(1/(k + fused_rank) + w/(k + rerank_rank))``
  divided by its maximum ``(1 + w)/(k + 1)``; candidates past the reranked head keep
  only their first-stage term, so they stay below the head;
* with ``blend="replace"``: ``(k + 1)/(k + rerank_rank)``, the reranker's order alone;
* time decay multiplies the score of episodic memories by ``0.5 ** (age / half_life)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from dreammem.config import RecallConfig
from dreammem.types import Layer, MemoryRecord

__all__ = ["decay_factor", "fusion_ceiling", "passes_floor", "rank_order", "rerank_score"]


def fusion_ceiling(
    path_sizes: Mapping[str, int], *, k: int, weights: Mapping[str, float] | None = None
) -> float:
    """The best fused score possible: rank 1 in every path that returned candidates."""
    total = sum((1.0 if weights is None else weights.get(p, 1.0)) for p, n in path_sizes.items() if n > 0)
    return total / (k + 1) if total > 0 else 1.0


def rank_order(scores: Sequence[float]) -> list[int]:
    """1-based ranks of the scores, highest first; ties keep their input order."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    ranks = [0] * len(scores)
    for rank, index in enumerate(order, 1):
        ranks[index] = rank
    return ranks


def rerank_score(fused_rank: int, rerank_rank: int | None, *, k: int, blend: str, weight: float) -> float:
    """The 0..1 score of a candidate after the rerank stage.

    Args:
        fused_rank: Its 1-based rank after fusion.
        rerank_rank: Its 1-based rank by the reranker, or None past the reranked head.
        k: The reciprocal-rank constant.
        blend: ``"rrf"`` (fuse the two ranks) or ``"replace"`` (reranker rank only).
        weight: Weight of the reranker's rank in the ``"rrf"`` blend.
    """
    if blend == "replace":
        if rerank_rank is None:
            return (k + 1) / (k + fused_rank) / 2.0  # past the head: below every reranked hit
        return (k + 1) / (k + rerank_rank)
    value = 1.0 / (k + fused_rank)
    if rerank_rank is not None:
        value += weight / (k + rerank_rank)
    return value * (k + 1) / (1.0 + weight)


def decay_factor(record: MemoryRecord, now: datetime, half_life_days: float | None) -> float:
    """``0.5 ** (age / half_life)`` for episodic, unpinned memories; 1.0 otherwise or when off."""
    if half_life_days is None or record.layer is not Layer.EPISODIC or record.pinned:
        return 1.0
    age_days = max(0.0, (now - record.event_time).total_seconds() / 86_400)
    return float(0.5 ** (age_days / half_life_days))


def passes_floor(record: MemoryRecord, score: float, config: RecallConfig) -> bool:
    """Whether a hit clears the score floor of its layer (pinned memories always do)."""
    if record.pinned:
        return True
    if record.layer is Layer.SEMANTIC:
        return score >= config.min_score_semantic
    if record.layer is Layer.EPISODIC:
        return score >= config.min_score_episodic
    return True
