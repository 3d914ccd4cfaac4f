"""The learned rank stage: a small logistic model reorders the fused candidates.

On by default (``RecallConfig.learned_rank``; a configured cross-encoder reranker takes its
place; docs/BENCHMARKS.md, "Session 25", has the numbers). It reads only what the pipeline
already computed for each fused candidate, so it costs well under a millisecond per recall:

- per first-stage path (vector, keyword, temporal, reply): whether it found the memory,
  ``1 / rank`` and ``rank / depth`` (a stand-in path's rank counts as the path it stands
  in for, :attr:`~dreammem.recall.recipe.PathSpec.stands_in_for`);
- the fused score and rank, how many paths found it, whether only the neighbour path did;
- its cosine to the query (and that minus the best cosine of the list), the keyword
  path's BM25 score against the list's best, the share of the query's terms it holds;
- its role, layer, length, whether it was found by its time, and its age at ``now``
  (in days, and as its place among the candidates from newest to oldest).

The model (weights, and each feature's mean and scale) is a small JSON file: the one
shipped in the package (:func:`packaged_model`) was trained only on LongMemEval (MIT: the
``train`` split, the development questions and the held ones already scored) by
``python -m dreammem_bench.train_rank``, on the features that
name no path (fused score and rank, paths, cosine, BM25 and term share, role, length):
the per-path ones fitted LongMemEval's shape and lost on LoCoMo. Its probability of
"this memory is evidence" ranks the candidates; that rank is fused with the first-stage
rank, weighted by ``RecallConfig.learned_rank_weight`` (the ``rrf`` blend of
:mod:`dreammem.recall.scoring`; ``None``: ``(k + 1) / (k + learned rank)``, the model
alone), so scores stay on the 0..1 scale and per-layer floors keep their meaning.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from dreammem.config import RecallConfig
from dreammem.errors import ConfigError
from dreammem.recall.base import RecallQuery
from dreammem.recall.recipe import PATHS, PathSpec, found_beside_only
from dreammem.recall.scored import Scored
from dreammem.recall.scoring import rank_order, rerank_score
from dreammem.text.tokenize import contains_cjk, query_terms, tokenize
from dreammem.types import Layer, Role

__all__ = [
    "FEATURES",
    "CandidateRanker",
    "LearnedRank",
    "candidate_features",
    "packaged_model",
]

RANKED_PATHS = ("vector", "keyword", "temporal", "reply")
"""The paths whose own rank is a feature (the others count through the fused score)."""

FEATURES: tuple[str, ...] = (
    *(f"{kind}:{path}" for path in RANKED_PATHS for kind in ("in", "rr", "depth")),
    "fused_score",
    "fused_rr",
    "fused_depth",
    "paths",
    "beside_only",
    "similarity",
    "similarity_gap",
    "no_similarity",
    "bm25_share",
    "term_share",
    "role_user",
    "role_assistant",
    "semantic",
    "log_chars",
    "timed",
    "log_age_days",
    "recency_place",
)
"""Every feature :func:`candidate_features` computes, in column order."""

_MODEL_FILE = "learned_rank.json"
_DEPTH = 30.0
"""Path ranks are read as a share of this depth (the default ``candidates_per_path``)."""


class CandidateRanker(Protocol):
    """Reorders a recall's fused candidates by setting their ``score`` (0..1)."""

    def order(self, query: RecallQuery, scored: Sequence[Scored], config: RecallConfig) -> None:
        """Give each candidate its new score."""
        ...


def candidate_features(
    query: RecallQuery, scored: Sequence[Scored], specs: Mapping[str, PathSpec] = PATHS
) -> npt.NDArray[np.float64]:
    """One row of :data:`FEATURES` per candidate (relative features over this list)."""
    n = len(scored)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    column = {name: i for i, name in enumerate(FEATURES)}
    depth = float(max(n, 1))
    sims = [s.fused.similarity for s in scored]
    known = [v for v in sims if v is not None]
    best_sim = max(known) if known else 0.0
    floor_sim = min(known) if known else 0.0
    bm25 = [s.fused.path_scores.get("keyword", 0.0) for s in scored]
    best_bm25 = max(bm25) if bm25 and max(bm25) > 0 else 1.0
    share = _term_share(query.text)
    ages = [max(0.0, (query.now - s.record.event_time).total_seconds() / 86_400) for s in scored]
    newest_first = rank_order([-a for a in ages])
    for row, item in enumerate(scored):
        values = out[row]
        found = _path_ranks(item.fused.ranks, specs)
        for path in RANKED_PATHS:
            rank = found.get(path)
            values[column[f"in:{path}"]] = float(rank is not None)
            values[column[f"rr:{path}"]] = 0.0 if rank is None else 1.0 / rank
            values[column[f"depth:{path}"]] = 1.0 if rank is None else min(rank / _DEPTH, 1.0)
        values[column["fused_score"]] = item.score
        values[column["fused_rr"]] = 1.0 / max(item.fused_rank, 1)
        values[column["fused_depth"]] = item.fused_rank / depth
        values[column["paths"]] = float(len(item.fused.ranks))
        values[column["beside_only"]] = float(found_beside_only(item.fused.ranks, specs))
        sim = sims[row]
        values[column["similarity"]] = floor_sim if sim is None else sim
        values[column["similarity_gap"]] = (floor_sim if sim is None else sim) - best_sim
        values[column["no_similarity"]] = float(sim is None)
        values[column["bm25_share"]] = bm25[row] / best_bm25
        values[column["term_share"]] = share(item.record.content)
        record = item.record
        values[column["role_user"]] = float(record.role is Role.USER)
        values[column["role_assistant"]] = float(record.role is Role.ASSISTANT)
        values[column["semantic"]] = float(record.layer is Layer.SEMANTIC)
        values[column["log_chars"]] = math.log1p(len(record.content))
        values[column["timed"]] = float(item.fused.timed)
        values[column["log_age_days"]] = math.log1p(ages[row])
        values[column["recency_place"]] = (newest_first[row] - 1) / depth
    return out


