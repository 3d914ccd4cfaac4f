"""Leave-one-conversation-out tuning of the recall fusion (``dreammem bench locomo --loco``).

Tuned parameters must carry to conversations nobody tuned on. The protocol: every
conversation of the file is held out once; the fusion settings (``rrf_k`` and the path
weights) are chosen on the *other* conversations, by pooled hit@5 (then MRR, then the
shipped default), and scored on the held-out one. The report gives each fold's held-out
numbers, their spread (min / median / max) and the pooled held-out score, beside the
shipped configuration scored the same way in the same run.

Only fusion settings are searched: they act after the recall paths, so each path runs
once per question and its candidates are reused for every setting (exact, and cheap
enough for a grid). Settings that change what a path finds (its depth, the BM25 context
weight) need a store per value and are left to their own runs.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallPath, RecallQuery
from dreammem.recall.recipe import PATHS, PathSpec
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import DreamMemMethod
from dreammem_bench.metrics import ADVERSARIAL, QuestionOutcome, summarize

__all__ = [
    "DEFAULT_GRID",
    "Fold",
    "FusionGrid",
    "FusionSetting",
    "LocoResult",
    "fold_rows",
    "held_out",
    "leave_one_out",
    "run_loco",
    "score_settings",
]


@dataclass(frozen=True, slots=True)
class FusionSetting:
    """One point of the grid: the RRF constant, the weight of each path's rank, and levers.

    ``levers`` are extra paths (``dreammem_bench.levers``) run beside the configured
    ones, each with its weight; a lever not named is off. ``off`` names configured paths
    taken out unless a lever names them (a lever the shipped config already runs).
    ``depth`` is the candidates each path returns (``None``: the configuration's); it
    changes what the paths find, so each depth runs the paths once more per question.
    """

    rrf_k: int
    path_weights: tuple[tuple[str, float], ...]
    levers: tuple[tuple[str, float], ...] = ()
    off: tuple[str, ...] = ()
    depth: int | None = None

    @classmethod
    def of(cls, recall: RecallConfig) -> FusionSetting:
        """The setting a recall configuration uses."""
        weights = {path: recall.weight(path) for path in recall.active_paths if recall.weight(path) != 1.0}
        return cls(recall.rrf_k, tuple(sorted({**weights, **recall.path_weights}.items())))

    def with_levers(self, levers: tuple[tuple[str, float], ...]) -> FusionSetting:
        """The same fusion with these levers on (the ``off`` paths a lever names come back)."""
        return dataclasses.replace(self, levers=levers)

    def with_depth(self, depth: int | None) -> FusionSetting:
        """The same setting with each path returning ``depth`` candidates (None: the config's)."""
        return dataclasses.replace(self, depth=depth)

    def apply(self, recall: RecallConfig) -> RecallConfig:
        """``recall`` with this setting's fusion (a new object; presets stay untouched)."""
        update: dict[str, Any] = {
            "rrf_k": self.rrf_k,
            "path_weights": {**dict(self.path_weights), **dict(self.levers)},
        }
        if self.levers or self.off:
            named = {name for name, _ in self.levers}
            kept = tuple(p for p in recall.active_paths if p not in self.off or p in named)
            update["paths"] = (*kept, *(name for name, _ in self.levers if name not in kept))
        if self.depth is not None:
            update["candidates_per_path"] = self.depth
        return recall.model_copy(update=update)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"rrf_k": .., "path_weights": {..}}`` (and ``"levers"``, ``"off"`` when any)."""
        out: dict[str, Any] = {"rrf_k": self.rrf_k, "path_weights": dict(self.path_weights)}
        if self.levers:
            out["levers"] = dict(self.levers)
        if self.off:
            out["off"] = list(self.off)
        if self.depth is not None:
            out["depth"] = self.depth
        return out

    @property
    def label(self) -> str:
        """Short text for tables, e.g. ``k=10 vector=0.5 graph=0.25`` (``person=off``: taken out)."""
        levers = dict(self.levers)
        off = [p for p in self.off if p not in levers]
        named = {p: w for p, w in (dict(self.path_weights) | levers).items() if p not in off}
        weights = " ".join([*(f"{p}={w:g}" for p, w in named.items()), *(f"{p}=off" for p in off)])
        depth = "" if self.depth is None else f" depth={self.depth}"
        return f"k={self.rrf_k} {weights}".strip() + depth


_GRIDDED = ("graph", "keyword", "temporal", "vector")
"""The paths whose weights the grid searches."""


@dataclass(frozen=True, slots=True)
class FusionGrid:
    """The values searched.

    The keyword path's weight stays 1.0: fusion order and the 0..1 scores are unchanged
    when every weight is scaled, so one weight is the unit.
    """

    rrf_k: tuple[int, ...] = (5, 10, 20, 60)
    vector: tuple[float, ...] = (0.25, 0.5, 1.0)
    temporal: tuple[float, ...] = (0.5, 1.0)
    graph: tuple[float, ...] = (0.0, 0.25, 0.5)

    def settings(self, default: FusionSetting) -> list[FusionSetting]:
        """Every combination, the default first (it is also the baseline).

        The weights of the paths not searched here (``person``) stay the default's.
        """
        out = [default]
        kept = {p: w for p, w in default.path_weights if p not in _GRIDDED}
        for k in self.rrf_k:
            for v in self.vector:
                for t in self.temporal:
                    for g in self.graph:
                        weights = {**kept, "graph": g, "keyword": 1.0, "temporal": t, "vector": v}
                        setting = FusionSetting(k, tuple(sorted(weights.items())))
                        if _normalised(setting) != _normalised(default):
                            out.append(setting)
        return out


DEFAULT_GRID = FusionGrid()
"""72 settings around the shipped defaults."""


def _normalised(setting: FusionSetting) -> tuple[int, tuple[tuple[str, float], ...]]:
    # A path left out of path_weights keeps its recipe weight: compare settings with that filled in.
    weights = {**{p: PATHS[p].weight for p in _GRIDDED}, **dict(setting.path_weights)}
    return setting.rrf_k, tuple(sorted(weights.items()))


class _CachedPath:
    """A recall path that answers a query it has seen from memory (the store does not change)."""

    def __init__(self, inner: RecallPath) -> None:
        self.name = inner.name
        self.inner = inner
        self.cache: dict[RecallQuery, list[Candidate]] = {}

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The inner path's candidates, computed once per query."""
        if query not in self.cache:
            self.cache[query] = self.inner.search(query)
        return self.cache[query]


class _CachedQueries:
    """An embedder whose query vectors are computed once each (documents pass through)."""

    def __init__(self, inner: Embedder) -> None:
        self.name = inner.name
        self.dim = inner.dim
        self.inner = inner
        self.cache: dict[str, npt.NDArray[np.float32]] = {}

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The inner embedder's document vectors."""
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """The query vector, from memory after the first time."""
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]


