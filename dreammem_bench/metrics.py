"""Retrieval metrics for evidence-scored benchmarks.

A retrieved memory may come from several source turns (a distilled memory), so a
ranked list is a sequence of sets of turn ids. A position is a *hit* when its set
meets the gold evidence. Pure functions, no I/O.

Metric keys (the benchmark's JSON contract): ``hit@1``, ``hit@5``, ``hit@10``,
``recall@5``, ``recall@10`` (share of gold turns covered by the top k), ``mrr``
(reciprocal rank of the first hit within the retrieved list, 0 when none),
``s_hit@5`` and ``s_hit@10`` (session level, the unit peers publish: a gold turn's
session among the first k distinct sessions of the list; a turn id's session is the
part before its last ``:``, ``"D3:7"`` -> ``"D3"``) and ``n``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ADVERSARIAL",
    "METRIC_KEYS",
    "QuestionOutcome",
    "aggregate",
    "percentile",
    "score_question",
    "summarize",
]

METRIC_KEYS = ("hit@1", "hit@5", "hit@10", "recall@5", "recall@10", "mrr", "s_hit@5", "s_hit@10", "n")
ADVERSARIAL = 5
"""The category scored apart from the overall numbers."""


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    """What one method retrieved for one question.

    Attributes:
        category: The question's category.
        gold: The gold evidence turn ids.
        retrieved: For each retrieved memory, best first, the turn ids it came from.
    """

    category: int
    gold: frozenset[str]
    retrieved: tuple[frozenset[str], ...]


def score_question(gold: Iterable[str], retrieved: Sequence[Iterable[str]]) -> dict[str, float]:
    """Score one ranked list against its gold evidence.

    Args:
        gold: The gold turn ids (at least one).
        retrieved: The source turn ids of each retrieved memory, best first.

    Returns:
        Every metric key except ``n``.

    Raises:
        ValueError: ``gold`` is empty.
    """
    targets = frozenset(gold)
    if not targets:
        raise ValueError("a question needs at least one gold turn")
    sources = [frozenset(r) for r in retrieved]
    first = next((i for i, s in enumerate(sources, 1) if s & targets), None)

    def hit(k: int) -> float:
        return 1.0 if first is not None and first <= k else 0.0

    def recall(k: int) -> float:
        covered = frozenset().union(*sources[:k]) if sources[:k] else frozenset()
        return len(covered & targets) / len(targets)

    gold_sessions = {_session(t) for t in targets}
    sessions = list(dict.fromkeys(_session(t) for s in sources for t in sorted(s)))

    def session_hit(k: int) -> float:
        return 1.0 if gold_sessions & set(sessions[:k]) else 0.0

    return {
        "s_hit@5": session_hit(5),
        "s_hit@10": session_hit(10),
        "hit@1": hit(1),
        "hit@5": hit(5),
        "hit@10": hit(10),
        "recall@5": recall(5),
        "recall@10": recall(10),
        "mrr": 0.0 if first is None else 1.0 / first,
    }


def _session(turn_id: str) -> str:
    return turn_id.rpartition(":")[0] or turn_id


def aggregate(scores: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each metric over questions, plus ``n`` (zeros when there are none)."""
    out = {key: 0.0 for key in METRIC_KEYS}
    out["n"] = float(len(scores))
    if scores:
        for key in METRIC_KEYS[:-1]:
            out[key] = sum(s[key] for s in scores) / len(scores)
    return out


def summarize(outcomes: Iterable[QuestionOutcome]) -> dict[str, object]:
    """Overall (every category but the adversarial one), adversarial, and per category."""
    by_category: dict[int, list[dict[str, float]]] = {}
    for outcome in outcomes:
        by_category.setdefault(outcome.category, []).append(score_question(outcome.gold, outcome.retrieved))
    overall = [s for c, items in by_category.items() if c != ADVERSARIAL for s in items]
    return {
        "overall": _with_int_n(aggregate(overall)),
        "adversarial": _with_int_n(aggregate(by_category.get(ADVERSARIAL, []))),
        "by_category": {str(c): _with_int_n(aggregate(by_category[c])) for c in sorted(by_category)},
    }


def _with_int_n(metrics: dict[str, float]) -> dict[str, float]:
    rounded: dict[str, float] = {k: round(v, 4) for k, v in metrics.items()}
    rounded["n"] = int(metrics["n"])
    return rounded


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
