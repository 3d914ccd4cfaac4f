"""Running ``bench longmemeval``: every method on every question, then folds over variants.

Each question's haystack is indexed by every method in turn (they share one embedder),
then each method ranks its items and the ranking is scored at once, so a run holds
scores, not stores. :func:`choose_by_folds` picks, for each fold of questions, the
variant that scores best on the other folds and reports its score on the fold left out:
what a tuned choice is worth on questions nobody tuned it on.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dreammem_bench.lme_methods import LmeMethod
from dreammem_bench.lme_metrics import LmeOutcome, score_lme
from dreammem_bench.longmemeval import LmeQuestion

__all__ = ["FoldChoice", "choose_by_folds", "fold_of", "run_lme"]


def run_lme(
    questions: Sequence[LmeQuestion],
    methods: Sequence[LmeMethod],
    *,
    k: int = 10,
    on_question: Callable[[int], None] | None = None,
) -> dict[str, list[LmeOutcome]]:
    """Score every method on every question (methods that index before their variants)."""
    outcomes: dict[str, list[LmeOutcome]] = {m.name: [] for m in methods}
    for number, question in enumerate(questions, 1):
        for method in methods:
            method.index(question)
        kind = "abstention" if question.abstention else question.question_type
        for method in methods:
            items = method.rank(question, k)
            scores = (
                {} if question.abstention else score_lme(items, question.answer_sessions, question.gold_turns)
            )
            outcomes[method.name].append(LmeOutcome(question.question_id, kind, scores, len(items)))
        if on_question is not None:
            on_question(number)
    return outcomes


def fold_of(question_id: str, folds: int) -> int:
    """A question's fold: a stable hash of its id (the same in every run and file order)."""
    return int.from_bytes(hashlib.sha1(question_id.encode()).digest()[:4], "big") % folds


@dataclass(frozen=True, slots=True)
class FoldChoice:
    """The folds' verdict on a set of variants.

    Attributes:
        chosen: The variant each fold chose on the others.
        held_out: Each fold's score of its choice on its own questions.
        pooled: The held-out score over all questions (each scored by its fold's choice).
        per_variant: Each variant's score over all questions (not held out).
    """

    chosen: tuple[str, ...]
    held_out: tuple[float, ...]
    pooled: float
    per_variant: Mapping[str, float]

    @property
    def spread(self) -> tuple[float, float, float]:
        """Min, median and max of the folds' held-out scores."""
        return min(self.held_out), statistics.median(self.held_out), max(self.held_out)


def _mean(outcomes: Sequence[LmeOutcome], metric: str) -> float:
    values = [
        v for o in outcomes if o.question_type != "abstention" and not math.isnan(v := o.scores[metric])
    ]
    return sum(values) / len(values) if values else math.nan


def choose_by_folds(
    outcomes: Mapping[str, Sequence[LmeOutcome]], variants: Sequence[str], metric: str, *, folds: int = 5
) -> FoldChoice:
    """Per fold, the variant with the best ``metric`` on the other folds (ties: the first listed)."""
    chosen, held, pooled = [], [], []
    for fold in range(folds):
        train = {v: [o for o in outcomes[v] if fold_of(o.question_id, folds) != fold] for v in variants}
        best = max(variants, key=lambda v: (_mean(train[v], metric), -variants.index(v)))
        test = [o for o in outcomes[best] if fold_of(o.question_id, folds) == fold]
        chosen.append(best)
        held.append(_mean(test, metric))
        pooled.extend(test)
    return FoldChoice(
        tuple(chosen), tuple(held), _mean(pooled, metric), {v: _mean(outcomes[v], metric) for v in variants}
    )
