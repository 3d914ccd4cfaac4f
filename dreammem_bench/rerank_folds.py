"""Reranker training measured by folds: what each fold trains on, cached scores, the blend chosen by folds.

Each fold's scored conversations get a cross-encoder trained without their
questions: on the *other* conversations' questions (and observations), BM25 hard
negatives (:func:`dreammem_bench.pairs.locomo_query_groups`).

With several blend weights the reranker's scores are cached, so each extra weight
costs a first stage only; :func:`choose_weight_by_folds` then picks, for each
held-out conversation, the weight that did best on the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dreammem.recall.pipeline import Reranker
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.metrics import ADVERSARIAL, QuestionOutcome, score_question, summarize
from dreammem_bench.runner import MethodRun

__all__ = [
    "CachedReranker",
    "WeightFold",
    "choose_weight_by_folds",
]


class CachedReranker:
    """A reranker whose scores are remembered per (query, text): blend variants share them."""

    def __init__(self, inner: Reranker) -> None:
        self.inner = inner
        self.name = inner.name
        self._seen: dict[tuple[str, str], float] = {}

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The inner reranker's scores, computed once per pair."""
        missing = [t for t in dict.fromkeys(texts) if (query, t) not in self._seen]
        if missing:
            for text, value in zip(missing, self.inner.score(query, missing), strict=True):
                self._seen[(query, text)] = value
        return [self._seen[(query, t)] for t in texts]


@dataclass(frozen=True, slots=True)
class WeightFold:
    """One held-out conversation: the weight chosen on the others, and its scores.

    Attributes:
        held_out: The conversation scored.
        chosen: The method chosen on the other conversations (a weight variant or no rerank).
        train_hit5: The chosen method's pooled hit@5 on the other conversations.
        held: Held-out overall metrics of the chosen method.
        baseline: Held-out overall metrics without rerank.
        fixed: Held-out overall metrics of each candidate method.
    """

    held_out: str
    chosen: str
    train_hit5: float
    held: Mapping[str, float]
    baseline: Mapping[str, float]
    fixed: Mapping[str, Mapping[str, float]]


def _by_conversation(
    run: MethodRun, conversations: Sequence[LocomoConversation]
) -> dict[str, list[QuestionOutcome]]:
    # run_benchmark appends each conversation's questions in order.
    out: dict[str, list[QuestionOutcome]] = {}
    start = 0
    for conversation in conversations:
        out[conversation.sample_id] = run.outcomes[start : start + len(conversation.questions)]
        start += len(conversation.questions)
    if start != len(run.outcomes):
        raise ValueError(f"{run.name}: {len(run.outcomes)} outcomes for {start} questions")
    return out


def _overall(outcomes: Sequence[QuestionOutcome]) -> dict[str, float]:
    overall = summarize(outcomes)["overall"]
    assert isinstance(overall, dict)
    return overall


def _hit5_mrr(outcomes: Sequence[QuestionOutcome]) -> tuple[float, float]:
    scores = [score_question(o.gold, o.retrieved) for o in outcomes if o.category != ADVERSARIAL]
    if not scores:
        return 0.0, 0.0
    return sum(s["hit@5"] for s in scores) / len(scores), sum(s["mrr"] for s in scores) / len(scores)


def choose_weight_by_folds(
    runs: Mapping[str, MethodRun],
    conversations: Sequence[LocomoConversation],
    candidates: Sequence[str],
    *,
    baseline: str = "dreammem-no-rerank",
    prefer: Callable[[str], float] | None = None,
) -> list[WeightFold]:
    """For each conversation, the candidate with the best pooled hit@5 (then MRR) on the others.

    Args:
        runs: The runs, in the order the conversations were scored.
        conversations: The conversations, as scored.
        candidates: The methods to choose among (the baseline may be one of them).
        baseline: The method without rerank.
        prefer: Breaks the remaining ties: the candidate with the lowest value wins
            (default: the order of ``candidates``).
    """
    split = {name: _by_conversation(runs[name], conversations) for name in {*candidates, baseline}}
    tie = prefer or (lambda name: float(candidates.index(name)))
    folds: list[WeightFold] = []
    for held in conversations:
        others = [c.sample_id for c in conversations if c.sample_id != held.sample_id]

        def train_score(name: str, others: Sequence[str] = others) -> tuple[float, float, float]:
            hit5, mrr = _hit5_mrr([o for c in others for o in split[name][c]])
            return hit5, mrr, -tie(name)

        chosen = max(candidates, key=train_score)
        folds.append(
            WeightFold(
                held_out=held.sample_id,
                chosen=chosen,
                train_hit5=round(train_score(chosen)[0], 4),
                held=_overall(split[chosen][held.sample_id]),
                baseline=_overall(split[baseline][held.sample_id]),
                fixed={name: _overall(split[name][held.sample_id]) for name in candidates},
            )
        )
    return folds
