"""Fitting the learned rank model (:mod:`dreammem.recall.learned_rank`) on recorded candidates.

A :class:`CandidateRecorder` takes the place of the model in a recall and keeps each
candidate's features and the LongMemEval turn it came from (``metadata["turn_id"]``,
written by the bench), leaving the fused order as it was. :func:`fit_logistic` fits an
L2-regularised logistic regression by Newton's method (numpy only), each question
weighing the same; :func:`top_hit_rate` scores an order offline (no relevance gate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from dreammem.config import RecallConfig
from dreammem.recall.base import RecallQuery
from dreammem.recall.learned_rank import FEATURES, LearnedRank, candidate_features
from dreammem.recall.scored import Scored

__all__ = ["CandidateRecorder", "Recorded", "fit_logistic", "fit_weights", "top_hit_rate"]

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recall's candidates: their features and the turn ids each stands for (its twins too)."""

    features: Matrix
    turns: tuple[tuple[str, ...], ...]


@dataclass(slots=True)
class CandidateRecorder:
    """A stand-in for the model that records the candidates and leaves their scores alone."""

    recorded: list[Recorded] = field(default_factory=list)

    def order(self, query: RecallQuery, scored: Sequence[Scored], config: RecallConfig) -> None:
        """Keep the candidates' features and turn ids."""
        turns = tuple(
            tuple(str(r.metadata["turn_id"]) for r in (s.record, *s.twins) if "turn_id" in r.metadata)
            for s in scored
        )
        self.recorded.append(Recorded(candidate_features(query, scored), turns))


def fit_logistic(
    x: Matrix,
    y: npt.NDArray[np.float64],
    groups: Sequence[str],
    *,
    l2: float = 1.0,
    features: Sequence[str] = FEATURES,
    iterations: int = 50,
) -> LearnedRank:
    """An L2 logistic model of ``y`` on the named columns of ``x``; every group (question) weighs the same.

    Within a question, the rows of each label value together weigh 1 (the positives as much as
    the negatives; soft labels, such as other turns of an evidence session, as a class of their own).
    """
    columns = [FEATURES.index(f) for f in features]
    mean, scale, beta = fit_weights(x[:, columns], y, groups, l2=l2, iterations=iterations)
    return LearnedRank(
        features=tuple(features),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        weights=tuple(float(v) for v in beta[:-1]),
        bias=float(beta[-1]),
    )


def fit_weights(
    data: Matrix,
    y: npt.NDArray[np.float64],
    groups: Sequence[str],
    *,
    l2: float = 1.0,
    iterations: int = 50,
) -> tuple[Matrix, Matrix, Matrix]:
    """The columns' means and scales, and the logistic weights over standardised ``data`` (intercept last)."""
    mean = data.mean(axis=0)
    scale = data.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(data - mean) / scale, np.ones((len(data), 1))])
    weight = _weights(y, groups)
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2 / max(len(set(groups)), 1))
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        gradient = z.T @ (weight * (p - y)) + penalty * beta
        hessian = z.T @ (z * (weight * p * (1 - p))[:, None]) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return mean, scale, beta


def _weights(y: npt.NDArray[np.float64], groups: Sequence[str]) -> npt.NDArray[np.float64]:
    """Per row: 1 / (rows of its label in its group), so each label of a question weighs 1 in all."""
    keys = np.asarray([f"{g}\x00{v}" for g, v in zip(groups, y, strict=True)])
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return np.asarray(1.0 / counts[inverse], dtype=np.float64)


def top_hit_rate(scores: Sequence[Matrix], labels: Sequence[npt.NDArray[np.float64]], k: int = 5) -> float:
    """Share of questions with an evidence candidate among the ``k`` best by score (offline, no gate)."""
    hits = [
        float(y[np.argsort(-s, kind="stable")[:k]].any())
        for s, y in zip(scores, labels, strict=True)
        if y.any()
    ]
    return sum(hits) / len(hits) if hits else float("nan")