def _term_share(query: str) -> Callable[[str], float]:
    """The share of the query's terms a text holds, as whole words (:func:`query_terms`).

    Found by substring search with a word-boundary check (much faster than tokenising long
    turns, same answer); a text with CJK characters is tokenised as the keyword index does.
    """
    terms = set(query_terms(query))
    if not terms:
        return lambda text: 0.0
    cjk = contains_cjk(query)

    def share(text: str) -> float:
        if cjk or (not text.isascii() and contains_cjk(text)):
            return len(terms & set(tokenize(text))) / len(terms)
        low = text.lower().replace("’", "'")
        return sum(1 for t in terms if _holds_word(low, t)) / len(terms)

    return share


def _holds_word(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as a whole token (as :func:`tokenize` cuts them)."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = start == 0 or not (
            text[start - 1].isalnum() or (text[start - 1] == "'" and start > 1 and text[start - 2].isalnum())
        )
        after = end == len(text) or not (
            text[end].isalnum() or (text[end] == "'" and end + 1 < len(text) and text[end + 1].isalnum())
        )
        if before and after:
            return True
        start = text.find(word, start + 1)
    return False


def _path_ranks(ranks: Mapping[str, int], specs: Mapping[str, PathSpec]) -> dict[str, int]:
    """The rank in each of :data:`RANKED_PATHS`, a stand-in's rank counted as its path's."""
    out = {p: r for p, r in ranks.items() if p in RANKED_PATHS}
    for path, rank in ranks.items():
        spec = specs.get(path)
        target = None if spec is None else spec.stands_in_for
        if target in RANKED_PATHS and target not in out:
            out[target] = rank
    return out


@dataclass(frozen=True, slots=True)
class LearnedRank:
    """A logistic model over :func:`candidate_features` (standardised by ``mean`` and ``scale``).

    Attributes:
        features: The feature names its weights belong to (a subset of :data:`FEATURES`).
        mean: Each feature's mean on the training candidates.
        scale: Each feature's standard deviation there (1 where it did not vary).
        weights: One weight per feature.
        bias: The intercept.
        specs: What each path is (stand-ins and neighbour paths).
    """

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    specs: Mapping[str, PathSpec] = field(default_factory=lambda: PATHS, compare=False)

    def __post_init__(self) -> None:
        if unknown := sorted(set(self.features) - set(FEATURES)):
            raise ConfigError(f"learned rank model names unknown features {unknown}")
        sizes = {len(self.features), len(self.mean), len(self.scale), len(self.weights)}
        if len(sizes) != 1:
            raise ConfigError("learned rank model: features, mean, scale and weights differ in length")

    def probabilities(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The model's probability that each candidate (a row of :data:`FEATURES`) is evidence."""
        columns = [FEATURES.index(f) for f in self.features]
        x = (features[:, columns] - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = x @ np.asarray(self.weights) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float64)

    def order(self, query: RecallQuery, scored: Sequence[Scored], config: RecallConfig) -> None:
        """Score each candidate by its rank by the model (fused with its first-stage rank, if weighted)."""
        if not scored:
            return
        values = self.probabilities(candidate_features(query, scored, self.specs))
        weight = config.learned_rank_weight or 1.0
        blend = "replace" if config.learned_rank_weight is None else "rrf"
        # Ties keep the fused order (the candidates come in it).
        for item, rank in zip(scored, rank_order([float(v) for v in values]), strict=True):
            item.score = rerank_score(item.fused_rank, rank, k=config.rrf_k, blend=blend, weight=weight)

    def to_json(self) -> str:
        """The model as the JSON :meth:`from_json` reads."""
        return json.dumps(
            {
                "features": list(self.features),
                "mean": list(self.mean),
                "scale": list(self.scale),
                "weights": list(self.weights),
                "bias": self.bias,
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> LearnedRank:
        """A model from its JSON (see :meth:`to_json`).

        Raises:
            ConfigError: The JSON is not such a model.
        """
        try:
            data = json.loads(text)
            return cls(
                features=tuple(str(f) for f in data["features"]),
                mean=tuple(float(v) for v in data["mean"]),
                scale=tuple(float(v) for v in data["scale"]),
                weights=tuple(float(v) for v in data["weights"]),
                bias=float(data["bias"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"not a learned rank model: {exc}") from exc

    @classmethod
    def load(cls, path: Path) -> LearnedRank:
        """A model from a JSON file (see :meth:`from_json`)."""
        return cls.from_json(path.read_text(encoding="utf-8"))


@cache
def packaged_model() -> LearnedRank:
    """The model shipped in the package (trained on LongMemEval's ``train`` split only)."""
    text = resources.files("dreammem.recall").joinpath(_MODEL_FILE).read_text(encoding="utf-8")
    return LearnedRank.from_json(text)