Scores = dict[str, list[QuestionOutcome]]
"""Outcomes of one setting, by conversation (sample id)."""


def score_settings(
    method: DreamMemMethod,
    conversations: Sequence[LocomoConversation],
    settings: Sequence[FusionSetting],
    *,
    k: int = 10,
    on_step: Callable[[str], None] | None = None,
    extra_paths: Mapping[str, RecallPath] | None = None,
    extra_specs: Mapping[str, PathSpec] | None = None,
) -> list[Scores]:
    """Recall every scored question (categories 1-4) under every setting.

    The method's pipeline gets caching paths and a caching query embedder for the
    run (restored after), so a question's paths run once whatever the setting (once
    per depth: the cache is keyed by the query, which carries the depth as its limit).
    ``extra_paths`` join the pipeline's for the run (levers), with ``extra_specs`` saying what they are.
    """
    pipeline = method.memory.pipeline
    kept = pipeline.paths, pipeline.embedder, pipeline.config
    kept_specs = pipeline.specs
    pipeline.specs = {**pipeline.specs, **(extra_specs or {})}
    every = {**pipeline.paths, **(extra_paths or {})}
    pipeline.paths = {name: _CachedPath(path) for name, path in every.items()}
    if pipeline.embedder is not None:
        pipeline.embedder = _CachedQueries(pipeline.embedder)
    scores: list[Scores] = [{} for _ in settings]
    try:
        for conversation in conversations:
            method.index(conversation)
            questions = [q for q in conversation.questions if q.category != ADVERSARIAL]
            for index, setting in enumerate(settings):
                pipeline.config = setting.apply(kept[2])
                scores[index][conversation.sample_id] = [
                    QuestionOutcome(
                        q.category, frozenset(q.evidence), tuple(method.search(conversation, q.question, k))
                    )
                    for q in questions
                ]
                if on_step is not None:
                    on_step(setting.label)
    finally:
        pipeline.paths, pipeline.embedder, pipeline.config = kept
        pipeline.specs = kept_specs
    return scores


@dataclass(frozen=True, slots=True)
class Fold:
    """One held-out conversation: the setting chosen without it and its numbers."""

    held_out: str
    chosen: int
    train: dict[str, float]
    tuned: dict[str, Any]
    default: dict[str, Any]


def _overall(outcomes: Sequence[QuestionOutcome]) -> dict[str, float]:
    overall: dict[str, float] = summarize(outcomes)["overall"]  # type: ignore[assignment]
    return overall


def leave_one_out(scores: Sequence[Scores], *, default: int = 0) -> list[Fold]:
    """Choose a setting per held-out conversation on the others and score it there.

    The choice maximises the pooled hit@5 of the other conversations' questions,
    then their MRR, then prefers ``default``, then the earlier setting.
    """
    conversations = list(scores[default])
    folds = []
    for held_out in conversations:
        train = [c for c in conversations if c != held_out]

        def key(index: int, train: list[str] = train) -> tuple[float, float, bool, int]:
            metrics = _overall([o for c in train for o in scores[index][c]])
            return (metrics["hit@5"], metrics["mrr"], index == default, -index)

        chosen = max(range(len(scores)), key=key)
        train_metrics = _overall([o for c in train for o in scores[chosen][c]])
        folds.append(
            Fold(
                held_out=held_out,
                chosen=chosen,
                train={"hit@5": train_metrics["hit@5"], "mrr": train_metrics["mrr"]},
                tuned=summarize(scores[chosen][held_out]),
                default=summarize(scores[default][held_out]),
            )
        )
    return folds


@dataclass(slots=True)
class LocoResult:
    """The fold protocol's outcome (see :meth:`to_dict` for the JSON shape)."""

    settings: list[FusionSetting]
    folds: list[Fold]
    pooled_tuned: dict[str, Any] = field(default_factory=dict)
    pooled_default: dict[str, Any] = field(default_factory=dict)

    def spread(self, which: str, metric: str) -> dict[str, float]:
        """Min, median and max over folds of a held-out metric (``which``: tuned or default)."""
        values = [getattr(f, which)["overall"][metric] for f in self.folds]
        return {
            "min": round(min(values), 4),
            "median": round(statistics.median(values), 4),
            "max": round(max(values), 4),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings searched, each fold, spreads and pooled held-out scores."""
        metrics = ("hit@1", "hit@5", "mrr")
        return {
            "settings_searched": len(self.settings),
            "default": self.settings[0].to_dict(),
            "folds": [
                {
                    "held_out": f.held_out,
                    "chosen": self.settings[f.chosen].to_dict(),
                    "train": f.train,
                    "tuned": f.tuned,
                    "default": f.default,
                }
                for f in self.folds
            ],
            "spread": {w: {m: self.spread(w, m) for m in metrics} for w in ("tuned", "default")},
            "pooled_held_out": {"tuned": self.pooled_tuned, "default": self.pooled_default},
        }


def held_out(settings: Sequence[FusionSetting], scores: Sequence[Scores]) -> LocoResult:
    """Run the folds over these settings' scores (the first setting is the baseline)."""
    folds = leave_one_out(scores)
    tuned: list[QuestionOutcome] = [o for f in folds for o in scores[f.chosen][f.held_out]]
    default: list[QuestionOutcome] = [o for f in folds for o in scores[0][f.held_out]]
    return LocoResult(list(settings), folds, summarize(tuned), summarize(default))


def run_loco(
    method: DreamMemMethod,
    conversations: Sequence[LocomoConversation],
    *,
    grid: FusionGrid = DEFAULT_GRID,
    k: int = 10,
    on_step: Callable[[str], None] | None = None,
) -> LocoResult:
    """Score the grid on every conversation, then run the folds (needs two conversations).

    Raises:
        ValueError: fewer than two conversations.
    """
    if len(conversations) < 2:
        raise ValueError("leave-one-conversation-out needs at least two conversations")
    recall = method.memory.pipeline.config
    settings = grid.settings(FusionSetting.of(recall))
    scores = score_settings(method, conversations, settings, k=k, on_step=on_step)
    return held_out(settings, scores)


def fold_rows(result: LocoResult) -> list[dict[str, Any]]:
    """One table row per fold, then the spread rows (for the CLI table)."""
    rows: list[dict[str, Any]] = []
    for fold in result.folds:
        rows.append(
            {
                "held out": fold.held_out,
                "chosen": result.settings[fold.chosen].label,
                "train hit@5": fold.train["hit@5"],
                "hit@5": fold.tuned["overall"]["hit@5"],
                "MRR": fold.tuned["overall"]["mrr"],
                "default hit@5": fold.default["overall"]["hit@5"],
                "default MRR": fold.default["overall"]["mrr"],
                "n": fold.tuned["overall"]["n"],
            }
        )
    for stat in ("min", "median", "max"):
        rows.append(
            {
                "held out": stat,
                "hit@5": result.spread("tuned", "hit@5")[stat],
                "MRR": result.spread("tuned", "mrr")[stat],
                "default hit@5": result.spread("default", "hit@5")[stat],
                "default MRR": result.spread("default", "mrr")[stat],
            }
        )
    tuned, default = result.pooled_tuned["overall"], result.pooled_default["overall"]
    rows.append(
        {
            "held out": "pooled",
            "hit@5": tuned["hit@5"],
            "MRR": tuned["mrr"],
            "default hit@5": default["hit@5"],
            "default MRR": default["mrr"],
            "n": tuned["n"],
        }
    )
    return rows
